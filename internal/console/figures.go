package console

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/sundialhq/sundial/internal/timer"
)

// Figures are the last hour's executions per minute, as Environment Health draws them:
// firings (the failed ones apart), and the lateness (p95 and max) of the runs that started.
// They come from the log, read page by page back to the hour's start (figuresMaxEntries at
// most: Truncated then says the oldest minutes are missing), for one app or every app. On AWS
// the same series are the functions' CloudWatch metrics (Firings, Lateness).
type Figures struct {
	Since   time.Time `json:"since"`
	Minutes []Minute  `json:"minutes"` // 60, oldest first; the last is the minute under way
	// Truncated: the read stopped at figuresMaxEntries before reaching Since.
	Truncated bool `json:"truncated,omitempty"`
	// Charts are the SVG layouts (not in the JSON).
	Firings  *Chart `json:"-"`
	Lateness *Chart `json:"-"`
}

// Minute is one minute of Figures. Backfill runs count as firings but not in the lateness
// (late by design: their instants are in the past).
type Minute struct {
	At            time.Time `json:"at"`
	Firings       int       `json:"firings"`
	Failed        int       `json:"failed"` // error, timeout, recovered
	Missed        int       `json:"missed"`
	LatenessP95Ms int64     `json:"latenessP95Ms"`
	LatenessMaxMs int64     `json:"latenessMaxMs"`
}

// figuresMaxEntries bounds the log entries one Health read takes for its figures; figuresPage
// is how many a page asks for.
const (
	figuresMaxEntries = 5000
	figuresPage       = 1000
)

// hourOfLog reads the log of app ("": every app) newest first, page by page, until an entry
// older than since, the end of the log or figuresMaxEntries; truncated reports the last.
func hourOfLog(ctx context.Context, st Store, app string, since time.Time) (es []timer.Execution, truncated bool, err error) {
	after := ""
	for {
		page, next, err := st.LogPage(ctx, timer.LogPageQuery{App: app, After: after, Limit: figuresPage, Days: 2})
		if err != nil {
			return nil, false, fmt.Errorf("read the log for the last hour's figures: %w", err)
		}
		for _, e := range page {
			if e.StartedAt.Before(since) {
				return es, false, nil
			}
			es = append(es, e)
		}
		if next == "" {
			return es, false, nil
		}
		if len(es) >= figuresMaxEntries {
			return es, true, nil
		}
		after = next
	}
}

// figures buckets the executions (any order) that started in the hour before now by minute.
func figures(now time.Time, es []timer.Execution, truncated bool) Figures {
	end := now.UTC().Truncate(time.Minute).Add(time.Minute)
	f := Figures{Since: end.Add(-60 * time.Minute), Minutes: make([]Minute, 60), Truncated: truncated}
	late := make([][]int64, 60)
	for i := range f.Minutes {
		f.Minutes[i].At = f.Since.Add(time.Duration(i) * time.Minute)
	}
	for _, e := range es {
		i := int(e.StartedAt.Sub(f.Since) / time.Minute)
		if e.StartedAt.Before(f.Since) || i < 0 || i >= 60 {
			continue
		}
		m := &f.Minutes[i]
		m.Firings++
		switch {
		case e.Outcome == timer.OutcomeMissed:
			m.Missed++
		case e.Outcome.Failed():
			m.Failed++
		}
		if e.Backfill || e.Outcome == timer.OutcomeRecovered || e.Outcome == timer.OutcomeMissed {
			continue
		}
		late[i] = append(late[i], max(e.StartedAt.Sub(e.ShouldHaveRunAt), 0).Milliseconds())
	}
	for i := range f.Minutes {
		f.Minutes[i].LatenessP95Ms, f.Minutes[i].LatenessMaxMs = percentile(late[i], 95), percentile(late[i], 100)
	}
	return f
}

// charted lays out the charts of f (on the page's side: a console reading another stack's
// API gets the minutes only).
func (f Figures) charted() Figures {
	if len(f.Minutes) == 60 {
		f.Firings, f.Lateness = firingsChart(f), latenessChart(f)
	}
	return f
}

// Chart is a per-minute bar chart laid out for an SVG rendered on the server.
type Chart struct {
	Width, Height, Base float64 // Base: the y of the axis
	Bars                []ChartBar
	Grid                []ChartLine // horizontal lines with their value
	Ticks               []TimelineTick
	Empty               bool // nothing to draw in the hour
}

