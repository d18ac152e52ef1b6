package local

import (
	"bytes"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

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
