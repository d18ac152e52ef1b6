package console_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/local"
	"github.com/sundialhq/sundial/internal/action"
	"github.com/sundialhq/sundial/internal/console"
	"github.com/sundialhq/sundial/internal/testenv"
	"github.com/sundialhq/sundial/internal/timer"
)

// TestBrowser drives the console in headless Chromium against a running local platform
// (fetch, processors and recovery on the emulator, actions answered in-process): log in
// with the link, Environment Health, Run Now until the log shows the run, deactivate until
// nothing more runs, an invalid and a valid schedule edit, hostile values. Screenshots go
// to test-artifacts/console/.
func TestBrowser(t *testing.T) {
	chromium := chromiumPath(t)
	if testing.Short() {
		t.Skip("browser test: runs a local platform and Chromium for about a minute")
	}
	bt := startBrowserTest(t, chromium)

	t.Run("LogInWithTheLink", func(t *testing.T) {
		bt.navigate(t, bt.srv.LoginLink(bt.ts.URL))
		require.Equal(t, bt.ts.URL+"/", bt.location(t), "the link sets the session and opens Environment Health")
		require.Equal(t, "Environment Health", bt.text(t, "h1"))
		bt.navigate(t, bt.srv.LoginLink(bt.ts.URL)) // a second, fresh link works too; the used one would not
	})

	t.Run("EnvironmentHealth", func(t *testing.T) {
		bt.eventually(t, 30*time.Second, func() bool {
			bt.navigate(t, bt.ts.URL+"/")
			// The every-1s Ticker is listed in the execution order, or under "Running now": a
			// firing is claimed as soon as its message arrives (up to a second before its
			// instant) and held until the instant, so it is running most of the time.
			return bt.text(t, "#fetcher .status") == "healthy" && bt.count(t, "#order tbody tr td a") >= 2 &&
				bt.count(t, "#order tbody tr td a")+bt.count(t, "table#running tbody tr td a") >= 3
		}, "the fetcher ticks and the scheduled timers are listed")
		if order := bt.text(t, "#order"); strings.Contains(order, bt.name("Ticker")) {
			require.Contains(t, order, "1 highest")
		} else {
			require.Contains(t, bt.text(t, "#running"), bt.name("Ticker"), "the Ticker is scheduled or running")
		}
		require.Contains(t, bt.text(t, "#order"), "3 normal")
		require.Contains(t, bt.text(t, "#queues"), "DLQ")
		require.Contains(t, bt.text(t, "#processors"), "P1")
		bt.shot(t, "01-environment-health")
	})

	t.Run("RunNowAndSeeTheLogEntry", func(t *testing.T) {
		manual := bt.name("Manual")
		bt.navigate(t, bt.ts.URL+"/timers/"+manual)
		require.Contains(t, bt.text(t, "#next-runs"), "no next run", "When Published: it has no periodic runs")
		// It ran once for the deploy (the platform's start publishes the manifest).
		bt.eventually(t, 20*time.Second, func() bool {
			bt.navigate(t, bt.ts.URL+"/logs?timer="+manual)
			return bt.count(t, "#log tbody tr[data-timer]") == 1
		}, "the When Published timer ran once for the deploy")
		require.Equal(t, 1, bt.inv.Calls(manual))
		bt.navigate(t, bt.ts.URL+"/timers/"+manual)
		bt.submit(t, "#run-now")
		require.Contains(t, bt.text(t, "#flash"), "firing sent")
		bt.eventually(t, 20*time.Second, func() bool {
			bt.navigate(t, bt.ts.URL+"/logs?timer="+manual)
			return bt.count(t, "#log tbody tr[data-timer]") == 2
		}, "the Run Now execution appears in the timers log")
		require.Contains(t, bt.text(t, "#log tbody tr"), "success")
		require.Equal(t, 2, bt.inv.Calls(manual), "Run Now ran it exactly once more")
		bt.shot(t, "02-run-now-log-entry")
	})

	t.Run("DeactivateStopsScheduling", func(t *testing.T) {
		ticker := bt.name("Ticker")
		bt.eventually(t, 20*time.Second, func() bool { return bt.inv.Calls(ticker) >= 2 }, "Ticker runs every second")
		bt.navigate(t, bt.ts.URL+"/timers/"+ticker)
		bt.submit(t, "#deactivate")
		require.Contains(t, bt.text(t, "#flash"), "deactivated")
		require.Equal(t, "inactive", bt.text(t, "#state"))
		require.Contains(t, bt.text(t, "#next-run"), "not scheduled")
		// An execution claimed before the click may still run; once the Ticker is idle, none can
		// start.
		bt.eventually(t, 20*time.Second, func() bool { return bt.idle(t, ticker) }, "the Ticker is idle")
		calls := bt.inv.Calls(ticker)
		require.NoError(t, bt.p.Drained(bt.ctx), "the log writer has written what ended so far")
		bt.navigate(t, bt.ts.URL+"/logs?timer="+ticker)
		newest := bt.text(t, "#log tbody tr td")
		// The platform fires on: the Pulse (every 1 s) runs three more times, the Ticker not.
		pulse := bt.inv.Calls(bt.name("Pulse"))
		bt.eventually(t, 20*time.Second, func() bool { return bt.inv.Calls(bt.name("Pulse")) >= pulse+3 }, "the Pulse runs on")
		require.Equal(t, calls, bt.inv.Calls(ticker), "a deactivated timer is not fetched")
		require.NoError(t, bt.p.Drained(bt.ctx))
		bt.navigate(t, bt.ts.URL+"/logs?timer="+ticker)
		require.Equal(t, newest, bt.text(t, "#log tbody tr td"), "no new log entry")
		bt.navigate(t, bt.ts.URL+"/timers")
		require.Contains(t, bt.text(t, `tr[data-timer="`+ticker+`"]`), "not scheduled")
		bt.navigate(t, bt.ts.URL+"/timers/"+ticker)
		bt.shot(t, "03-deactivated")
	})

	t.Run("StopARunningExecution", func(t *testing.T) {
		hang := bt.name("Hang")
		// Its When Published run hangs until stopped (browserInvoker).
		bt.eventually(t, 20*time.Second, func() bool { return bt.inv.Calls(hang) == 1 && !bt.idle(t, hang) }, "Hang runs")
		bt.navigate(t, bt.ts.URL+"/timers/"+hang)
		bt.submit(t, "#stop")
		require.Contains(t, bt.text(t, "#flash"), "stop requested")
		bt.eventually(t, 10*time.Second, func() bool { return bt.idle(t, hang) }, "the stopped execution ended within seconds")
		require.NoError(t, bt.p.Drained(bt.ctx))
		bt.navigate(t, bt.ts.URL+"/logs?timer="+hang)
		require.Contains(t, bt.text(t, "#log tbody tr"), "stopped")
		bt.navigate(t, bt.ts.URL+"/timers/"+hang)
		require.Equal(t, 0, bt.count(t, "#stop"), "nothing runs: no Stop")
		bt.shot(t, "03b-stopped")
	})

	t.Run("RunContextParametersOutputAndSkippedInstants", func(t *testing.T) {
		report := bt.name("Report")
		// Its When Published run answered a summary, a counter and a state.
		bt.eventually(t, 20*time.Second, func() bool { return bt.inv.Calls(report) == 1 && bt.idle(t, report) }, "Report ran once")
		require.Equal(t, map[string]any{"region": "eu", "rows": int64(10)}, bt.act.reportParams()[0], "a scheduled run gets the defaults")
		bt.navigate(t, bt.ts.URL+"/timers/"+report)
		require.Contains(t, bt.text(t, "#run-state"), `"cursor":42`, "the state handed to the next run")
		// Run Now with parameters: refused per field (rows over 64 bits), then accepted.
		bt.typeInto(t, "#param-rows", "99999999999999999999")
		bt.submit(t, "#run-now-params")
		require.Contains(t, bt.text(t, "body"), "rows", "the refusal names the field")
		require.Equal(t, 1, bt.inv.Calls(report), "nothing ran")
		bt.navigate(t, bt.ts.URL+"/timers/"+report)
		_, err := chromedp.Run(bt.ctx, chromedp.SetValue(`#param-region`, "us"))
		require.NoError(t, err)
		bt.typeInto(t, "#param-rows", "1200")
		bt.submit(t, "#run-now-params")
		require.Contains(t, bt.text(t, "#flash"), "firing sent")
		bt.eventually(t, 20*time.Second, func() bool { return bt.inv.Calls(report) == 2 && bt.idle(t, report) }, "the Run Now ran")
		require.Equal(t, map[string]any{"region": "us", "rows": int64(1200)}, bt.act.reportParams()[1], "the form's overrides are in the payload")
		require.NoError(t, bt.p.Drained(bt.ctx))
		// Its log entry: the overrides and what the run did.
		bt.navigate(t, bt.ts.URL+"/logs?timer="+report)
		href, err := chromedp.Run(bt.ctx, chromedp.Evaluate[string](`document.querySelector("#log tbody tr[data-timer] td.t a").href`))
		require.NoError(t, err)
		bt.navigate(t, href)
		require.Contains(t, bt.text(t, "#entry-parameters"), "us")
		require.Contains(t, bt.text(t, "#entry-parameters"), "1200")
		require.Equal(t, "1200 rows loaded", bt.text(t, "#entry-summary"))
		require.Contains(t, bt.text(t, "#entry-counters"), "rows")
		bt.shot(t, "03c-run-now-parameters-entry")
		// A run that outlasts its every-1s period passes instants: the timer page counts them.
		slow := bt.name("Slow")
		bt.eventually(t, 30*time.Second, func() bool {
			bt.navigate(t, bt.ts.URL+"/timers/"+slow)
			return strings.Contains(bt.text(t, "#skipped"), "skipped")
		}, "the timer page shows the instants skipped while Slow ran")
		require.Contains(t, bt.text(t, "#overlap"), "skip")
		bt.shot(t, "03d-skipped-instants")
	})

	t.Run("EditInvalidThenValidSchedule", func(t *testing.T) {
		editable := bt.name("Editable")
		bt.navigate(t, bt.ts.URL+"/timers/"+editable+"/edit")
		bt.typeInto(t, "#schedule", "25:00")
		bt.eventually(t, 5*time.Second, func() bool {
			return strings.Contains(bt.text(t, "#edit-error"), "hour 25 out of range")
		}, "the live preview reports the error while typing")
		require.Zero(t, bt.count(t, "#preview li"))
		bt.shot(t, "04-edit-invalid-live")
		bt.submit(t, "#save")
		require.Contains(t, bt.text(t, "#edit-error"), "hour 25 out of range", "saving refuses it")
		require.Equal(t, "25:00", bt.value(t, "#schedule"), "what was typed is kept")
		bt.shot(t, "05-edit-invalid-saved")

		bt.typeInto(t, "#schedule", "every 5m")
		bt.eventually(t, 5*time.Second, func() bool {
			return bt.count(t, "#preview li") == 10 && bt.text(t, "#edit-error") == ""
		}, "the preview shows the next 10 runs before saving")
		bt.shot(t, "06-edit-valid-preview")
		bt.submit(t, "#preview-button") // the preview without JavaScript: the server renders it
		require.Equal(t, 10, bt.count(t, "#preview li"))
		require.Equal(t, "every 5m", bt.value(t, "#schedule"))
		bt.submit(t, "#save")
		require.Equal(t, bt.ts.URL+"/timers/"+editable, bt.location(t))
		require.Contains(t, bt.text(t, "#flash"), "Saved")
		require.Equal(t, "every 5m", bt.text(t, "#schedule"))
		require.Contains(t, bt.text(t, "#facts"), "default every 15m")
		bt.shot(t, "07-edit-saved")
	})

	// Timer names are validated to [A-Za-z0-9_-], so hostile text is tried where it can enter:
	// a property value and a schedule typed into the edit form.
	t.Run("HostileValuesStayText", func(t *testing.T) {
		hostile := bt.name("Hostile")
		bt.navigate(t, bt.ts.URL+"/timers/"+hostile)
		require.Contains(t, bt.text(t, "#properties"), hostileProperty)
		require.False(t, bt.eval(t, `window.__xss !== undefined`), "no injected script ran")
		bt.shot(t, "08-hostile-property")
		bt.navigate(t, bt.ts.URL+"/timers/"+hostile+"/edit")
		bt.typeInto(t, "#schedule", `<img src=x onerror="window.__xss=3">`)
		bt.eventually(t, 5*time.Second, func() bool {
			return strings.Contains(bt.text(t, "#edit-error"), `schedule "<img src=x onerror=`)
		}, "the bad schedule is quoted as text")
		bt.submit(t, "#save")
		require.Contains(t, bt.text(t, "#edit-error"), "<img src=x")
		require.False(t, bt.eval(t, `window.__xss !== undefined`))
		bt.shot(t, "09-hostile-schedule")
	})

	// At 1,280 px the Timers log and a timer's page fit the window: long keys, node names
	// and errors wrap or are clipped (the entry page has them whole).
	t.Run("LogFitsA1280Window", func(t *testing.T) {
		key := timer.Key{App: "billing-and-invoicing", Timer: bt.name("TenantMonthlyReportGeneration"), Tenant: "acme-corporation-europe-west"}
		started := time.Now().UTC().Add(-time.Minute).Truncate(time.Millisecond)
		for i, outcome := range []timer.Outcome{timer.OutcomeError, timer.OutcomeSuccess} {
			require.NoError(t, bt.p.App.Store.PutExecution(bt.ctx, timer.Execution{Key: key, ExecutionID: fmt.Sprintf("wide-%d", i),
				ScheduledAt: started.Add(-time.Hour), ShouldHaveRunAt: started.Add(-time.Second), StartedAt: started.Add(time.Duration(i) * time.Second),
				Duration: 1500 * time.Millisecond, ExecutedBy: "ip-172-31-44-120.eu-west-1.compute.internal/processor-p3-7", Attempt: 3,
				Outcome: outcome, GaveUp: true, NextRun: started.Add(time.Hour),
				Error: "HTTP 503 from https://billing.internal.example.com/api/v2/tenants/acme-corporation-europe-west/reports: " + strings.Repeat("upstream unavailable ", 12)}))
		}
		require.NoError(t, chromedp.Do(bt.ctx, chromedp.EmulateViewport(1280, 900)))
		t.Cleanup(func() { _ = chromedp.Do(bt.ctx, chromedp.EmulateViewport(1400, 1000)) })
		fits := func(what string) {
			t.Helper()
			width, err := chromedp.Run(bt.ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`))
			require.NoError(t, err)
			if width > 1280 {
				bt.shot(t, "failed-too-wide")
			}
			require.LessOrEqual(t, width, 1280, "%s is %d px wide in a 1,280 px window", what, width)
		}
		for _, path := range []string{"/logs", "/logs?app=billing-and-invoicing", "/timers", "/timers/" + bt.name("Ticker"), "/"} {
			bt.navigate(t, bt.ts.URL+path)
			require.Positive(t, bt.count(t, "main"), path)
			fits(path)
		}
		// The clipped error's link opens the entry, where the error is whole.
		bt.navigate(t, bt.ts.URL+"/logs?app=billing-and-invoicing&errors=on")
		bt.shot(t, "10-log-at-1280")
		_, err := chromedp.Run(bt.ctx, chromedp.WaitEvent(page.LoadEventFired, nil, chromedp.Click(chromedp.CSS(`#log td.clip a`))))
		require.NoError(t, err)
		require.Contains(t, bt.text(t, "#entry-error"), strings.Repeat("upstream unavailable ", 12)[:200])
		fits("the log entry")
		bt.navigate(t, bt.ts.URL+"/logs?app=billing-and-invoicing")
		require.Contains(t, bt.text(t, "#log"), key.String(), "the whole key is shown, wrapped")
		// No row of the log takes three lines: the times wrap once (date, time), the key
		// at most once, and "by" (a node name) stays on one line, clipped at its end.
		rows, err := chromedp.Run(bt.ctx, chromedp.Evaluate[[]float64](`Array.from(document.querySelectorAll("#log tbody tr")).map(r => r.getBoundingClientRect().height)`))
		require.NoError(t, err)
		line, err := chromedp.Run(bt.ctx, chromedp.Evaluate[float64](`parseFloat(getComputedStyle(document.querySelector("#log td")).lineHeight)`))
		require.NoError(t, err)
		require.NotEmpty(t, rows)
		for _, h := range rows {
			require.Less(t, h, 2.6*line+12, "a log row is %.0f px high: over two lines of %.1f px", h, line)
		}
		by, err := chromedp.Run(bt.ctx, chromedp.Evaluate[[]float64](`Array.from(document.querySelectorAll("#log td.by span")).map(s => s.getBoundingClientRect().height)`))
		require.NoError(t, err)
		for _, h := range by {
			require.Less(t, h, 1.5*line, "by is one line")
		}
		require.Equal(t, "ip-172-31-44-120.eu-west-1.compute.internal/processor-p3-7",
			bt.attr(t, "#log td.by span", "title"), "the whole node name is its title")
		// The App filter is a list of the apps, this one chosen.
		require.Equal(t, "billing-and-invoicing", bt.value(t, "select[name=app]"))
		require.Positive(t, bt.count(t, `select[name=app] option[value="billing-and-invoicing"]`))
		bt.shot(t, "10b-log-at-1280-fits")
	})

	// Environment Health, a timer's page and the log update themselves: a mark set in the
	// page survives (no reload) while what they show moves on.
	t.Run("PagesMoveWithoutReload", func(t *testing.T) {
		pulse := bt.name("Pulse")
		marked := func() bool { return bt.eval(t, `window.__mark === 1`) }
		updates := func() int {
			n, err := chromedp.Run(bt.ctx, chromedp.Evaluate[int](`Number(document.body.dataset.liveUpdates || 0)`))
			require.NoError(t, err)
			return n
		}

		bt.navigate(t, bt.ts.URL+"/")
		require.True(t, bt.eval(t, `(window.__mark = 1) === 1`))
		before := bt.text(t, "#last-hour")
		bt.eventually(t, 30*time.Second, func() bool { return bt.text(t, "#last-hour") != before && updates() > 0 },
			"Health's last hour moves without a reload (the Pulse fires every second)")
		require.True(t, marked(), "the page was not reloaded")
		require.Positive(t, bt.count(t, "#chart-firings svg rect.o-success"), "the firings chart has bars")
		require.Contains(t, bt.text(t, "[data-live-status]"), "updated")
		bt.shot(t, "11-health-live")

		bt.navigate(t, bt.ts.URL+"/logs?timer="+pulse)
		require.True(t, bt.eval(t, `(window.__mark = 1) === 1`))
		newest := bt.text(t, "#log tbody tr td")
		bt.eventually(t, 30*time.Second, func() bool { return bt.text(t, "#log tbody tr td") != newest },
			"the log shows the Pulse's newer executions without a reload")
		require.True(t, marked(), "the log page was not reloaded")

		// A backfill's progress on the timer's page: its count rises without a reload.
		bt.navigate(t, bt.ts.URL+"/timers/"+pulse)
		now := time.Now().UTC().Truncate(time.Second)
		bt.typeInto(t, "#backfill-form input[name=from]", now.Add(-3*time.Minute).Format(time.RFC3339))
		bt.typeInto(t, "#backfill-form input[name=to]", now.Add(-time.Minute).Format(time.RFC3339))
		bt.submit(t, "#backfill-start")
		require.Contains(t, bt.text(t, "#backfill"), "/121 done", "the backfill's 121 instants")
		require.True(t, bt.eval(t, `(window.__mark = 1) === 1`))
		first := bt.text(t, "#backfill")
		bt.shot(t, "12-backfill-started")
		bt.eventually(t, 60*time.Second, func() bool { return bt.text(t, "#backfill") != first && updates() > 0 },
			"the backfill's progress moves on the page by itself")
		require.True(t, marked(), "the timer page was not reloaded")
		require.Contains(t, bt.text(t, "#backfill"), "/121 done")
		bt.shot(t, "13-backfill-progress-live")
		if bt.count(t, "#backfill-cancel") > 0 {
			bt.submit(t, "#backfill-cancel")
		}
	})

	// Health's per-minute figures drawn from a known log: one app's executions written
	// straight into the log, two minutes apart, and the bars they make.
	t.Run("HealthChartsFromAKnownLog", func(t *testing.T) {
		app := "figures-" + strings.ToLower(bt.prefix)
		key := timer.Key{App: app, Timer: bt.name("Figures")}
		now := time.Now().UTC()
		m1 := now.Truncate(time.Minute).Add(-10 * time.Minute)
		m2 := m1.Add(2 * time.Minute)
		put := func(id string, start time.Time, o timer.Outcome, late, took time.Duration) {
			e := timer.Execution{Key: key, ExecutionID: id, ScheduledAt: start.Add(-late),
				ShouldHaveRunAt: start.Add(-late), StartedAt: start, Duration: took, ExecutedBy: "node-1", Attempt: 1, Outcome: o}
			if o == timer.OutcomeSuccess {
				e.Output = `{"sent":` + id[1:] + `,"note":"<b>kept</b>"}`
			}
			require.NoError(t, bt.p.App.Store.PutExecution(bt.ctx, e))
		}
		put("f1", m1.Add(5*time.Second), timer.OutcomeSuccess, 200*time.Millisecond, 40*time.Millisecond)
		put("f2", m1.Add(15*time.Second), timer.OutcomeSuccess, 400*time.Millisecond, 900*time.Millisecond)
		put("f3", m1.Add(25*time.Second), timer.OutcomeError, 1500*time.Millisecond, 300*time.Millisecond)
		put("f4", m2.Add(5*time.Second), timer.OutcomeMissed, 0, 0)
		bt.navigate(t, bt.ts.URL+"/?app="+app)
		titles := func(sel string) []string {
			v, err := chromedp.Run(bt.ctx, chromedp.Evaluate[[]string](fmt.Sprintf(
				`Array.from(new Set(Array.from(document.querySelectorAll(%q)).map(e => e.textContent)))`, sel)))
			require.NoError(t, err)
			return v
		}
		h1, h2 := m1.Format("15:04"), m2.Format("15:04")
		require.Equal(t, []string{h1 + ": 3 firings, 1 failed, 0 missed", h2 + ": 1 firings, 0 failed, 1 missed"}, titles("#chart-firings rect title"))
		require.Equal(t, 1, bt.count(t, "#chart-firings rect.o-success"), "minute 1: a success part")
		require.Equal(t, 1, bt.count(t, "#chart-firings rect.o-error"), "minute 1: a failed part")
		require.Equal(t, 1, bt.count(t, "#chart-firings rect.o-missed"))
		require.Equal(t, []string{h1 + ": lateness p95 1.5s, max 1.5s"}, titles("#chart-lateness rect title"), "the missed run has no lateness")
		// The success part of minute 1 is twice the failed part (2 of 3).
		ratio, err := chromedp.Run(bt.ctx, chromedp.Evaluate[float64](
			`document.querySelector("#chart-firings rect.o-success").getAttribute("height") / document.querySelector("#chart-firings rect.o-error").getAttribute("height")`))
		require.NoError(t, err)
		require.InDelta(t, 2, ratio, 0.01)
		require.Equal(t, app, bt.value(t, "select[name=app]"))
		bt.shot(t, "14-health-figures-known-log")

		// The tables sort by a column: the log by took, ascending then descending.
		bt.navigate(t, bt.ts.URL+"/logs?app="+app)
		took := func() string {
			v, err := chromedp.Run(bt.ctx, chromedp.Evaluate[string](
				`Array.from(document.querySelectorAll("#log tbody tr")).map(r => r.cells[7].dataset.sortValue).join(",")`))
			require.NoError(t, err)
			return v
		}
		require.Equal(t, "0,300,900,40", took(), "newest first")
		require.NoError(t, chromedp.Do(bt.ctx, chromedp.Click(chromedp.CSS(`#log thead th:nth-child(8)`))))
		require.Equal(t, "0,40,300,900", took())
		require.NoError(t, chromedp.Do(bt.ctx, chromedp.Click(chromedp.CSS(`#log thead th:nth-child(8)`))))
		require.Equal(t, "900,300,40,0", took())
		require.Equal(t, "descending", bt.attr(t, "#log thead th:nth-child(8)", "aria-sort"))
		require.Contains(t, bt.text(t, "#log"), `{"sent":2,"note":"<b>kept</b>"}`, "a success shows the start of the action's answer")
		bt.shot(t, "15-log-sorted")
		// The execution's page has the answer whole, as text.
		_, err = chromedp.Run(bt.ctx, chromedp.WaitEvent(page.LoadEventFired, nil, chromedp.Click(chromedp.CSS(`#log a.output`))))
		require.NoError(t, err)
		require.Contains(t, bt.text(t, "#entry-output"), `"note":"<b>kept</b>"}`)
		require.Zero(t, bt.count(t, "#entry-output b"), "the answer is text, not markup")
		bt.shot(t, "15b-entry-output")
	})

	// The calendar form is a grid of labelled fields with Save on its own row; the backfill
	// form's placeholders say the format (they are not values) and its Cancel stands apart.
	t.Run("CalendarAndBackfillForms", func(t *testing.T) {
		require.NoError(t, chromedp.Do(bt.ctx, chromedp.EmulateViewport(1280, 900)))
		t.Cleanup(func() { _ = chromedp.Do(bt.ctx, chromedp.EmulateViewport(1400, 1000)) })
		bt.navigate(t, bt.ts.URL+"/calendars")
		form := `#calendar-default-biz form`
		require.Positive(t, bt.count(t, form))
		require.True(t, bt.eval(t, fmt.Sprintf(`(() => {
			const f = document.querySelector(%q), b = f.querySelector("button").getBoundingClientRect();
			const fields = Array.from(f.querySelectorAll("textarea, input[name=weekdays]")).map(e => e.getBoundingClientRect());
			const labels = Array.from(f.querySelectorAll("label")).map(l => l.getBoundingClientRect());
			// every field below its label's text, Save below every field, nothing past the form
			return fields.every(r => b.top >= r.bottom) && labels.every(l => l.right <= f.getBoundingClientRect().right + 0.5) &&
				fields.every(r => r.width >= 200);
		})()`, form)), "the calendar form's fields are laid out in a grid, Save below them")
		require.Contains(t, bt.value(t, form+` input[name=weekdays]`), "sat")
		bt.shot(t, "16-calendar-form")

		bt.navigate(t, bt.ts.URL+"/timers/"+bt.name("Editable"))
		require.Equal(t, "YYYY-MM-DDThh:mm:ssZ", bt.attr(t, "#backfill-form input[name=from]", "placeholder"), "a placeholder that is not a value")
		require.True(t, bt.eval(t, `(() => { const i = document.querySelector("#backfill-form input[name=from]"); return i.scrollWidth <= i.clientWidth; })()`),
			"the placeholder fits its field")
		bt.shot(t, "17-backfill-form")
	})
}

// attr reads an attribute of the first element sel selects.
func (bt *browserTest) attr(t *testing.T, sel, name string) string {
	t.Helper()
	v, err := chromedp.Run(bt.ctx, chromedp.Evaluate[string](fmt.Sprintf(
		`(document.querySelector(%q) || {getAttribute: () => ""}).getAttribute(%q) || ""`, sel, name)))
	require.NoError(t, err, sel)
	return v
}

const hostileProperty = `<script>window.__xss=1</script><img src=x onerror="window.__xss=2">`

// browserTest is a local platform, a console on it and a Chromium tab.
type browserTest struct {
	ctx    context.Context
	p      *local.Platform
	ts     *httptest.Server
	srv    *console.Server
	inv    *testenv.Invoker
	act    *browserInvoker // inv, with the Hang, Report and Slow timers' answers
	prefix string
	dir    string // screenshots
}

func startBrowserTest(t *testing.T, chromium string) *browserTest {
	bt := &browserTest{inv: &testenv.Invoker{}, prefix: testenv.Unique(t), dir: artifactsDir(t)}
	bt.act = &browserInvoker{Invoker: bt.inv, hang: bt.name("Hang"), report: bt.name("Report"), slow: bt.name("Slow")}
	manifest := filepath.Join(t.TempDir(), "timers.yaml")
	require.NoError(t, os.WriteFile(manifest, []byte(fmt.Sprintf(`calendars:
  - {name: biz, weekdays: [sat, sun], dates: [2026-12-25, 2027-01-01], yearly: [05-01]}
timers:
  - {name: %[1]s-Payday, schedule: "09:00", calendar: biz, action: {http: {url: "http://127.0.0.1:9/x"}}}
  - {name: %[1]s-Manual, schedule: "When Published", action: {http: {url: "http://127.0.0.1:9/x"}}}
  - {name: %[1]s-Ticker, schedule: "every 1s", priority: 1, timeout: 5s, action: {http: {url: "http://127.0.0.1:9/x"}}}
  - {name: %[1]s-Pulse, schedule: "every 1s", priority: 1, timeout: 5s, action: {http: {url: "http://127.0.0.1:9/x"}}}
  - {name: %[1]s-Editable, schedule: "every 15m", action: {http: {url: "http://127.0.0.1:9/x"}}}
  - {name: %[1]s-Hang, schedule: "When Published", timeout: 60s, action: {http: {url: "http://127.0.0.1:9/x"}}}
  - name: %[1]s-Report
    schedule: "When Published"
    action: {http: {url: "http://127.0.0.1:9/x"}}
    parameters:
      - {name: region, type: enum, values: [eu, us], default: eu, description: where to load}
      - {name: rows, type: integer, required: true, default: 10}
  - {name: %[1]s-Slow, schedule: "every 1s", timeout: 5s, action: {http: {url: "http://127.0.0.1:9/x"}}}
  - name: %[1]s-Hostile
    schedule: "every 1h"
    action: {http: {url: "http://127.0.0.1:9/x"}}
    properties: {note: '%[2]s'}
`, bt.prefix, hostileProperty)), 0o644))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	quiet := slog.New(slog.NewJSONHandler(io.Discard, nil))
	p, err := local.Up(ctx, local.Options{
		Stack:    "console-browser-" + strings.ToLower(rand.Text()[:8]),
		Template: templatePath(t), Manifest: manifest, Out: io.Discard, Log: io.Discard,
		FunctionOptions: local.FunctionOptions{Tick: time.Second, Invoker: bt.act},
	})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, p.Stop()) })
	bt.p = p

	bt.srv, err = console.New(console.Options{Service: console.NewService(p.App, sqs.NewFromConfig(p.AWS), [4]int{4, 3, 2, 2}),
		Token: console.NewToken(), Log: quiet})
	require.NoError(t, err)
	bt.ts = httptest.NewServer(bt.srv.Handler())
	t.Cleanup(bt.ts.Close)

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium),
		chromedp.NoSandbox, chromedp.DisableGPU, chromedp.Flag("disable-background-networking", true),
		chromedp.WindowSize(1400, 1000))
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	bctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(cancelTab)
	bt.ctx = bctx
	require.NoError(t, chromedp.Do(bt.ctx, chromedp.Navigate("about:blank")), "start Chromium (%s)", chromium)
	return bt
}

