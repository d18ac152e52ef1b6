package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/console"
	"github.com/sundialhq/sundial/internal/dynamo"
	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/inmem"
	"github.com/sundialhq/sundial/internal/manifest"
	"github.com/sundialhq/sundial/internal/timer"
)

var (
	_ console.Store = (*dynamo.Store)(nil)
	_ console.Store = (*inmem.Store)(nil)
)

// TestServiceInMemory reads Service Center's model from the in-memory store, with a manual
// clock: no emulator. The API and page tests run the same service on the emulator's tables.
func TestServiceInMemory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := inmem.NewStore()
	clock := timer.NewManualClock(time.Now().UTC().Truncate(time.Hour))
	svc := &console.Service{Store: store, Clock: clock, Tick: time.Minute,
		Admin: &admin.Service{Store: store, Queue: &inmem.Queue{}, Clock: clock, Shards: 1}}
	m, err := manifest.Parse(strings.NewReader(`tenants: [acme]
timers:
  - {name: Hourly, schedule: "every 1h", timeout: 30s, action: {http: {url: "http://127.0.0.1:9/x"}}}
  - {name: PerTenant, schedule: "every 1m", multiTenant: true, action: {http: {url: "http://127.0.0.1:9/x"}}}
`))
	require.NoError(t, err)
	_, err = svc.Admin.Sync(ctx, m)
	require.NoError(t, err)
	hourly, perTenant := timer.Key{Timer: "Hourly"}, timer.Key{Timer: "PerTenant", Tenant: "acme"}

	t.Run("TimerShowsTheManifestsValuesUnderAnEdit", func(t *testing.T) {
		_, err := svc.Admin.Edit(ctx, hourly, admin.Edit{Schedule: ptr("every 5m"), By: "tester"})
		require.NoError(t, err)
		d, _, err := svc.Timer(ctx, hourly)
		require.NoError(t, err)
		require.True(t, d.Edited)
		require.Equal(t, "every 5m", d.Schedule)
		require.Equal(t, "every 1h", d.DefaultSchedule)
		require.Equal(t, "tester", d.EditedBy)
		require.Len(t, d.NextRuns, admin.PreviewRuns)
		require.Equal(t, clock.Now().Add(5*time.Minute), d.NextRuns[0].UTC())
		_, _, err = svc.Timer(ctx, timer.Key{Timer: "Missing"})
		require.ErrorIs(t, err, errkind.NotFound)
	})

	// The next runs a timer page lists include the pending retry "Next run" shows, marked
	// (the schedule's alone would disagree with "Next run").
	t.Run("NextRunsIncludeThePendingRetry", func(t *testing.T) {
		key := timer.Key{Timer: "PerTenant", Tenant: "acme"}
		failed, retryAt := clock.Now().Add(-time.Minute), clock.Now().Add(10*time.Second)
		store.Update(key, func(in *timer.Instance) {
			in.NextRun, in.PendingScheduledAt, in.PendingAttempt = retryAt, failed, 2
		})
		srv, err := console.New(console.Options{Service: svc, Token: strings.Repeat("t", 20), Log: slog.New(slog.DiscardHandler)})
		require.NoError(t, err)
		for _, c := range []struct {
			name    string
			pending bool
		}{{"pending retry", true}, {"no retry", false}} {
			if !c.pending {
				store.Update(key, func(in *timer.Instance) { in.PendingScheduledAt, in.PendingAttempt = time.Time{}, 0 })
			}
			d, _, err := svc.Timer(ctx, key)
			require.NoError(t, err)
			req := httptest.NewRequest(http.MethodGet, "/timers/"+key.String(), nil)
			req.Host = "127.0.0.1:8089"
			req.Header.Set("Authorization", "Bearer "+strings.Repeat("t", 20))
			w := httptest.NewRecorder()
			srv.Handler().ServeHTTP(w, req)
			require.Equal(t, http.StatusOK, w.Code, w.Body.String())
			if !c.pending {
				require.Nil(t, d.PendingRetry, c.name)
				require.NotContains(t, w.Body.String(), "retry, attempt")
				continue
			}
			require.Equal(t, &console.PendingRetry{At: retryAt, Attempt: 2, ScheduledAt: failed}, d.PendingRetry)
			require.Len(t, d.NextRuns, admin.PreviewRuns, "the schedule's runs, as before")
			require.Contains(t, w.Body.String(), `<ol id="next-runs"><li class="retry">`+retryAt.Format("Mon 2006-01-02 15:04:05 MST")+` <span class="badge">retry, attempt 2</span></li>`)
		}
	})

	t.Run("FiltersMatchTenantAndActive", func(t *testing.T) {
		_, err := svc.Admin.SetActive(ctx, hourly, false)
		require.NoError(t, err)
		rows, err := svc.Timers(ctx, console.Filter{Active: "no"})
		require.NoError(t, err)
		require.Len(t, rows.Items, 1)
		require.Equal(t, hourly.String(), rows.Items[0].Key)
		require.True(t, rows.Items[0].Edited, "the edit made above, read with the page")
		rows, err = svc.Timers(ctx, console.Filter{Tenant: "acme"})
		require.NoError(t, err)
		require.False(t, rows.Items[0].Edited)
		require.NoError(t, err)
		require.Len(t, rows.Items, 1)
		require.Equal(t, perTenant.String(), rows.Items[0].Key)
		_, err = svc.Timers(ctx, console.Filter{Active: "maybe"})
		require.ErrorIs(t, err, errkind.Invalid)
		_, err = svc.Timers(ctx, console.Filter{Limit: timer.MaxPageSize + 1})
		require.ErrorIs(t, err, errkind.Invalid)
		_, err = svc.Timers(ctx, console.Filter{Cursor: "not-a-cursor"})
		require.ErrorIs(t, err, errkind.Invalid)
	})

	t.Run("TimerPagesStayUnder1MB", func(t *testing.T) {
		// 1,200 rows of about 2 KB each: a page of limit 1,000 would be 2.4 MB; it ends
		// under 1 MB, and following its cursor lists every row once.
		big := strings.Repeat("x", 1800)
		for i := range 1200 {
			key := timer.Key{App: "wide", Timer: "W", Tenant: fmt.Sprintf("t%04d", i)}
			require.NoError(t, store.Create(ctx, timer.Instance{Key: key, Active: true, Settings: timer.Settings{Schedule: "every 1h",
				Properties: map[string]string{"blob": big}}}))
		}
		seen := map[string]bool{}
		f := console.Filter{App: "wide", Limit: timer.MaxPageSize}
		pages := 0
		for {
			page, err := svc.Timers(ctx, f)
			require.NoError(t, err)
			b, err := json.Marshal(page)
			require.NoError(t, err)
			require.Less(t, len(b), 1<<20, "page %d", pages)
			pages++
			for _, r := range page.Items {
				require.False(t, seen[r.Key], r.Key)
				seen[r.Key] = true
			}
			if page.Next == "" {
				break
			}
			f.Cursor = page.Next
		}
		require.Len(t, seen, 1200)
		require.Greater(t, pages, 2)
	})

	t.Run("TimerPagesFollowTheirCursor", func(t *testing.T) {
		// A page of 2 rows with a name filter must neither skip nor repeat a match, whatever
		// the rows the filter leaves out between them (Beta). acme is registered already.
		m, err := manifest.Parse(strings.NewReader(`app: paged
tenants: [t1, t2, t3]
timers:
  - {name: Alpha, schedule: "every 1h", multiTenant: true, action: {http: {url: "http://127.0.0.1:9/x"}}}
  - {name: Beta, schedule: "every 1h", action: {http: {url: "http://127.0.0.1:9/x"}}}
  - {name: AlphaToo, schedule: "every 1h", action: {http: {url: "http://127.0.0.1:9/x"}}}
`))
		require.NoError(t, err)
		_, err = svc.Admin.Sync(ctx, m)
		require.NoError(t, err)
		var got []string
		f := console.Filter{App: "paged", Name: "alpha", Limit: 2}
		pages := 0
		for {
			page, err := svc.Timers(ctx, f)
			require.NoError(t, err)
			require.LessOrEqual(t, len(page.Items), 2)
			pages++
			for _, r := range page.Items {
				got = append(got, r.Key)
			}
			if page.Next == "" {
				break
			}
			f.Cursor = page.Next
		}
		require.Equal(t, []string{"paged:Alpha@acme", "paged:Alpha@t1", "paged:Alpha@t2", "paged:Alpha@t3", "paged:AlphaToo"}, got)
		require.Equal(t, 3, pages)
		_, err = svc.Timers(ctx, console.Filter{App: "default", Cursor: f.Cursor})
		require.ErrorIs(t, err, errkind.Invalid, "a cursor of another app's listing")
	})

	t.Run("LogPagesFollowTheirCursor", func(t *testing.T) {
		for i, id := range []string{"e1", "e2", "e3"} {
			at := clock.Now().Add(time.Duration(i-3) * time.Minute)
			require.NoError(t, store.PutExecution(ctx, timer.Execution{Key: perTenant, ExecutionID: id, ScheduledAt: at, ShouldHaveRunAt: at,
				StartedAt: at, Attempt: 1, Outcome: timer.OutcomeSuccess}))
		}
		page, err := svc.Logs(ctx, console.LogFilter{Tenant: "acme", Limit: 2})
		require.NoError(t, err)
		require.Len(t, page.Items, 2)
		require.Equal(t, "e3", page.Items[0].ExecutionID, "newest first")
		rest, err := svc.Logs(ctx, console.LogFilter{Tenant: "acme", Limit: 2, After: page.Next})
		require.NoError(t, err)
		require.Len(t, rest.Items, 1)
		require.Equal(t, "e1", rest.Items[0].ExecutionID)
		require.Empty(t, rest.Next)

		e, err := svc.Entry(ctx, perTenant, rest.Items[0].Ref)
		require.NoError(t, err)
		require.Equal(t, "e1", e.ExecutionID)
		_, err = svc.Entry(ctx, perTenant, "not-a-ref")
		require.ErrorIs(t, err, errkind.Invalid)
	})
}

func ptr[T any](v T) *T { return &v }