// ChartBar is one minute's bar (or its part: Class says which).
type ChartBar struct {
	X, Y, W, H float64
	Class      string
	Title      string
}

// ChartLine is a grid line at Y labelled Label.
type ChartLine struct {
	Y     float64
	Label string
}

const (
	chWidth  = 560.0
	chHeight = 130.0
	chLeft   = 44.0 // room for the grid's labels
	chTop    = 8.0
	chBase   = 108.0 // the axis; the ticks below it
)

func newChart() *Chart { return &Chart{Width: chWidth, Height: chHeight, Base: chBase} }

// slot is the x and width of minute i's bar.
func slot(i int) (x, w float64) {
	step := (chWidth - chLeft - 4) / 60
	return chLeft + float64(i)*step + 0.5, step - 1
}

// grid puts lines at 0, top/2 and top for a scale whose maximum is top (rounded up to a
// readable value), and returns top.
func (c *Chart) grid(maxV float64, label func(float64) string) float64 {
	top := niceCeil(maxV)
	for _, v := range []float64{0, top / 2, top} {
		c.Grid = append(c.Grid, ChartLine{Y: c.y(v, top), Label: label(v)})
	}
	return top
}

func (c *Chart) y(v, top float64) float64 { return chBase - v/top*(chBase-chTop) }

// ticks label every 15 minutes.
func (c *Chart) ticks(f Figures) {
	for i := 0; i <= 60; i += 15 {
		x, _ := slot(min(i, 59))
		if i == 60 {
			x = chWidth - 4
		}
		anchor := "middle"
		if i == 60 {
			anchor = "end"
		}
		c.Ticks = append(c.Ticks, TimelineTick{X: x, Label: f.Since.Add(time.Duration(i) * time.Minute).Format("15:04"), Anchor: anchor})
	}
}

func firingsChart(f Figures) *Chart {
	c := newChart()
	peak := 0
	for _, m := range f.Minutes {
		peak = max(peak, m.Firings)
	}
	c.Empty = peak == 0
	top := c.grid(float64(max(peak, 1)), func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) })
	for i, m := range f.Minutes {
		if m.Firings == 0 {
			continue
		}
		x, w := slot(i)
		ok := m.Firings - m.Failed - m.Missed
		title := fmt.Sprintf("%s: %d firings, %d failed, %d missed", m.At.Format("15:04"), m.Firings, m.Failed, m.Missed)
		y := chBase
		for _, part := range []struct {
			n     int
			class string
		}{{ok, "o-success"}, {m.Failed, "o-error"}, {m.Missed, "o-missed"}} {
			if part.n == 0 {
				continue
			}
			h := float64(part.n) / top * (chBase - chTop)
			y -= h
			c.Bars = append(c.Bars, ChartBar{X: x, Y: y, W: w, H: h, Class: part.class, Title: title})
		}
	}
	c.ticks(f)
	return c
}

func latenessChart(f Figures) *Chart {
	c := newChart()
	var peak int64
	for _, m := range f.Minutes {
		peak = max(peak, m.LatenessMaxMs)
	}
	c.Empty = peak == 0
	top := c.grid(float64(max(peak, 1)), func(v float64) string { return fmtMs(int64(v)) })
	for i, m := range f.Minutes {
		if m.Firings == 0 || m.Firings == m.Missed {
			continue
		}
		x, w := slot(i)
		title := fmt.Sprintf("%s: lateness p95 %s, max %s", m.At.Format("15:04"), fmtMs(m.LatenessP95Ms), fmtMs(m.LatenessMaxMs))
		if m.LatenessMaxMs > m.LatenessP95Ms {
			h := float64(m.LatenessMaxMs-m.LatenessP95Ms) / top * (chBase - chTop)
			c.Bars = append(c.Bars, ChartBar{X: x, Y: c.y(float64(m.LatenessMaxMs), top), W: w, H: h, Class: "late-max", Title: title})
		}
		h := max(float64(m.LatenessP95Ms)/top*(chBase-chTop), 1)
		c.Bars = append(c.Bars, ChartBar{X: x, Y: chBase - h, W: w, H: h, Class: "late-p95", Title: title})
	}
	c.ticks(f)
	return c
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten (at least 1).
func niceCeil(v float64) float64 {
	if v <= 1 {
		return 1
	}
	p := 1.0
	for p*10 <= v {
		p *= 10
	}
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}
