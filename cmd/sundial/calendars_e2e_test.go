package main

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/admin"
)

// TestCalendarsEndToEnd runs a timer under a business calendar on the local platform: a
// calendar excluding today keeps an "every 2s" timer silent (its next run is tomorrow), and
// `sundial calendars edit` clearing the date makes it run within seconds; a publish keeps
// the edit.
func TestCalendarsEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs sundial up against the emulator")
	}
	t.Parallel()
	rec, srvURL := serveRecorder(t)
	dir := t.TempDir()
	today := time.Now().UTC()
	manifestPath := writeManifestIn(t, dir, fmt.Sprintf(`calendars:
  - {name: closed, dates: [%q]}
timers:
  - {name: Biz, schedule: "every 2s", calendar: closed, timeout: 5s, action: {http: {url: "%s/ok"}}}
`, today.Format("2006-01-02"), srvURL))
	endpoint := startPlatform(t, dir, manifestPath, nil).Endpoint
	run := runner(t, dir, endpoint)
	var shown struct {
		NextRun  *time.Time  `json:"nextRun"`
		NextRuns []time.Time `json:"nextRuns"`
		Calendar string      `json:"calendar"`
	}
	require.NoError(t, json.Unmarshal([]byte(run("timers", "show", "Biz", "--json")), &shown))
	tomorrow := time.Date(today.Year(), today.Month(), today.Day()+1, 0, 0, 0, 0, time.UTC)
	require.Equal(t, "closed", shown.Calendar)
	require.NotNil(t, shown.NextRun)
	require.Equal(t, tomorrow, shown.NextRun.UTC(), "today is excluded: the first run is tomorrow's first slot")
	require.Equal(t, tomorrow, shown.NextRuns[0].UTC())
	time.Sleep(3 * time.Second)
	require.Empty(t, rec.get("Biz"), "nothing runs on an excluded date")

	var cals []admin.CalendarInfo
	require.NoError(t, json.Unmarshal([]byte(run("calendars", "list", "--json")), &cals))
	require.Len(t, cals, 1)
	require.Equal(t, []string{"Biz"}, cals[0].Timers)

	_, stderr, code := cli(t, dir, "calendars", "edit", "closed", "--dates", "2027-02-30", "--endpoint", endpoint)
	require.Equal(t, 2, code)
	require.Contains(t, stderr, `dates[0]: "2027-02-30" is not a date`)

	out := run("calendars", "edit", "closed", "--dates", "")
	require.Contains(t, out, "calendar closed of app default saved and in force: no timer fires on a date it excludes")
	require.Contains(t, out, "(excludes nothing)")
	require.Eventually(t, func() bool { return len(rec.get("Biz")) > 0 }, 20*time.Second, 200*time.Millisecond,
		"the edit reschedules the timer from now")

	run("sync", manifestPath)
	var c admin.CalendarInfo
	require.NoError(t, json.Unmarshal([]byte(run("calendars", "show", "closed")), &c))
	require.Empty(t, c.Dates, "a publish keeps the operator's edit")
	require.Equal(t, cliActor(), c.EditedBy, "cli:<user>, as every CLI action records")
}