func (bt *browserTest) name(s string) string { return bt.prefix + "-" + s }

// idle reports whether no execution holds the timer.
func (bt *browserTest) idle(t *testing.T, name string) bool {
	t.Helper()
	in, err := bt.p.App.Store.Get(context.Background(), timer.Key{Timer: name})
	require.NoError(t, err)
	return !in.Running()
}

func (bt *browserTest) navigate(t *testing.T, u string) {
	t.Helper()
	require.NoError(t, chromedp.Do(bt.ctx, chromedp.Navigate(u)), u)
}

// submit clicks a form's button and waits for the page it leads to.
func (bt *browserTest) submit(t *testing.T, sel string) {
	t.Helper()
	_, err := chromedp.Run(bt.ctx, chromedp.WaitEvent(page.LoadEventFired, nil, chromedp.Click(chromedp.CSS(sel))))
	require.NoError(t, err, sel)
}

func (bt *browserTest) typeInto(t *testing.T, sel, text string) {
	t.Helper()
	require.NoError(t, chromedp.Do(bt.ctx, chromedp.Clear(chromedp.CSS(sel)), chromedp.SendKeys(chromedp.CSS(sel), text)), sel)
}

func (bt *browserTest) text(t *testing.T, sel string) string {
	t.Helper()
	s, err := chromedp.Run(bt.ctx, chromedp.Evaluate[string](fmt.Sprintf(
		`(document.querySelector(%q) || {innerText: ""}).innerText.trim()`, sel)))
	require.NoError(t, err, sel)
	return s
}

