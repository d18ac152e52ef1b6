package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/console"
	"github.com/sundialhq/sundial/internal/jobs"
	"github.com/sundialhq/sundial/internal/page"
	"github.com/sundialhq/sundial/internal/queue"
	"github.com/sundialhq/sundial/internal/timer"
)

// pagesOf follows a listing of the API from path (with its query) to its last page, and
// returns its pages; each is {items, next}.
func pagesOf[T any](t *testing.T, f fixture, path string) [][]T {
	t.Helper()
	var out [][]T
	next := ""
	for range 10_000 {
		u := path
		if next != "" {
			sep := "?"
			if strings.Contains(u, "?") {
				sep = "&"
			}
			u += sep + "cursor=" + url.QueryEscape(next)
		}
		status, body, _ := f.do(t, "GET", u, f.token, "")
		require.Equal(t, http.StatusOK, status, body)
		p := decode[page.Page[T]](t, body)
		require.NotNil(t, p.Items, "items is a list, [] when empty: %s", body)
		out = append(out, p.Items)
		if p.Next == "" {
			return out
		}
		require.NotEqual(t, next, p.Next, "the same cursor twice")
		next = p.Next
	}
	t.Fatalf("%s: no last page", path)
	return nil
}

// badPaging checks that a listing refuses a made-up cursor, another listing's cursor and a
// page size out of bounds with a 400 that says which.
func badPaging(t *testing.T, f fixture, path, otherCursor string) {
	t.Helper()
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	for q, says := range map[string]string{
		"cursor=not-a-cursor": "cursor", "cursor=" + url.QueryEscape(otherCursor): "cursor",
		"limit=0": "limit", "limit=-1": "limit", "limit=100000": "limit", "limit=ten": "limit",
	} {
		status, body, _ := f.do(t, "GET", path+sep+q, f.token, "")
		require.Equal(t, http.StatusBadRequest, status, "%s%s%s: %s", path, sep, q, body)
		require.Contains(t, body, says, q)
	}
}

// The tenants are read a page at a time by name: every tenant once, pages of the size asked,
// and a bad cursor or size refused.
func TestTenantPages(t *testing.T) {
	t.Parallel()
	f := setup(t)
	var mine []string
	for i := range 5 {
		name := f.prefix + "-t" + string(rune('a'+i))
		_, err := f.svc.ChangeTenant(context.Background(), name, true, "test")
		require.NoError(t, err)
		mine = append(mine, name)
	}
	pages := pagesOf[timer.Tenant](t, f, "/api/tenants?limit=2")
	var seen []string
	for _, p := range pages {
		require.LessOrEqual(t, len(p), 2)
		for _, tn := range p {
			seen = append(seen, tn.Name)
		}
	}
	require.True(t, slices.IsSorted(seen), "by name: %v", seen)
	require.Equal(t, len(seen), len(slices.Compact(slices.Clone(seen))), "every tenant once: %v", seen)
	for _, n := range mine {
		require.Contains(t, seen, n)
	}
	badPaging(t, f, "/api/tenants", page.Cursor("logs", "x"))
}

// One app's jobs a page at a time, newest first: every job once, pages of the size asked,
// the console's Jobs page links to the older ones; a bad cursor or size is refused.
func TestJobPages(t *testing.T) {
	t.Parallel()
	f := setup(t)
	app := strings.ToLower(f.prefix) + "jobs"
	t0 := time.Now().UTC().Add(-time.Hour).Truncate(time.Second)
	var want []string
	for i := range 5 {
		at := t0.Add(time.Duration(i) * time.Minute)
		j := jobs.Job{ID: "job-" + at.Format("20060102-150405") + "-" + app, Kind: "bulk", App: app, Params: json.RawMessage(`{}`),
			Actor: "ana", State: jobs.Done, Created: at, Updated: at, Ended: at, Audited: true, Version: 1}
		require.NoError(t, f.svc.Jobs.Store.CreateJob(context.Background(), j))
		want = append([]string{j.ID}, want...)
	}
	var got []string
	pages := pagesOf[jobs.Job](t, f, "/api/apps/"+app+"/jobs?limit=2")
	for _, p := range pages {
		require.LessOrEqual(t, len(p), 2)
		for _, j := range p {
			got = append(got, j.ID)
		}
	}
	require.Equal(t, want, got, "newest first, each once")
	require.Len(t, pages, 3)
	badPaging(t, f, "/api/apps/"+app+"/jobs", page.Cursor("tenants", "x"))
	// A cursor of another app's or state's listing is refused too.
	status, body, _ := f.do(t, "GET", "/api/apps/"+app+"/jobs?limit=2", f.token, "")
	require.Equal(t, http.StatusOK, status, body)
	next := decode[page.Page[jobs.Job]](t, body).Next
	status, body, _ = f.do(t, "GET", "/api/apps/"+app+"/jobs?state=failed&cursor="+url.QueryEscape(next), f.token, "")
	require.Equal(t, http.StatusBadRequest, status, body)

	bw := f.login(t)
	status, html, _ := bw.send(t, "GET", "/jobs?app="+app+"&limit=2", nil, "")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, html, want[0])
	require.NotContains(t, html, want[2], "the first page holds two")
	require.Contains(t, html, `id="next"`, "a link to the older jobs")
}

