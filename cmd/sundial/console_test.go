package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/console"
	"github.com/sundialhq/sundial/internal/view"
)

// TestConsoleCommands runs `sundial up` with its console and drives the API, the login link
// and the Service Center commands of the CLI: health, timers edit (validated before saving),
// timers run-now|activate|deactivate, and a sync that keeps an operator's edit.
func TestConsoleCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("runs sundial up against the emulator")
	}
	t.Parallel()
	actions := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	t.Cleanup(actions.Close)
	dir := t.TempDir()
	manifestPath := writeManifestIn(t, dir, fmt.Sprintf(`timers:
  - {name: Tick, schedule: "every 1s", priority: 1, timeout: 5s, action: {http: {url: "%[1]s/ok"}}}
  - {name: Daily, schedule: "02:00 Mon", timezone: Europe/Lisbon, action: {http: {url: "%[1]s/ok"}}}
`, actions.URL))
	p := startPlatform(t, dir, manifestPath, []string{"SUNDIAL_CONSOLE_TOKEN="}, "--console", "127.0.0.1:0")
	up, printed := p.Cmd, p.Banner
	endpoint, base, login, token := printed["emulator"], strings.TrimSuffix(printed["console"], "/"), printed["login"], printed["token"]
	run := func(args ...string) (string, string, int) {
		return cli(t, dir, append(args, "--endpoint", endpoint)...)
	}

	t.Run("ConsoleOnLoopbackWithAGeneratedToken", func(t *testing.T) {
		u, err := url.Parse(base)
		require.NoError(t, err)
		require.Equal(t, "127.0.0.1", u.Hostname())
		require.Len(t, token, 52)
		require.True(t, strings.HasPrefix(login, base+"/login?code="), login)

		req, _ := http.NewRequest("GET", base+"/api/timers", nil)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err = http.DefaultClient.Do(req)
		require.NoError(t, err)
		var page console.TimerPage
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&page))
		resp.Body.Close()
		require.Len(t, page.Items, 2)

		noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err = noFollow.Get(login)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusSeeOther, resp.StatusCode)
		require.Contains(t, resp.Header.Get("Set-Cookie"), "sundial_session=")
	})

	t.Run("Health", func(t *testing.T) {
		require.Eventually(t, func() bool {
			out, _, code := run("health")
			return code == 0 && strings.HasPrefix(out, "health      ok\nfetcher     healthy")
		}, 20*time.Second, 500*time.Millisecond)
		out, stderr, code := run("health", "--json")
		require.Equal(t, 0, code, stderr)
		var h console.Health
		require.NoError(t, json.Unmarshal([]byte(out), &h))
		require.Equal(t, 2, h.Counts.Timers)
		require.Len(t, h.Queues, 5)
		require.Equal(t, [4]int{4, 3, 2, 2}, h.Processors.Capacity)
		require.Eventually(t, func() bool { // Tick runs every second: the last hour counts its runs
			out, _, _ := run("health", "--json")
			var h console.Health
			return json.Unmarshal([]byte(out), &h) == nil && h.LastHour.ByOutcome["success"] > 0 && h.LastHour.Firings >= h.LastHour.ByOutcome["success"]
		}, 20*time.Second, 500*time.Millisecond)
		out, _, _ = run("health")
		require.Regexp(t, `(?m)^last hour   \d+\+? firings: \d+ success, 0 error`, out)
		_, _, code = run("health", "extra")
		require.Equal(t, 2, code)
	})

	t.Run("EditValidatesBeforeSaving", func(t *testing.T) {
		_, stderr, code := run("timers", "edit", "Daily", "--schedule", "25:00", "--priority", "9")
		require.Equal(t, 2, code)
		require.Contains(t, stderr, "hour 25 out of range")
		require.Contains(t, stderr, "priority: 9 is out of range")
		_, stderr, code = run("timers", "edit", "Daily")
		require.Equal(t, 2, code)
		require.Contains(t, stderr, "nothing to change")
		_, _, code = run("timers", "edit", "Nope", "--priority", "1")
		require.Equal(t, 3, code)
		_, stderr, code = run("timers", "edit", "Daily", "--dst", "later")
		require.Equal(t, 2, code)
		require.Contains(t, stderr, `dst "later": expected "shift"`)
		show, _, _ := run("timers", "show", "Daily", "--json")
		require.Contains(t, show, `"schedule": "02:00 Mon"`, "nothing was saved")
		require.Contains(t, show, `"dst": "shift"`)

		out, stderr, code := run("timers", "edit", "Daily", "--schedule", "every 5m", "--timeout", "90s", "--priority", "1")
		require.Equal(t, 0, code, stderr)
		require.Contains(t, out, `Daily saved: schedule "every 5m", timeout 1m30s, priority 1, dst shift, misfireAfter 1m0s (defaults: "02:00 Mon", 14m50s, 3, shift)`)
		require.Contains(t, out, "next runs (Europe/Lisbon):")
		out, stderr, code = run("timers", "edit", "Daily", "--priority", "2", "--json")
		require.Equal(t, 0, code, stderr)
		var d console.TimerDetail
		require.NoError(t, json.Unmarshal([]byte(out), &d))
		require.True(t, d.Edited)
		require.Equal(t, "every 5m", d.Schedule)
		require.Equal(t, "02:00 Mon", d.DefaultSchedule)
		require.Equal(t, cliActor(), d.EditedBy)
		require.Len(t, d.NextRuns, 10)

		out, stderr, code = run("timers", "edit", "Daily", "--dst", "skip")
		require.Equal(t, 0, code, stderr)
		require.Contains(t, out, `priority 2, dst skip, misfireAfter 1m0s (defaults: "02:00 Mon", 14m50s, 3, shift)`)
	})

	t.Run("SyncKeepsTheEdit", func(t *testing.T) {
		_, stderr, code := run("sync", manifestPath)
		require.Equal(t, 0, code, stderr)
		show, _, _ := run("timers", "show", "Daily", "--json")
		var v view.Timer
		require.NoError(t, json.Unmarshal([]byte(show), &v))
		require.Equal(t, "every 5m", v.Schedule)
		require.Equal(t, "skip", v.DST)
		out, _, code := run("timers", "edit", "Daily", "--reset")
		require.Equal(t, 0, code)
		require.Contains(t, out, `schedule "02:00 Mon"`)
		require.Contains(t, out, `dst shift`)
	})

	t.Run("InvokeTheAPIFunction", func(t *testing.T) {
		event, err := filepath.Abs("../../functions/api/event.json")
		require.NoError(t, err)
		out, stderr, code := run("invoke", "api", "--event", event)
		require.Equal(t, 0, code, stderr)
		var resp struct {
			StatusCode int    `json:"statusCode"`
			Body       string `json:"body"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &resp))
		require.Equal(t, http.StatusOK, resp.StatusCode, resp.Body)
		var page console.TimerPage // the sample is GET /api/timers
		require.NoError(t, json.Unmarshal([]byte(resp.Body), &page))
		var keys []string
		for _, r := range page.Items {
			keys = append(keys, r.Key)
		}
		require.ElementsMatch(t, []string{"Tick", "Daily"}, keys)

		body, err := os.ReadFile(event)
		require.NoError(t, err)
		var ev map[string]any
		require.NoError(t, json.Unmarshal(body, &ev))
		delete(ev["requestContext"].(map[string]any), "authorizer")
		unsigned := filepath.Join(dir, "unsigned.json")
		b, _ := json.Marshal(ev)
		require.NoError(t, os.WriteFile(unsigned, b, 0o644))
		out, stderr, code = run("invoke", "api", "--event", unsigned)
		require.Equal(t, 0, code, stderr)
		require.NoError(t, json.Unmarshal([]byte(out), &resp))
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "no IAM caller, no answer")
	})

	t.Run("TimersSubcommandsOperate", func(t *testing.T) {
		out, stderr, code := run("timers", "deactivate", "Tick")
		require.Equal(t, 0, code, stderr)
		require.Contains(t, out, "Tick deactivated")
		out, stderr, code = run("timers", "run-now", "Tick")
		require.Equal(t, 0, code, stderr)
		require.Contains(t, out, "Tick")
		_, _, code = run("timers", "frobnicate", "Tick")
		require.Equal(t, 2, code)
	})

	interrupt(t, up)
}
