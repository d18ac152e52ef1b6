package plan_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/manifest"
	"github.com/sundialhq/sundial/internal/plan"
)

// The firings per day apply the manifest's calendars, their policies and validity windows.
func TestFiringsPerDayUnderCalendars(t *testing.T) {
	t.Parallel()
	m, err := manifest.Parse(strings.NewReader(`calendars:
  - {name: biz, weekdays: [sat, sun], dates: ["2026-11-26"]}
timers:
  - {name: Skip, schedule: "09:00", calendar: biz, action: {http: {url: "http://h/"}}}
  - {name: Next, schedule: "09:00 17:00", calendar: biz, onExcluded: next-business-day, action: {http: {url: "http://h/"}}}
  - {name: Window, schedule: "09:00", start: "2026-11-23T00:00:00Z", end: "2026-11-25T23:00:00Z", action: {http: {url: "http://h/"}}}
`))
	require.NoError(t, err)
	ins, _ := plan.FromManifest(m, nil, manifest.Defaults{MaxRetries: 3})
	p := compute(t, plan.Input{Instances: ins, From: from, Days: 7}) // Saturday 2026-11-21 .. Friday 27th
	got := map[string][]int{}
	for _, ip := range p.Instances {
		got[ip.Timer] = perDay(ip)
	}
	require.Equal(t, map[string][]int{
		//        Sat Sun Mon Tue Wed Thu Fri
		"Skip":   {0, 0, 1, 1, 1, 0, 1},
		"Next":   {0, 0, 2, 2, 2, 0, 2}, // the weekend's and Thursday's land on Monday's and Friday's: one each
		"Window": {0, 0, 1, 1, 1, 0, 0},
	}, got)
}