// A log page of large entries (8 KB of error each) stays under 1 MB at the largest limit:
// it ends at the byte bound with a cursor, and the pages hold every entry once, newest first.
func TestLogPagesUnder1MB(t *testing.T) {
	t.Parallel()
	f := setup(t)
	key := f.create(t, "big", "every 1h", nil)
	t0 := time.Now().UTC().Add(-time.Hour).Truncate(time.Millisecond)
	const n = 160
	big := strings.Repeat("e", 8<<10)
	for i := range n {
		f.logEntry(t, key, fmt.Sprintf("x%03d", i), t0.Add(time.Duration(i)*time.Second), timer.OutcomeError, big)
	}
	path := "/api/apps/" + timer.AppName(key.App) + "/logs?timer=" + key.Timer + "&limit=500"
	status, body, _ := f.do(t, "GET", path, f.token, "")
	require.Equal(t, http.StatusOK, status, body)
	require.LessOrEqual(t, len(body), page.Limit1MB, "a page of %d-byte entries", len(big))
	first := decode[console.LogPage](t, body)
	require.Less(t, len(first.Items), n, "cut by the byte bound")
	require.NotEmpty(t, first.Next)
	var ids []string
	for _, p := range pagesOf[console.LogEntry](t, f, path) {
		for _, e := range p {
			ids = append(ids, e.ExecutionID)
		}
	}
	require.Len(t, ids, n)
	require.Equal(t, fmt.Sprintf("x%03d", n-1), ids[0], "newest first")
	require.Equal(t, len(ids), len(slices.Compact(slices.Sorted(slices.Values(ids)))), "every entry once")
	badPaging(t, f, path[:strings.Index(path, "&limit")], page.Cursor("tenants", "x"))
}

// The DLQ's listing through the API is a page; a cursor past its listing's deadline, made up
// or another listing's, and a size out of bounds, are refused with a 400 that says why.
func TestDLQPageAPI(t *testing.T) {
	t.Parallel()
	f := setup(t)
	status, body, _ := f.do(t, "GET", "/api/dlq?limit=5", f.token, "")
	require.Equal(t, http.StatusOK, status, body)
	p := decode[page.Page[queue.Dead]](t, body)
	require.NotNil(t, p.Items)
	require.LessOrEqual(t, len(p.Items), 5)
	expired := page.Cursor("dlq", queue.ListPosition{Until: time.Now().Add(-time.Minute), Seen: 5})
	status, body, _ = f.do(t, "GET", "/api/dlq?cursor="+url.QueryEscape(expired), f.token, "")
	require.Equal(t, http.StatusBadRequest, status, body)
	require.Contains(t, body, "hold ran out")
	badPaging(t, f, "/api/dlq", page.Cursor("tenants", "x"))
}

