package main

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/console"
)

// `sundial health` aligns its tables with spaces: no raw tab reaches the terminal (before, the
// RUNNING header was printed past the tabwriter, tabs and all).
func TestPrintHealthHasNoRawTabs(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 25, 22, 0, 0, 0, time.UTC)
	var b strings.Builder
	printHealth(&b, console.Health{
		Now:     now,
		Running: []console.Running{{Key: "Hangs", Since: now, By: "local", Attempt: 1, LeaseExpiresAt: now.Add(6 * time.Second)}},
		Order:   []console.HealthRow{{Position: 1, Key: "Heartbeat", Priority: 2, NextRun: &now}},
	})
	out := b.String()
	require.NotContains(t, out, "\t", out)
	require.Regexp(t, `(?m)^RUNNING +SINCE +BY +ATTEMPT +LEASE UNTIL$`, out)
	require.Regexp(t, `(?m)^Hangs +2026-11-25 22:00:00.000 +local +1 +2026-11-25 22:00:06.000$`, out)
}

// sync and tenant changes print counts and names, not Go slices (before: "created []").
func TestPrintReport(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	printReport(&b, admin.SyncReport{Created: []string{"Heartbeat", "TenantReport@acme"}, Woken: []string{"WarmUp"}})
	require.Equal(t, "created 2: Heartbeat, TenantReport@acme\nupdated 0\nunchanged 0\ndeactivated 0\nwoken (When Published) 1: WarmUp\n", b.String())
}
