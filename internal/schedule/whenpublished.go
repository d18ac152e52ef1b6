package schedule

import "time"

const whenPublishedExpr = "When Published"

// whenPublished timers never come due by the clock: a deploy wakes them.
type whenPublished struct{ expr string }

func (w whenPublished) Next(time.Time) (time.Time, bool) { return time.Time{}, false }

func (w whenPublished) String() string { return w.expr }
