package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/console"
	"github.com/sundialhq/sundial/internal/timer"
	"github.com/sundialhq/sundial/internal/view"
)

// An inactive timer is "not scheduled (inactive)" in deactivate's answer, in timers list and
// in its JSON (nextRun null), as in the console, whatever next run it kept (deactivate printed
// "next run …" and the list kept a past instant).
func TestInactiveTimerIsNotScheduled(t *testing.T) {
	t.Parallel()
	kept := time.Date(2026, 11, 25, 21, 58, 30, 0, time.UTC)
	in := timer.Instance{Key: timer.Key{Timer: "Tick"}, Settings: timer.Settings{Schedule: "every 5m"}, Active: false, NextRun: kept}
	keptText := kept.Format("2006-01-02 15:04:05")

	msg := console.OperationMessage("deactivate", in)
	require.Equal(t, "Tick deactivated: not scheduled (inactive)", msg)

	var list bytes.Buffer
	require.NoError(t, printTimers(&list, []view.Timer{view.OfTimer(in)}))
	require.Contains(t, list.String(), "not scheduled (inactive)")
	require.NotContains(t, list.String(), keptText)

	var js bytes.Buffer
	require.NoError(t, writeJSON(&js, view.OfTimer(in)))
	require.Contains(t, js.String(), `"nextRun": null`)

	// Active again, it has the next run it kept.
	in.Active = true
	require.Equal(t, "Tick activated; next run "+keptText+".000", console.OperationMessage("activate", in))
	list.Reset()
	require.NoError(t, printTimers(&list, []view.Timer{view.OfTimer(in)}))
	require.Contains(t, list.String(), keptText)
	require.NotContains(t, list.String(), "not scheduled")
	// When Published: active, and no next run.
	in.NextRun = time.Time{}
	list.Reset()
	require.NoError(t, printTimers(&list, []view.Timer{view.OfTimer(in)}))
	require.True(t, strings.Contains(list.String(), "not scheduled") && !strings.Contains(list.String(), "inactive"), list.String())
}
