package console

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/timer"
)

func TestFigures(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 23, 18, 0, 30, 0, time.UTC) // the minute under way is 18:00
	at := func(min int, sec int) time.Time {
		return time.Date(2026, 11, 23, 17, 0, 0, 0, time.UTC).Add(time.Duration(min)*time.Minute + time.Duration(sec)*time.Second)
	}
	exec := func(start time.Time, o timer.Outcome, late time.Duration) timer.Execution {
		return timer.Execution{StartedAt: start, ShouldHaveRunAt: start.Add(-late), Outcome: o}
	}
	backfill := exec(at(30, 1), timer.OutcomeSuccess, 36*time.Hour)
	backfill.Backfill = true
	es := []timer.Execution{
		exec(at(1, 0).Add(-time.Second), timer.OutcomeSuccess, time.Hour), // 17:00:59: before the first minute
		exec(at(1, 0), timer.OutcomeSuccess, 100*time.Millisecond),
		exec(at(1, 10), timer.OutcomeError, 300*time.Millisecond),
		exec(at(1, 20), timer.OutcomeSuccess, 2*time.Second),
		exec(at(1, 30), timer.OutcomeMissed, 10*time.Minute), // missed: no lateness
		exec(at(30, 0), timer.OutcomeRecovered, time.Minute), // recovered: failed, no lateness
		backfill, // a backfill run: a firing, late by design, not in the lateness
		exec(at(60, 5), timer.OutcomeTimeout, 50*time.Millisecond),
	}
	f := figures(now, es, false)
	require.Equal(t, at(1, 0), f.Since, "60 minutes ending with the one under way")
	require.Len(t, f.Minutes, 60)
	m := f.Minutes[0] // 17:01
	require.Equal(t, at(1, 0), m.At)
	require.Equal(t, Minute{At: at(1, 0), Firings: 4, Failed: 1, Missed: 1, LatenessP95Ms: 2000, LatenessMaxMs: 2000}, m)
	require.Equal(t, Minute{At: at(30, 0), Firings: 2, Failed: 1}, f.Minutes[29], "recovered and backfill runs add no lateness")
	require.Equal(t, Minute{At: at(60, 0), Firings: 1, Failed: 1, LatenessP95Ms: 50, LatenessMaxMs: 50}, f.Minutes[59])
	total := 0
	for _, m := range f.Minutes {
		total += m.Firings
	}
	require.Equal(t, 7, total, "the entry before the hour is left out")

	f = f.charted()
	require.False(t, f.Firings.Empty)
	// 17:01's bar: 2 ok, 1 failed, 1 missed, stacked from the axis on a scale of 5.
	var first []ChartBar
	for _, b := range f.Firings.Bars {
		if b.Title == "17:01: 4 firings, 1 failed, 1 missed" {
			first = append(first, b)
		}
	}
	require.Len(t, first, 3)
	unit := (chBase - chTop) / 5
	require.Equal(t, "o-success", first[0].Class)
	require.InDelta(t, 2*unit, first[0].H, 0.01)
	require.InDelta(t, chBase-2*unit, first[0].Y, 0.01)
	require.Equal(t, "o-error", first[1].Class)
	require.InDelta(t, unit, first[1].H, 0.01)
	require.Equal(t, "o-missed", first[2].Class)
	require.InDelta(t, chBase-4*unit, first[2].Y, 0.01)
	require.Equal(t, []string{"0", "2.5", "5"}, []string{f.Firings.Grid[0].Label, f.Firings.Grid[1].Label, f.Firings.Grid[2].Label})
	require.Equal(t, "2.0s", f.Lateness.Grid[2].Label, "the lateness scale tops at the hour's max (2 s)")
	require.Equal(t, []string{"17:01", "17:16", "17:31", "17:46", "18:01"}, labels(f.Firings.Ticks))

	empty := figures(now, nil, false).charted()
	require.True(t, empty.Firings.Empty)
	require.True(t, empty.Lateness.Empty)
}

func labels(ts []TimelineTick) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Label)
	}
	return out
}

// pagedLog is a Store whose log is n entries a second apart, newest first from newest,
// served in pages; it counts the pages read.
type pagedLog struct {
	Store
	newest time.Time
	n      int
	pages  int
	apps   []string
}

func (p *pagedLog) LogPage(_ context.Context, q timer.LogPageQuery) ([]timer.Execution, string, error) {
	p.pages++
	p.apps = append(p.apps, q.App)
	from := 0
	if q.After != "" {
		_, _ = fmt.Sscan(q.After, &from)
	}
	var out []timer.Execution
	for i := from; i < p.n && len(out) < q.Limit; i++ {
		out = append(out, timer.Execution{StartedAt: p.newest.Add(-time.Duration(i) * time.Second)})
	}
	next := ""
	if from+len(out) < p.n {
		next = fmt.Sprint(from + len(out))
	}
	return out, next, nil
}

func TestHourOfLogReadsPagesBackToTheHourOnly(t *testing.T) {
	t.Parallel()
	newest := time.Date(2026, 11, 23, 18, 0, 0, 0, time.UTC)
	since := newest.Add(-time.Hour)

	st := &pagedLog{newest: newest, n: 10_000} // 3,601 entries in the hour
	es, truncated, err := hourOfLog(context.Background(), st, "billing", since)
	require.NoError(t, err)
	require.False(t, truncated)
	require.Len(t, es, 3601)
	require.Equal(t, 4, st.pages, "pages of 1,000 until an entry older than the hour")
	require.Equal(t, []string{"billing", "billing", "billing", "billing"}, st.apps, "every page is the app's")

	st = &pagedLog{newest: newest, n: 10_000}
	_, truncated, err = hourOfLog(context.Background(), st, "", newest.Add(-3*time.Hour))
	require.NoError(t, err)
	require.True(t, truncated, "5,000 entries at most")
	require.Equal(t, 5, st.pages)

	st = &pagedLog{newest: newest, n: 30}
	es, truncated, err = hourOfLog(context.Background(), st, "", since)
	require.NoError(t, err)
	require.False(t, truncated)
	require.Len(t, es, 30)
	require.Equal(t, 1, st.pages, "the log's end")
}
