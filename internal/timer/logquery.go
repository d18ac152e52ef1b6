package timer

import (
	"strings"
	"time"
)

// refLayout is the instant part of a log entry's Ref: UTC, milliseconds, fixed width, so that
// refs order like the entries.
const refLayout = "2006-01-02T15:04:05.000Z"

// Ref names one log entry within its instance's log: its start instant and execution id. Refs
// order like the entries, so the last ref of a page is the cursor of the next.
func (e Execution) Ref() string {
	return RefBefore(e.StartedAt) + "#" + e.ExecutionID
}

// RefBefore is the cursor that pages a log from t back: every entry started before t has a
// smaller Ref.
func RefBefore(t time.Time) string { return t.UTC().Format(refLayout) }

// ValidRef reports whether ref has the form Ref gives (an id of at most 64 bytes).
func ValidRef(ref string) bool {
	at, id, ok := strings.Cut(ref, "#")
	if !ok || len(id) == 0 || len(id) > 64 {
		return false
	}
	_, err := time.Parse(refLayout, at)
	return err == nil
}

// LogQuery selects execution log entries, newest first.
type LogQuery struct {
	Key    *Key   // one instance; nil for all
	Tenant string // with Key nil: only this tenant's executions ("": all)
	// App, with Key nil: only this app's executions ("": every app's; DefaultApp: the
	// default app's, entries written before apps existed included).
	App        string
	ErrorsOnly bool
	Before     time.Time // zero: now
	Limit      int
	// Days bounds how many days back an all-timers query walks (default 31).
	Days int
}

// LogPageQuery selects one page of the execution log, newest first.
type LogPageQuery struct {
	Key    *Key   // one instance; nil for all
	Tenant string // with Key nil: only this tenant's executions ("": all)
	// App, with Key nil: only this app's executions (as LogQuery.App).
	App        string
	ErrorsOnly bool
	// After is the Ref of the last entry of the previous page; empty for the first page.
	After string
	Limit int // default 50
	// Days bounds how many days back an all-timers page walks from its cursor (default 31).
	Days int
}

// MatchesApp reports whether e is of app as LogQuery.App selects ("" matches every app).
func (e Execution) MatchesApp(app string) bool {
	return SelectsApp(app, e.App)
}
