package local

import (
	"bytes"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// up's execution lines keep their columns for the example timers' longest names
// (TenantReport@globex broke them at 18 characters), and a longer name widens the column
// instead of pushing its own line out of it.
func TestExecutionLinesKeepTheirColumns(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	log := slog.New(newLineHandler(&out, slog.NewJSONHandler(io.Discard, nil)))
	at := time.Date(2026, 11, 25, 22, 0, 0, 0, time.UTC)
	exec := func(app, name, tenant, outcome string) {
		log.Debug("execution", "app", app, "timer", name, "tenant", tenant, "outcome", outcome, "scheduled_at", at,
			"attempt", 1, "lateness_ms", 3, "duration_ms", 19, "next_run", at.Add(time.Minute), "gave_up", false)
	}
	exec("", "Heartbeat", "", "success")
	exec("", "TenantReport", "globex", "error")
	exec("billing", "Invoices", "", "success")
	exec("", "TenantReport", "acme", "timeout")
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 4)
	col := func(line string) int { return strings.Index(line, " scheduled ") }
	for _, l := range lines[1:] {
		require.Equal(t, col(lines[0]), col(l), "columns differ:\n%s", out.String())
	}
	require.Contains(t, lines[1], "TenantReport@globex  error")

	exec("", "AVeryLongTimerNameIndeed", "initech", "success")
	exec("", "Heartbeat", "", "success")
	lines = strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Equal(t, col(lines[4]), col(lines[5]), "a longer name widens the column:\n%s", out.String())
	require.Contains(t, lines[4], "AVeryLongTimerNameIndeed@initech success")
}

// A 128-character name (app and tenant besides) widened every line of up's output to ~400
// columns, unreadable: the timer column stops at maxNameWidth; a longer name keeps its
// head and tail around a hash of the whole, so two names that differ only in the middle
// still differ, and the lines keep their columns.
func TestExecutionLinesShortenLongNames(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	log := slog.New(newLineHandler(&out, slog.NewJSONHandler(io.Discard, nil)))
	at := time.Now().UTC().Truncate(24 * time.Hour).Add(time.Hour) // today's: printed without the date
	exec := func(app, name, tenant string) {
		log.Debug("execution", "app", app, "timer", name, "tenant", tenant, "outcome", "success", "scheduled_at", at,
			"attempt", 1, "lateness_ms", 3, "duration_ms", 19, "next_run", at.Add(time.Minute), "gave_up", false, "error", "")
	}
	long := func(mid string) string {
		return "Nightly" + strings.Repeat("X", 58) + mid + strings.Repeat("Y", 56) + "Report"
	}
	a, b := long("A"), long("B")
	require.Len(t, a, 128)
	exec("billing", a, "acme")
	exec("billing", b, "acme")
	exec("", "Heartbeat", "")
	exec(strings.Repeat("a", 128), a, strings.Repeat("t", 128))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 4)
	col := func(l string) int { return utf8.RuneCountInString(l[:strings.Index(l, " scheduled ")]) }
	for _, l := range lines {
		require.Equal(t, col(lines[0]), col(l), "columns differ:\n%s", out.String())
		require.LessOrEqual(t, utf8.RuneCountInString(l), 140, "a line stays about a wide terminal's width (it was ~400):\n%s", l)
	}
	first, second := strings.Fields(lines[0])[1], strings.Fields(lines[1])[1]
	require.Equal(t, maxNameWidth, utf8.RuneCountInString(first))
	require.True(t, strings.HasPrefix(first, "billing:Nightly"), first)
	require.True(t, strings.HasSuffix(first, "YReport@acme"), first)
	require.Contains(t, first, "…")
	require.NotEqual(t, first, second, "names that differ only in the middle print differently")
	require.Equal(t, "Heartbeat", strings.Fields(lines[2])[1])
	require.Equal(t, "billing:Invoices", shortName("billing:Invoices"))
	require.Equal(t, strings.Repeat("n", maxNameWidth), shortName(strings.Repeat("n", maxNameWidth)), "a name that fits is whole")
}

// Lines must not mislead: a next run tomorrow printed as "next 03:30:00.000" reads as
// today's, and a backfill run is late by design, not "late +36h…". A time on another day than the line's carries its date; a
// backfill run says backfill instead of a lateness.
func TestExecutionLinesDateOtherDaysAndMarkBackfill(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	log := slog.New(newLineHandler(&out, slog.NewJSONHandler(io.Discard, nil)))
	now := time.Now().UTC()
	tomorrow := now.Add(24 * time.Hour)
	log.Debug("execution", "timer", "Nightly", "outcome", "success", "scheduled_at", now,
		"attempt", 1, "lateness_ms", 3, "duration_ms", 19, "next_run", tomorrow, "gave_up", false)
	back := now.Add(-36 * time.Hour)
	log.Debug("execution", "timer", "Digest", "outcome", "success", "scheduled_at", back,
		"attempt", 1, "lateness_ms", (36 * time.Hour).Milliseconds(), "duration_ms", 19, "next_run", now.Add(time.Minute), "gave_up", false, "backfill", true)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 2)
	require.Contains(t, lines[0], "scheduled "+now.Format("15:04:05.000")+" attempt", "today's: the clock only")
	require.Contains(t, lines[0], "late +3ms")
	require.Contains(t, lines[0], "next "+tomorrow.Format("2006-01-02 15:04:05.000"))
	require.Contains(t, lines[1], "scheduled "+back.Format("2006-01-02 15:04:05.000")+" attempt 1 backfill took 19ms")
	require.NotContains(t, lines[1], "late")
}
