package console_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/audit"
	"github.com/sundialhq/sundial/internal/console"
	"github.com/sundialhq/sundial/internal/jobs"
	"github.com/sundialhq/sundial/internal/manifest"
	"github.com/sundialhq/sundial/internal/schedule"
	"github.com/sundialhq/sundial/internal/timer"
)

// The timer's next runs and the edit page's preview apply its business calendar; a timer past
// its validity window shows as ended.
func TestCalendarPreviews(t *testing.T) {
	t.Parallel()
	f := setup(t)
	names := []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}
	only := time.Now().UTC().AddDate(0, 0, 3).Weekday() // the one weekday the calendar leaves
	var excluded []string
	for w, n := range names {
		if time.Weekday(w) != only {
			excluded = append(excluded, n)
		}
	}
	key := f.create(t, "Biz", "09:00", func(in *timer.Instance) {
		in.Calendar = &timer.Calendar{Name: "one-day", CalendarRules: schedule.CalendarRules{Weekdays: excluded}}
	})
	status, body, _ := f.do(t, "GET", apiTimerPath(key), f.token, "")
	require.Equal(t, http.StatusOK, status, body)
	d := decode[console.TimerDetail](t, body)
	require.Equal(t, "one-day", d.Calendar)
	require.Equal(t, "skip", d.OnExcluded)
	require.NotEmpty(t, d.NextRuns)
	for _, r := range d.NextRuns {
		require.Equal(t, only, r.Weekday(), "next runs only on the day the calendar leaves: %s", r)
	}

	page := "/timers/" + keyPath(key) + "/edit"
	b := f.login(t)
	form := url.Values{"csrf": {b.csrf(t, page)}, "op": {"preview"}, "schedule": {"10:00"}, "timeout": {"20s"}, "priority": {"3"}, "dst": {"shift"}}
	status, body, _ = b.send(t, "POST", page, form, "")
	require.Equal(t, http.StatusOK, status)
	preview := body[strings.Index(body, `<ol id="preview"`):]
	preview = preview[:strings.Index(preview, "</ol>")]
	require.Equal(t, 10, strings.Count(preview, "<li>"), preview)
	require.Equal(t, 10, strings.Count(preview, only.String()[:3]+" "), "every preview instant on the one weekday: %s", preview)

	ended := f.create(t, "Ended", "every 1h", func(in *timer.Instance) {
		in.End = time.Now().UTC().Add(-time.Hour).Truncate(time.Millisecond)
		in.NextRun = time.Time{}
	})
	status, body, _ = f.do(t, "GET", apiTimerPath(ended), f.token, "")
	require.Equal(t, http.StatusOK, status, body)
	d = decode[console.TimerDetail](t, body)
	require.True(t, d.Ended)
	require.False(t, d.Failing)
	require.Empty(t, d.NextRuns, "no run after its end")
	status, body, _ = b.send(t, "GET", "/timers/"+keyPath(ended), nil, "")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, "ended (past its validity window)")
}

func TestAPIEditMisfireAfter(t *testing.T) {
	t.Parallel()
	f := setup(t)
	key := f.create(t, "Late", "every 1h", nil)
	path := apiTimerPath(key)
	status, body, _ := f.do(t, "PATCH", path, f.token, `{"misfireAfter":"soon"}`)
	require.Equal(t, http.StatusBadRequest, status, body)
	require.Contains(t, body, `misfireAfter: want a duration such as 10m or 90s, got \"soon\"`)
	status, body, _ = f.do(t, "PATCH", path, f.token, `{"misfireAfter":"200h"}`)
	require.Equal(t, http.StatusBadRequest, status, body)
	require.Contains(t, body, "misfireAfter: 200h0m0s is out of range 1s..168h0m0s")
	status, body, _ = f.do(t, "PATCH", path, f.token, `{"misfireAfter":"10m"}`)
	require.Equal(t, http.StatusOK, status, body)
	d := decode[console.TimerDetail](t, body)
	require.Equal(t, "10m0s", d.MisfireAfter)
	require.True(t, d.Edited)
	require.Equal(t, 10*time.Minute, f.get(t, key).MisfireAfter)
}

