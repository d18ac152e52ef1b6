package console_test

import (
	"context"
	"encoding/json"
	"html"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/timer"
	"github.com/sundialhq/sundial/internal/view"
)

// A firing waiting for a slot is shown on every console surface from the pool's own
// waiter record (no write for display): the API's timer JSON and its list rows carry
// waitingForSlot (the pool, since when, the live holders and since when they hold, the
// text), the timers list and the timer page say it; a timer of the page that waits for
// nothing shows nothing.
func TestSlotWaitShown(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	pool := f.prefix + "/erp"
	uses := func(in *timer.Instance) { in.Resources = []timer.ResourceUse{{Pool: pool, Slots: 1}} }
	waiter := f.createIn(t, "pools", "", "Waiter", "every 1h", uses)
	idle := f.createIn(t, "pools", "", "Idle", "every 1h", uses)
	now := time.Now().UTC().Truncate(time.Second)
	holder := timer.SlotHolder{Timer: "pools:X", Execution: "exec-x", Until: now.Add(time.Hour), Since: now.Add(-time.Second)}
	require.NoError(t, f.app.Store.TakeSlot(ctx, timer.ResourceUse{Pool: pool, Slots: 1}, holder, 3, now))
	err := f.app.Store.TakeSlot(ctx, timer.ResourceUse{Pool: pool, Slots: 1},
		timer.SlotHolder{Timer: waiter.String(), Execution: "exec-w", Until: now.Add(time.Hour), Since: now}, 3, now)
	require.ErrorAs(t, err, new(*timer.ErrNoSlot))
	want := "waiting for " + pool + " since " + now.Format(time.RFC3339) + " (held by pools:X since " + now.Add(-time.Second).Format(time.RFC3339) + ")"

	status, body, _ := f.do(t, "GET", apiTimerPath(waiter), f.token, "")
	require.Equal(t, http.StatusOK, status, body)
	var one struct{ view.Timer }
	require.NoError(t, json.Unmarshal([]byte(body), &one))
	require.Len(t, one.WaitingForSlot, 1, body)
	w := one.WaitingForSlot[0]
	require.Equal(t, want, w.Text)
	require.Equal(t, pool, w.Pool)
	require.True(t, now.Equal(w.Since))
	require.Len(t, w.HeldBy, 1)
	require.Equal(t, "pools:X", w.HeldBy[0].Timer)

	status, body, _ = f.do(t, "GET", "/api/apps/pools/timers?name="+f.prefix, f.token, "")
	require.Equal(t, http.StatusOK, status, body)
	var list struct {
		Items []struct{ view.Timer } `json:"items"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &list))
	seen := map[string]int{}
	for _, it := range list.Items {
		seen[it.Name] = len(it.WaitingForSlot)
		if it.Name == waiter.Timer {
			require.Equal(t, want, it.WaitingForSlot[0].Text)
		}
	}
	require.Equal(t, map[string]int{waiter.Timer: 1, idle.Timer: 0}, seen)

	b := f.login(t)
	status, page, _ := b.send(t, "GET", "/timers?app=pools&name="+f.prefix, nil, "")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, html.UnescapeString(page), want)
	status, page, _ = b.send(t, "GET", "/timers/"+keyPath(waiter), nil, "")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, html.UnescapeString(page), want)
	require.Contains(t, html.UnescapeString(page), pool+" (1 slot)")
	status, page, _ = b.send(t, "GET", "/timers/"+keyPath(idle), nil, "")
	require.Equal(t, http.StatusOK, status)
	require.NotContains(t, page, "waiting for")
}

// GET /api/resources lists every declared pool: the declaring app, slots, the apps using
// the default app's, the live holders and the waiters in the order they are served (with
// their effective priority); a pool never written has none.
func TestResourcesListed(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	app := f.prefix + "-app"
	shared, own := f.prefix+"-erp", "gl"
	require.NoError(t, f.app.Store.PutAppResources(ctx, timer.AppResources{Resources: map[string]int{shared: 1}}))
	require.NoError(t, f.app.Store.PutAppResources(ctx, timer.AppResources{App: app, Resources: map[string]int{own: 2}, SharedUses: []string{shared}}))
	now := time.Now().UTC().Truncate(time.Second)
	use := timer.ResourceUse{Pool: shared, Slots: 1}
	require.NoError(t, f.app.Store.TakeSlot(ctx, use, timer.SlotHolder{Timer: "X", Execution: "e-x", Until: now.Add(time.Hour), Since: now}, 3, now))
	for _, at := range []time.Time{now.Add(-9 * time.Second), now} { // Low waits since 9 s ago, and asks again now
		require.Error(t, f.app.Store.TakeSlot(ctx, use, timer.SlotHolder{Timer: "Low", Execution: "e-l", Until: now.Add(time.Hour)}, 4, at))
	}
	require.Error(t, f.app.Store.TakeSlot(ctx, use, timer.SlotHolder{Timer: "High", Execution: "e-h", Until: now.Add(time.Hour)}, 1, now))

	status, body, _ := f.do(t, "GET", "/api/resources", f.token, "")
	require.Equal(t, http.StatusOK, status, body)
	var pools []view.Pool
	require.NoError(t, json.Unmarshal([]byte(body), &pools))
	byPool := map[string]view.Pool{}
	for _, p := range pools {
		byPool[p.Pool] = p
	}
	p := byPool[shared]
	require.Equal(t, timer.DefaultApp, p.App)
	require.Equal(t, 1, p.Slots)
	require.Contains(t, p.UsedBy, app)
	require.Len(t, p.Holders, 1)
	require.Equal(t, "X", p.Holders[0].Timer)
	require.Len(t, p.Waiters, 2)
	require.Equal(t, "High", p.Waiters[0].Timer, "priority 1 is served first")
	require.Equal(t, 4, p.Waiters[1].Priority)
	require.GreaterOrEqual(t, p.Waiters[1].EffectivePriority, 2)
	g := byPool[app+"/"+own]
	require.Equal(t, app, g.App)
	require.Equal(t, 2, g.Slots)
	require.Empty(t, g.Holders)
	require.Empty(t, g.Waiters)

	// The console's Resources page shows the same.
	status, page, _ := f.login(t).send(t, "GET", "/resources", nil, "")
	require.Equal(t, http.StatusOK, status)
	row := page[strings.Index(page, `data-pool="`+shared+`"`):]
	row = row[:strings.Index(row, "</tr>")]
	require.Contains(t, row, ">X</a>")
	require.Less(t, strings.Index(row, ">High</a>"), strings.Index(row, ">Low</a>"), "waiters in serving order")
	require.Contains(t, row, "priority 4, now ") // aged by the 9 s it waited
	require.Contains(t, row, app)
}
