package console

import (
	"fmt"
	"math"
	"time"

	"github.com/sundialhq/sundial/internal/timer"
)

// Timeline is a timer's recent executions laid out for an SVG rendered on the server: one
// bar per execution (from its start, as long as it ran) and one mark per execution at the
// instant it was due, joined to its bar; the later it started, the taller and redder the mark.
type Timeline struct {
	Width, Height float64
	BarY, BarH    float64
	Bars          []TimelineBar
	Marks         []TimelineMark
	Ticks         []TimelineTick
}

// TimelineBar is one execution; Class is "o-<outcome>".
type TimelineBar struct {
	X, W  float64
	Class string
	Title string
}

// TimelineMark is an execution's due instant (X) joined to its start (ToX) at height Top.
type TimelineMark struct {
	X, ToX, Top float64
	Class       string // late-0 (under 1 s), late-1 (under 10 s), late-2
	Title       string
}

// TimelineTick is an axis label; Anchor keeps the first and last inside the picture.
type TimelineTick struct {
	X      float64
	Label  string
	Anchor string // start, middle or end
}

const (
	tlWidth  = 760.0
	tlPad    = 10.0
	tlMarkY  = 34.0 // baseline of the marks
	tlBarY   = 40.0
	tlBarH   = 26.0
	tlHeight = 90.0
	tlMinBar = 2.0
)

// layoutTimeline places executions (any order) on the timeline; nil when there are none.
func layoutTimeline(execs []timer.Execution, loc *time.Location) *Timeline {
	if len(execs) == 0 {
		return nil
	}
	t0, t1 := execs[0].StartedAt, execs[0].StartedAt.Add(execs[0].Duration)
	for _, e := range execs {
		start := e.StartedAt
		// A backfill run's instant is hours or days back by design: it is not drawn, and does
		// not stretch the scale (a two-day red diagonal).
		if !e.ShouldHaveRunAt.IsZero() && e.ShouldHaveRunAt.Before(start) && !e.Backfill {
			start = e.ShouldHaveRunAt
		}
		t0 = minTime(t0, start)
		t1 = maxTime(t1, e.StartedAt.Add(e.Duration))
	}
	span := max(t1.Sub(t0), time.Second)
	x := func(t time.Time) float64 {
		return tlPad + float64(t.Sub(t0))/float64(span)*(tlWidth-2*tlPad)
	}
	tl := &Timeline{Width: tlWidth, Height: tlHeight, BarY: tlBarY, BarH: tlBarH}
	for _, e := range execs {
		late := time.Duration(0)
		if !e.ShouldHaveRunAt.IsZero() {
			late = e.StartedAt.Sub(e.ShouldHaveRunAt)
		}
		start := x(e.StartedAt)
		if e.Backfill {
			tl.Bars = append(tl.Bars, TimelineBar{
				X: start, W: max(x(e.StartedAt.Add(e.Duration))-start, tlMinBar),
				Class: "o-" + string(e.Outcome) + " backfill",
				Title: fmt.Sprintf("%s: backfill of %s, started %s, ran %s, attempt %d",
					e.Outcome, e.ShouldHaveRunAt.In(loc).Format("2006-01-02 15:04:05"), e.StartedAt.In(loc).Format("2006-01-02 15:04:05.000"), e.Duration, e.Attempt),
			})
			continue
		}
		tl.Bars = append(tl.Bars, TimelineBar{
			X: start, W: max(x(e.StartedAt.Add(e.Duration))-start, tlMinBar),
			Class: "o-" + string(e.Outcome),
			Title: fmt.Sprintf("%s: started %s, ran %s, attempt %d, %s late",
				e.Outcome, e.StartedAt.In(loc).Format("2006-01-02 15:04:05.000"), e.Duration, e.Attempt, late),
		})
		if e.ShouldHaveRunAt.IsZero() {
			continue
		}
		tl.Marks = append(tl.Marks, TimelineMark{
			X: x(e.ShouldHaveRunAt), ToX: start, Top: tlMarkY - markHeight(late), Class: lateClass(late),
			Title: fmt.Sprintf("due %s, started %s late", e.ShouldHaveRunAt.In(loc).Format("15:04:05.000"), late),
		})
	}
	// Labels as precise as the ticks' spacing needs, so no two read the same (one execution of
	// a few milliseconds spans a second: its ticks are a quarter second apart).
	layout := "15:04:05"
	switch step := span / 4; {
	case span > 24*time.Hour:
		layout = "Jan 2 15:04"
	case step < time.Second:
		layout = "15:04:05.000"
	}
	for i := range 5 {
		at := t0.Add(span * time.Duration(i) / 4)
		anchor := "middle"
		switch i {
		case 0:
			anchor = "start"
		case 4:
			anchor = "end"
		}
		label := at.In(loc).Format(layout)
		if n := len(tl.Ticks); n > 0 && tl.Ticks[n-1].Label == label {
			continue
		}
		tl.Ticks = append(tl.Ticks, TimelineTick{X: x(at), Label: label, Anchor: anchor})
	}
	return tl
}

// markHeight grows with the logarithm of lateness: 4 px on time, 24 px at 100 s or more.
func markHeight(late time.Duration) float64 {
	ms := math.Max(float64(late.Milliseconds()), 0)
	return 4 + math.Min(math.Log10(1+ms), 5)*4
}

func lateClass(late time.Duration) string {
	switch {
	case late < time.Second:
		return "late-0"
	case late < 10*time.Second:
		return "late-1"
	}
	return "late-2"
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