func TestCalendarsAPIAndPage(t *testing.T) {
	t.Parallel()
	f := setup(t)
	app := strings.ToLower(f.prefix)
	m, err := manifest.Parse(strings.NewReader(`app: ` + app + `
calendars:
  - {name: biz, weekdays: [sat, sun]}
timers:
  - {name: Pay, schedule: "09:00", calendar: biz, action: {http: {url: "http://127.0.0.1:9/x"}}}
`))
	require.NoError(t, err)
	_, err = f.svc.Admin.Sync(context.Background(), m)
	require.NoError(t, err)
	key := timer.Key{App: app, Timer: "Pay"}

	status, body, _ := f.do(t, "GET", "/api/apps/"+app+"/calendars", f.token, "")
	require.Equal(t, http.StatusOK, status, body)
	cals := decode[[]admin.CalendarInfo](t, body)
	require.Len(t, cals, 1)
	require.Equal(t, []string{app + ":Pay"}, cals[0].Timers)
	require.Equal(t, []string{"sat", "sun"}, cals[0].Weekdays)

	path := "/api/apps/" + app + "/calendars/biz"
	status, body, _ = f.do(t, "PUT", path, f.token, `{"dates":["2027-02-30"]}`)
	require.Equal(t, http.StatusBadRequest, status, body)
	require.Contains(t, body, `dates[0]: \"2027-02-30\" is not a date`)
	status, body, _ = f.do(t, "PUT", path, f.token, `{"holidays":["2027-01-01"]}`)
	require.Equal(t, http.StatusBadRequest, status, body)
	status, body, _ = f.do(t, "PUT", "/api/apps/"+app+"/calendars/nope", f.token, `{}`)
	require.Equal(t, http.StatusNotFound, status, body)

	status, body, _ = f.do(t, "PUT", path, f.token, `{"weekdays":["sun","mon","tue","wed","thu","fri"]}`)
	require.Equal(t, http.StatusAccepted, status, body)
	acc := decode[jobs.Accepted](t, body)
	require.Equal(t, "calendar", acc.Job.Kind)
	require.Equal(t, "/api/jobs/"+acc.Job.ID, acc.Job.URL)
	require.Contains(t, acc.Message, "saved and in force")
	in := f.get(t, key)
	require.Equal(t, time.Saturday, in.NextRun.Weekday(), "rescheduled: only Saturdays are left")
	require.Equal(t, []string{"sun", "mon", "tue", "wed", "thu", "fri"}, in.Calendar.Weekdays)

	b := f.login(t)
	status, body, _ = b.send(t, "GET", "/calendars", nil, "")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, body, `id="calendar-`+app+`-biz"`)
	form := url.Values{"csrf": {b.csrf(t, "/calendars")}, "app": {app}, "weekdays": {"sat, sun"}, "dates": {""}, "yearly": {""}, "ranges": {""}}
	status, _, _ = b.send(t, "POST", "/apps/"+app+"/calendars/biz", form, "")
	require.Equal(t, http.StatusSeeOther, status)
	in = f.get(t, key)
	require.Equal(t, []string{"sat", "sun"}, in.Calendar.Weekdays)
	require.NotEqual(t, time.Saturday, in.NextRun.Weekday())
	// Both edits are in the audit trail, newest first, with their callers and the rules
	// before and after.
	status, body, _ = f.do(t, "GET", "/api/apps/"+app+"/audit", f.token, "")
	require.Equal(t, http.StatusOK, status, body)
	var got []string
	recs := auditItems(t, body)
	var edits []audit.Record
	for _, r := range recs {
		got = append(got, r.Action+" by "+r.Who)
		if r.Action != audit.Job {
			edits = append(edits, r)
		}
	}
	require.Equal(t, []string{"calendar edit biz by console", "job by platform", "calendar edit biz by api", "job by platform"}, got,
		"each edit once, by its caller; its job's end, by the platform")
	require.Equal(t, []any{"sat", "sun"}, edits[0].After["weekdays"])
	require.Equal(t, []any{"sun", "mon", "tue", "wed", "thu", "fri"}, edits[0].Before["weekdays"])
	require.Equal(t, acc.Job.ID, edits[1].After["job"])
	form.Set("dates", "2027-13-01")
	status, body, _ = b.send(t, "POST", "/apps/"+app+"/calendars/biz", form, "")
	require.Equal(t, http.StatusBadRequest, status)
	require.Contains(t, body, "is not a date")
}
