package console_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/audit"
	"github.com/sundialhq/sundial/internal/console"
	"github.com/sundialhq/sundial/internal/testenv"
	"github.com/sundialhq/sundial/internal/timer"
)

func decode[T any](t *testing.T, body string) T {
	t.Helper()
	var v T
	require.NoError(t, json.Unmarshal([]byte(body), &v), body)
	return v
}

// auditItems decodes a page of the audit API ({"items": […], "next": …}).
func auditItems(t *testing.T, body string) []audit.Record {
	t.Helper()
	return decode[struct {
		Items []audit.Record `json:"items"`
	}](t, body).Items
}

func TestAPI(t *testing.T) {
	t.Parallel()
	f := setup(t)
	tok := f.token

	t.Run("ListsAndFilters", func(t *testing.T) {
		t.Parallel()
		f.create(t, "List-On", "every 5m", nil)
		f.create(t, "List-Off", "every 5m", func(in *timer.Instance) { in.Active = false })
		failing := f.create(t, "List-Failing", "every 5m", func(in *timer.Instance) {
			in.LastOutcome, in.LastError = timer.OutcomeError, "http 500"
		})
		names := func(query string) []string {
			var out []string
			for cursor := ""; ; {
				status, body, _ := f.do(t, "GET", "/api/timers?name="+f.prefix+"-List"+query+"&cursor="+url.QueryEscape(cursor), tok, "")
				require.Equal(t, http.StatusOK, status, body)
				page := decode[console.TimerPage](t, body)
				for _, r := range page.Items {
					out = append(out, strings.TrimPrefix(r.Key, f.prefix+"-"))
				}
				if cursor = page.Next; cursor == "" {
					return out
				}
			}
		}
		require.Equal(t, []string{"List-Failing", "List-Off", "List-On"}, names(""))
		require.Equal(t, []string{"List-Off"}, names("&active=no"))
		require.Equal(t, []string{"List-Failing", "List-On"}, names("&active=yes"))
		require.Equal(t, []string{"List-Failing"}, names("&failing=true"))
		require.Empty(t, names("&tenant=nobody"))

		status, body, _ := f.do(t, "GET", "/api/timers?active=maybe", tok, "")
		require.Equal(t, http.StatusBadRequest, status)
		require.Contains(t, body, "active must be yes or no")

		status, body, _ = f.do(t, "GET", timerPath(failing), tok, "")
		require.Equal(t, http.StatusOK, status)
		require.True(t, decode[console.TimerDetail](t, body).Failing)
	})

	t.Run("TimerDetail", func(t *testing.T) {
		t.Parallel()
		key := f.create(t, "Detail", "every 15m", func(in *timer.Instance) { in.Properties = map[string]string{"team": "ops"} })
		now := time.Now().UTC().Truncate(time.Millisecond)
		f.logEntry(t, key, "d1", now.Add(-time.Minute), timer.OutcomeSuccess, "")
		status, body, _ := f.do(t, "GET", timerPath(key), tok, "")
		require.Equal(t, http.StatusOK, status, body)
		d := decode[console.TimerDetail](t, body)
		require.Equal(t, key.String(), d.Key)
		require.Equal(t, "every 15m", d.DefaultSchedule)
		require.False(t, d.Edited)
		require.Equal(t, "24s", d.EffectiveTimeout, "timeout 20s + 20%")
		require.Len(t, d.NextRuns, 10)
		require.Equal(t, 15*time.Minute, d.NextRuns[1].Sub(d.NextRuns[0]))
		require.Equal(t, map[string]string{"team": "ops"}, d.Properties)
		require.Len(t, d.Recent, 1)
		require.Equal(t, "d1", d.Recent[0].ExecutionID)
		require.EqualValues(t, 1000, d.Recent[0].LateMs)

		status, body, _ = f.do(t, "GET", "/api/apps/default/timers/"+f.prefix+"-Nope", tok, "")
		require.Equal(t, http.StatusNotFound, status)
		require.EqualValues(t, 404, decode[map[string]any](t, body)["status"])
		status, body, _ = f.do(t, "GET", "/api/apps/default/timers/bad%20name", tok, "")
		require.Equal(t, http.StatusBadRequest, status)
		require.Contains(t, body, "must match")
	})

	t.Run("DeactivatedWhileRunningIsNotScheduled", func(t *testing.T) {
		t.Parallel()
		key := f.create(t, "RunningOff", "every 1s", func(in *timer.Instance) {
			in.Active, in.NextRun = false, time.Time{}
			in.ExecutionID, in.IsRunningBy, in.IsRunningSince = "exec-1", "node-a", time.Now().UTC().Truncate(time.Millisecond)
			in.LeaseExpiresAt = in.IsRunningSince.Add(time.Minute)
		})
		status, body, _ := f.do(t, "GET", timerPath(key), tok, "")
		require.Equal(t, http.StatusOK, status)
		d := decode[console.TimerDetail](t, body)
		require.False(t, d.Scheduled)
		require.Equal(t, "node-a", d.IsRunningBy)
		require.Equal(t, 1, d.RunAttempt)
		b := f.login(t)
		status, page, _ := b.send(t, "GET", "/timers/"+keyPath(key), nil, "")
		require.Equal(t, http.StatusOK, status)
		require.Contains(t, page, "not scheduled (inactive); the running execution is not stopped")
	})

	t.Run("Edit", func(t *testing.T) {
		t.Parallel()
		key := f.create(t, "Edit", "every 15m", nil)
		path := timerPath(key)
		before := f.get(t, key)

		status, body, _ := f.do(t, "PATCH", path, tok, `{"schedule":"25:00"}`)
		require.Equal(t, http.StatusBadRequest, status)
		require.Contains(t, body, "hour 25 out of range")
		status, body, _ = f.do(t, "PATCH", path, tok, `{"timeout":"0s","priority":9}`)
		require.Equal(t, http.StatusBadRequest, status)
		require.Contains(t, body, "timeout: 0s is out of range")
		require.Contains(t, body, "priority: 9 is out of range")
		status, body, _ = f.do(t, "PATCH", path, tok, `{"timeout":"soon"}`)
		require.Equal(t, http.StatusBadRequest, status)
		require.Contains(t, body, `got \"soon\"`)
		status, _, _ = f.do(t, "PATCH", path, tok, `{"schedul":"every 1m"}`)
		require.Equal(t, http.StatusBadRequest, status, "unknown fields are refused")
		require.Equal(t, before, f.get(t, key), "invalid edits change nothing")

		status, body, _ = f.do(t, "PATCH", path, tok, `{"schedule":"every 5m","timeout":"90s","priority":1}`)
		require.Equal(t, http.StatusOK, status, body)
		d := decode[console.TimerDetail](t, body)
		require.True(t, d.Edited)
		require.Equal(t, "every 5m", d.Schedule)
		require.Equal(t, "every 15m", d.DefaultSchedule)
		require.Equal(t, "1m30s", d.Timeout)
		require.Equal(t, "20s", d.DefaultTimeout)
		require.Equal(t, 1, d.Priority)
		require.Equal(t, 3, d.DefaultPriority)
		require.Equal(t, "api", d.EditedBy)
		require.Equal(t, 5*time.Minute, d.NextRuns[1].Sub(d.NextRuns[0]))
		require.Equal(t, d.NextRuns[0], *d.NextRun, "rescheduled from now")
		status, body, _ = f.do(t, "GET", "/api/apps/default/timers?name="+url.QueryEscape(key.Timer), tok, "")
		require.Equal(t, http.StatusOK, status, body)
		listed := decode[console.TimerPage](t, body).Items
		require.NotEmpty(t, listed)
		require.True(t, listed[0].Edited, "the list reads the edit with the instance")

		status, body, _ = f.do(t, "PATCH", path, tok, `{"reset":true}`)
		require.Equal(t, http.StatusOK, status, body)
		d = decode[console.TimerDetail](t, body)
		require.False(t, d.Edited)
		require.Equal(t, "every 15m", d.Schedule)
		require.Equal(t, 3, d.Priority)

		status, _, _ = f.do(t, "PATCH", "/api/apps/default/timers/"+f.prefix+"-Ghost", tok, `{"priority":2}`)
		require.Equal(t, http.StatusNotFound, status)
	})

	t.Run("EditDST", func(t *testing.T) {
		t.Parallel()
		key := f.create(t, "EditDST", "02:30", func(in *timer.Instance) { in.Timezone = "America/New_York" })
		path := timerPath(key)
		status, body, _ := f.do(t, "GET", path, tok, "")
		require.Equal(t, http.StatusOK, status, body)
		d := decode[console.TimerDetail](t, body)
		require.Equal(t, "shift", d.DST, "the default")
		require.Equal(t, "shift", d.DefaultDST)

		status, body, _ = f.do(t, "PATCH", path, tok, `{"dst":"sometimes","priority":9}`)
		require.Equal(t, http.StatusBadRequest, status)
		require.Contains(t, body, `dst \"sometimes\": expected \"shift\"`)
		require.Contains(t, body, "priority: 9 is out of range", "every bad field is named")
		require.Equal(t, "", f.get(t, key).DST, "an invalid edit changes nothing")

		status, body, _ = f.do(t, "PATCH", path, tok, `{"dst":"skip"}`)
		require.Equal(t, http.StatusOK, status, body)
		d = decode[console.TimerDetail](t, body)
		require.True(t, d.Edited)
		require.Equal(t, "skip", d.DST)
		require.Equal(t, "shift", d.DefaultDST)
		require.Equal(t, "skip", f.get(t, key).DST)

		status, body, _ = f.do(t, "PATCH", path, tok, `{"reset":true}`)
		require.Equal(t, http.StatusOK, status, body)
		d = decode[console.TimerDetail](t, body)
		require.False(t, d.Edited)
		require.Equal(t, "shift", d.DST)
	})

	t.Run("EditPageDST", func(t *testing.T) {
		t.Parallel()
		key := f.create(t, "EditPageDST", "02:30", func(in *timer.Instance) { in.Timezone = "America/New_York" })
		page := "/timers/" + keyPath(key) + "/edit"
		b := f.login(t)
		status, body, _ := b.send(t, "GET", page, nil, "")
		require.Equal(t, http.StatusOK, status)
		require.Contains(t, body, `<select id="dst" name="dst">`)
		require.Contains(t, body, `<option value="shift" selected>`)
		form := func(op, dst string) url.Values {
			return url.Values{"csrf": {b.csrf(t, page)}, "op": {op}, "schedule": {"02:30"}, "timeout": {"20s"}, "priority": {"3"}, "dst": {dst}}
		}
		status, body, _ = b.send(t, "POST", page, form("save", "later"), "")
		require.Equal(t, http.StatusBadRequest, status)
		require.Contains(t, body, `dst &#34;later&#34;: expected &#34;shift&#34;`)
		require.Equal(t, "", f.get(t, key).DST)

		status, body, _ = b.send(t, "POST", page, form("preview", "skip"), "")
		require.Equal(t, http.StatusOK, status)
		require.Contains(t, body, `<option value="skip" selected>`, "the preview keeps what was chosen")
		require.Equal(t, "", f.get(t, key).DST, "a preview saves nothing")

		status, _, _ = b.send(t, "POST", page, form("save", "skip"), "")
		require.Equal(t, http.StatusSeeOther, status)
		require.Equal(t, "skip", f.get(t, key).DST)
		status, body, _ = b.send(t, "GET", page, nil, "")
		require.Equal(t, http.StatusOK, status)
		require.Contains(t, body, `<option value="skip" selected>`)
		require.Contains(t, body, "default shift")
	})

	t.Run("OperationsRunNowActivateDeactivate", func(t *testing.T) {
		t.Parallel()
		key := f.create(t, "Ops", "every 1h", func(in *timer.Instance) { in.Priority = 1; in.Active = false })
		status, body, _ := f.do(t, "POST", timerPath(key)+"/run-now", tok, "")
		require.Equal(t, http.StatusOK, status, body)
		res := decode[console.OperationResult](t, body)
		require.Contains(t, res.Message, "firing sent")
		require.True(t, res.Timer.Active, "Run Now activates a deactivated timer")
		require.WithinDuration(t, time.Now(), *res.Timer.NextRun, 10*time.Second)
		require.True(t, sentTo(t, f, 0, key), "the firing is on the P1 queue")

		status, body, _ = f.do(t, "POST", timerPath(key)+"/deactivate", tok, "")
		require.Equal(t, http.StatusOK, status, body)
		require.False(t, f.get(t, key).Active)
		require.Contains(t, decode[console.OperationResult](t, body).Message, "deactivated: not scheduled (inactive)")
		status, _, _ = f.do(t, "POST", timerPath(key)+"/activate", tok, "")
		require.Equal(t, http.StatusOK, status)
		require.True(t, f.get(t, key).Active)
		status, _, _ = f.do(t, "POST", "/api/apps/default/timers/"+f.prefix+"-Ghost/run-now", tok, "")
		require.Equal(t, http.StatusNotFound, status)
		status, _, _ = f.do(t, "POST", timerPath(key)+"/explode", tok, "")
		require.Equal(t, http.StatusNotFound, status)
	})

	t.Run("LogPagesAndEntries", func(t *testing.T) {
		t.Parallel()
		key := f.create(t, "Logged", "every 1h", nil)
		base := time.Now().UTC().Truncate(time.Millisecond).Add(-time.Hour)
		var ids []string
		for i := range 5 {
			outcome, errText := timer.OutcomeSuccess, ""
			if i == 2 {
				outcome, errText = timer.OutcomeError, "http 502: bad gateway"
			}
			id := "log-" + string(rune('a'+i))
			f.logEntry(t, key, id, base.Add(time.Duration(i)*time.Minute), outcome, errText)
			ids = append([]string{id}, ids...) // newest first
		}
		var got []string
		after := ""
		for page := 0; ; page++ {
			require.Less(t, page, 5)
			status, body, _ := f.do(t, "GET", "/api/logs?limit=2&timer="+keyPath(key)+"&after="+url.QueryEscape(after), tok, "")
			require.Equal(t, http.StatusOK, status, body)
			p := decode[console.LogPage](t, body)
			require.LessOrEqual(t, len(p.Items), 2)
			for _, e := range p.Items {
				got = append(got, e.ExecutionID)
			}
			if p.Next == "" {
				break
			}
			after = p.Next
		}
		require.Equal(t, ids, got, "paging by time returns every entry once, newest first")

		status, body, _ := f.do(t, "GET", "/api/logs?errors=true&timer="+keyPath(key), tok, "")
		require.Equal(t, http.StatusOK, status)
		p := decode[console.LogPage](t, body)
		require.Len(t, p.Items, 1)
		e := p.Items[0]
		require.Equal(t, "log-c", e.ExecutionID)

		status, body, _ = f.do(t, "GET", entryPath(key)+"&ref="+url.QueryEscape(e.Ref), tok, "")
		require.Equal(t, http.StatusOK, status, body)
		require.Equal(t, "http 502: bad gateway", decode[console.LogEntry](t, body).Error)
		status, _, _ = f.do(t, "GET", entryPath(key)+"&ref=2026-01-01T00:00:00.000Z%23nope", tok, "")
		require.Equal(t, http.StatusNotFound, status)
		status, _, _ = f.do(t, "GET", entryPath(key)+"&ref=garbage", tok, "")
		require.Equal(t, http.StatusBadRequest, status)
		status, _, _ = f.do(t, "GET", "/api/logs?after=garbage", tok, "")
		require.Equal(t, http.StatusBadRequest, status)
		status, _, _ = f.do(t, "GET", "/api/logs?limit=100000", tok, "")
		require.Equal(t, http.StatusBadRequest, status)

		var all []string // the every-app log is paged (others' large entries among them)
		for _, e := range slices.Concat(pagesOf[console.LogEntry](t, f, "/api/logs?limit=500")...) {
			all = append(all, e.ExecutionID)
		}
		require.Subset(t, all, ids, "the all-timers log has them too")
	})

	t.Run("LogsByTenant", func(t *testing.T) {
		t.Parallel()
		tenant := f.prefix + "-acme"
		a := f.create(t, "PerTenant", "every 1h", func(in *timer.Instance) { in.Tenant = tenant })
		b := f.create(t, "PerTenant", "every 1h", func(in *timer.Instance) { in.Tenant = f.prefix + "-globex" })
		at := time.Now().UTC().Truncate(time.Millisecond).Add(-30 * time.Minute)
		f.logEntry(t, timer.Key{Timer: a.Timer, Tenant: tenant}, "tenant-a", at, timer.OutcomeSuccess, "")
		f.logEntry(t, timer.Key{Timer: b.Timer, Tenant: f.prefix + "-globex"}, "tenant-b", at, timer.OutcomeSuccess, "")
		status, body, _ := f.do(t, "GET", "/api/logs?limit=500&tenant="+tenant, tok, "")
		require.Equal(t, http.StatusOK, status, body)
		var got []string
		for _, e := range decode[console.LogPage](t, body).Items {
			got = append(got, e.ExecutionID)
		}
		require.Equal(t, []string{"tenant-a"}, got, "only that tenant's executions")
		status, _, _ = f.do(t, "GET", "/api/logs?tenant=no%20spaces", tok, "")
		require.Equal(t, http.StatusBadRequest, status)
		status, _, _ = f.do(t, "GET", "/api/logs?tenant="+tenant+"&timer="+url.QueryEscape(b.Timer+"@"+f.prefix+"-globex"), tok, "")
		require.Equal(t, http.StatusBadRequest, status, "a timer of another tenant")
	})

	t.Run("Health", func(t *testing.T) {
		t.Parallel()
		due := f.create(t, "HealthDue", "every 1h", func(in *timer.Instance) { in.NextRun = time.Now().UTC().Add(-time.Minute).Truncate(time.Millisecond) })
		status, body, _ := f.do(t, "GET", "/api/health", tok, "")
		require.Equal(t, http.StatusOK, status, body)
		h := decode[console.Health](t, body)
		require.Len(t, h.Queues, 5, "P1..P4 and the DLQ")
		require.Empty(t, h.QueuesError)
		require.Equal(t, [4]int{4, 3, 2, 2}, h.Processors.Capacity)
		var row *console.HealthRow
		for i := range h.Order {
			if h.Order[i].Key == due.String() {
				row = &h.Order[i]
			}
		}
		require.NotNil(t, row, "scheduled timers are listed")
		require.True(t, row.Due)
		require.GreaterOrEqual(t, row.WaitingMs, int64(59_000))
	})

	t.Run("SchedulePreview", func(t *testing.T) {
		t.Parallel()
		status, body, _ := f.do(t, "GET", "/api/schedule/preview?schedule=02:00+Mon&timezone=Europe/Lisbon&n=3", tok, "")
		require.Equal(t, http.StatusOK, status, body)
		p := decode[console.Preview](t, body)
		require.Len(t, p.Next, 3)
		for _, at := range p.Next {
			lis, _ := time.LoadLocation("Europe/Lisbon")
			require.Equal(t, time.Monday, at.In(lis).Weekday())
			require.Equal(t, 2, at.In(lis).Hour())
		}
		// 2027-03-14 02:30 does not exist in New York: shift runs it at 03:30 EDT, skip not that day.
		for dst, want := range map[string]string{"": "03:30", "shift": "03:30", "skip": ""} {
			status, body, _ = f.do(t, "GET", "/api/schedule/preview?schedule=0+30+2+14+3+?+2027&timezone=America/New_York&dst="+dst, tok, "")
			require.Equal(t, http.StatusOK, status, body)
			p := decode[console.Preview](t, body)
			require.Equal(t, map[string]string{"": "shift"}[dst]+dst, p.DST)
			if want == "" {
				require.Empty(t, p.Next, "skip: the only date is in the gap")
				continue
			}
			require.Len(t, p.Next, 1)
			ny, _ := time.LoadLocation("America/New_York")
			require.Equal(t, want, p.Next[0].In(ny).Format("15:04"))
		}
		status, body, _ = f.do(t, "GET", "/api/schedule/preview?schedule=02:30&dst=maybe", tok, "")
		require.Equal(t, http.StatusBadRequest, status)
		require.Contains(t, body, `dst \"maybe\"`)
		status, body, _ = f.do(t, "GET", "/api/schedule/preview?schedule=02:00+Moon", tok, "")
		require.Equal(t, http.StatusBadRequest, status)
		require.Contains(t, body, "Moon")
		status, _, _ = f.do(t, "GET", "/api/schedule/preview?schedule=every+1m&timezone=Mars/Base", tok, "")
		require.Equal(t, http.StatusBadRequest, status)
		status, _, _ = f.do(t, "GET", "/api/schedule/preview?schedule=every+1m&n=0", tok, "")
		require.Equal(t, http.StatusBadRequest, status)
		status, body, _ = f.do(t, "GET", "/api/schedule/preview?schedule=When+Published", tok, "")
		require.Equal(t, http.StatusOK, status)
		require.Empty(t, decode[console.Preview](t, body).Next)
		// H is resolved for the timer named, and refused without one.
		status, body, _ = f.do(t, "GET", "/api/schedule/preview?schedule=H+H(2-4)+*+*+*&n=2", tok, "")
		require.Equal(t, http.StatusBadRequest, status)
		require.Contains(t, body, "picked per timer")
		status, body, _ = f.do(t, "GET", "/api/schedule/preview?schedule=H+H(2-4)+*+*+*&n=2&timer=billing:Nightly", tok, "")
		require.Equal(t, http.StatusOK, status, body)
		sp := decode[console.Preview](t, body)
		require.Equal(t, "billing:Nightly", sp.Timer)
		require.Len(t, sp.Next, 2)
		require.Equal(t, 36, sp.Next[0].Minute(), "billing:Nightly's pinned H vector")
		require.Equal(t, 4, sp.Next[0].UTC().Hour())
		require.Equal(t, 24*time.Hour, sp.Next[1].Sub(sp.Next[0]))
		status, body, _ = f.do(t, "GET", "/api/schedule/preview?schedule=H+*+*+*+*&timer=bad+name", tok, "")
		require.Equal(t, http.StatusBadRequest, status)
		require.Contains(t, body, "timer")
	})

	t.Run("UnknownRoute", func(t *testing.T) {
		t.Parallel()
		status, body, _ := f.do(t, "GET", "/api/nothing/here", tok, "")
		require.Equal(t, http.StatusNotFound, status)
		require.Contains(t, body, "no such API route")
	})
}

// sentTo reports whether a firing for key is on the priority queue (index 0 = P1). It
// receives with a short visibility timeout, so the messages return to the queue at once.
func sentTo(t *testing.T, f fixture, prio int, key timer.Key) bool {
	t.Helper()
	cfg, _ := testenv.Stack(t)
	q := sqs.NewFromConfig(cfg)
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		out, err := q.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{
			QueueUrl: aws.String(f.app.Config.Queues[prio]), MaxNumberOfMessages: 10, VisibilityTimeout: 1, WaitTimeSeconds: 1,
		})
		require.NoError(t, err)
		for _, m := range out.Messages {
			if strings.Contains(aws.ToString(m.Body), `"`+key.Timer+`"`) {
				return true
			}
		}
	}
	return false
}