func (bt *browserTest) value(t *testing.T, sel string) string {
	t.Helper()
	v, err := chromedp.Run(bt.ctx, chromedp.Value(chromedp.CSS(sel)))
	require.NoError(t, err, sel)
	return v
}

func (bt *browserTest) count(t *testing.T, sel string) int {
	t.Helper()
	n, err := chromedp.Run(bt.ctx, chromedp.Evaluate[int](fmt.Sprintf(`document.querySelectorAll(%q).length`, sel)))
	require.NoError(t, err, sel)
	return n
}

func (bt *browserTest) eval(t *testing.T, js string) bool {
	t.Helper()
	v, err := chromedp.Run(bt.ctx, chromedp.Evaluate[bool](js))
	require.NoError(t, err, js)
	return v
}

func (bt *browserTest) location(t *testing.T) string {
	t.Helper()
	loc, err := chromedp.Run(bt.ctx, chromedp.Location())
	require.NoError(t, err)
	return loc
}

// eventually polls cond; on failure it keeps a screenshot of what the browser showed.
func (bt *browserTest) eventually(t *testing.T, within time.Duration, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			bt.shot(t, "failed-"+strings.ReplaceAll(t.Name(), "/", "-"))
			t.Fatalf("not within %s: %s (page %s)", within, what, bt.location(t))
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func (bt *browserTest) shot(t *testing.T, name string) {
	t.Helper()
	png, err := chromedp.Run(bt.ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	path := filepath.Join(bt.dir, name+".png")
	require.NoError(t, os.WriteFile(path, png, 0o644))
	t.Logf("screenshot %s", path)
}

// countingInvoker answers every action with success and counts the calls per timer.
// chromiumPath finds Chromium. Without it the test skips, except in CI (CI=true), where a
// missing browser must fail the run rather than pass it silently.
func chromiumPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("SUNDIAL_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("CI=true but Chromium is not installed: apt-get install -y chromium (or set SUNDIAL_CHROMIUM)")
	}
	t.Skip("Chromium is not installed (apt-get install -y chromium); the browser test is skipped outside CI")
	return ""
}

func moduleRoot(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	require.True(t, ok)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

func templatePath(t *testing.T) string { return filepath.Join(moduleRoot(t), "template.yaml") }

// artifactsDir is test-artifacts/console at the module root (gitignored).
func artifactsDir(t *testing.T) string {
	dir := filepath.Join(moduleRoot(t), "test-artifacts", "console")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	return dir
}

// browserInvoker is the test's invoker, except for three timers: hang's calls wait until
// cancelled (a Stop), report's answer says what it did (a summary, a counter, a state for
// the next run) and records its payload's parameters, slow's take 2.5 s (its every-1s
// instants pass while it runs).
type browserInvoker struct {
	*testenv.Invoker
	hang, report, slow string

	mu     sync.Mutex
	params []map[string]any // report's payloads' parameters, in order
}

func (b *browserInvoker) Invoke(ctx context.Context, spec action.Spec, p action.Payload) (action.Result, error) {
	res, err := b.Invoker.Invoke(ctx, spec, p)
	switch p.Timer {
	case b.hang:
		<-ctx.Done()
		return action.Result{}, ctx.Err()
	case b.slow:
		select {
		case <-ctx.Done():
			return action.Result{}, ctx.Err()
		case <-time.After(2500 * time.Millisecond):
		}
	case b.report:
		b.mu.Lock()
		b.params = append(b.params, p.Parameters)
		b.mu.Unlock()
		state := `{"cursor":42}`
		res = action.Result{Status: 200, Output: `{"summary":"1200 rows loaded"}`, State: &state,
			Report: timer.Report{Summary: "1200 rows loaded", Counters: map[string]float64{"rows": 1200}}}
	}
	return res, err
}

// reportParams are the parameters of report's calls so far.
func (b *browserInvoker) reportParams() []map[string]any {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.params)
}
