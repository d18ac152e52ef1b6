package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/timer"
	"github.com/sundialhq/sundial/internal/view"
)

// `resources list` prints a line per pool (slots, how many hold and wait, the apps using
// the default app's), then each pool's holders and its waiters in the order they are
// served, with their priority and effective priority; none declared says how to declare one.
func TestPrintPools(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 27, 4, 0, 0, 0, time.UTC)
	p := view.OfPool("", "erp", 1, []string{"billing", "crm"}, timer.Pool{
		Holders: []timer.SlotHolder{{Timer: "billing:P", Execution: "e", Since: now.Add(-time.Minute), Until: now.Add(time.Hour)}},
		Waiters: []timer.SlotWaiter{
			{Timer: "crm:P", Since: now.Add(-10 * time.Second), Until: now.Add(5 * time.Second), Priority: 4},
			{Timer: "A", Since: now.Add(-time.Second), Until: now.Add(14 * time.Second), Priority: 1},
		}}, now)
	var out bytes.Buffer
	require.NoError(t, printPools(&out, []view.Pool{p, view.OfPool("billing", "gl", 2, nil, timer.Pool{}, now)}))
	require.Equal(t, `POOL        APP      SLOTS  HELD  WAITING  USED BY
erp         default  1      1     2        billing, crm
billing/gl  billing  2      0     0        
erp: held by billing:P since 2026-11-27T03:59:00Z (lease until 2026-11-27T05:00:00Z)
erp: waiter 1: A since 2026-11-27T03:59:59Z (priority 1, now 1)
erp: waiter 2: crm:P since 2026-11-27T03:59:50Z (priority 4, now 2)
`, out.String())
	out.Reset()
	require.NoError(t, printPools(&out, nil))
	require.Equal(t, "no shared resources: a manifest declares them with resources: {erp: 2}\n", out.String())
}