// The open alerts a page at a time: one app's are its own only (read by its key prefix),
// every alert once over the pages, in the order of their keys; bad paging refused.
func TestAlertPages(t *testing.T) {
	t.Parallel()
	f := setup(t)
	app := strings.ToLower(f.prefix) + "al"
	ctx := context.Background()
	var want []string
	for i := range 5 {
		k := timer.Key{App: app, Timer: fmt.Sprintf("T%d", i)}
		ok, err := f.app.Store.RaiseAlert(ctx, timer.Alert{Key: k, Rule: "consecutiveFailures", Since: time.Now().UTC().Truncate(time.Millisecond), Detail: "3 failures"}, "test")
		require.NoError(t, err)
		require.True(t, ok)
		want = append(want, k.String())
	}
	other := timer.Key{App: app + "x", Timer: "T0"}
	_, err := f.app.Store.RaiseAlert(ctx, timer.Alert{Key: other, Rule: "consecutiveFailures", Since: time.Now().UTC()}, "test")
	require.NoError(t, err)
	var got []string
	pages := pagesOf[timer.Alert](t, f, "/api/apps/"+app+"/alerts?limit=2")
	for _, p := range pages {
		require.LessOrEqual(t, len(p), 2)
		for _, a := range p {
			got = append(got, a.Key.String())
		}
	}
	require.Equal(t, want, got, "the app's alerts only, each once, by key")
	var every []string
	for _, a := range slices.Concat(pagesOf[timer.Alert](t, f, "/api/alerts?limit=3")...) {
		every = append(every, a.Key.String())
	}
	require.Subset(t, every, append(want, other.String()))
	badPaging(t, f, "/api/apps/"+app+"/alerts", page.Cursor("alerts", "x"))
}

// The timers' latest backfills a page at a time: one app's only (its key prefix), by timer,
// each once; bad paging refused.
func TestBackfillPages(t *testing.T) {
	t.Parallel()
	f := setup(t)
	app := strings.ToLower(f.prefix) + "bf"
	ctx := context.Background()
	at := time.Now().UTC().Add(-time.Hour).Truncate(time.Millisecond)
	var want []string
	for i := range 5 {
		b := timer.Backfill{ID: fmt.Sprintf("bf-%d", i), App: app, Timer: fmt.Sprintf("T%d", i), Tenants: []string{""}, From: at.Add(-time.Hour), To: at,
			Parallel: 1, Total: 2, By: "ana", At: at, State: timer.BackfillCancelled}
		require.NoError(t, f.app.Store.PutBackfill(ctx, b))
		want = append(want, b.Timer)
	}
	require.NoError(t, f.app.Store.PutBackfill(ctx, timer.Backfill{ID: "bf-x", App: app + "x", Timer: "T0", Tenants: []string{""}, From: at.Add(-time.Hour), To: at,
		Parallel: 1, Total: 2, By: "ana", At: at, State: timer.BackfillCancelled}))
	var got []string
	for _, p := range pagesOf[timer.Backfill](t, f, "/api/apps/"+app+"/backfills?limit=2") {
		require.LessOrEqual(t, len(p), 2)
		for _, b := range p {
			require.Equal(t, app, b.App)
			got = append(got, b.Timer)
		}
	}
	require.Equal(t, want, got)
	badPaging(t, f, "/api/apps/"+app+"/backfills", page.Cursor("backfills", "x"))
}

// The Timers list's state filter: running, inactive and scheduled timers of one app, each
// state listing its own; an unknown state is a 400 naming the states. The console's Timers
// page has the state and page size choosers.
func TestTimersStateFilter(t *testing.T) {
	t.Parallel()
	f := setup(t)
	running := f.create(t, "Running", "every 1h", func(in *timer.Instance) {
		in.IsRunningBy, in.IsRunningSince, in.ExecutionID = "node-1", time.Now().UTC().Truncate(time.Millisecond), "exec-1"
	})
	off := f.create(t, "Off", "every 1h", func(in *timer.Instance) { in.Active = false })
	plain := f.create(t, "Plain", "every 1h", nil)
	names := func(state string) []string {
		var out []string
		for _, r := range slices.Concat(pagesOf[console.TimerRow](t, f, "/api/timers?limit=1000&name="+url.QueryEscape(f.prefix)+"&state="+state)...) {
			out = append(out, r.Name)
		}
		slices.Sort(out)
		return out
	}
	require.Equal(t, []string{running.Timer}, names("running"))
	require.Equal(t, []string{off.Timer}, names("inactive"))
	require.Equal(t, []string{plain.Timer}, names("scheduled"))
	status, body, _ := f.do(t, "GET", "/api/timers?state=sleeping", f.token, "")
	require.Equal(t, http.StatusBadRequest, status, body)
	require.Contains(t, body, "state must be one of scheduled, running, inactive, paused, failing")

	bw := f.login(t)
	status, html, _ := bw.send(t, "GET", "/timers?state=running&name="+url.QueryEscape(f.prefix), nil, "")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, html, running.Timer)
	require.NotContains(t, html, plain.Timer)
	require.Contains(t, html, `<option value="running" selected>`)
	require.Contains(t, html, `name="limit"`)
}
