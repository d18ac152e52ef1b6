package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// sundial check refuses a timeout the stack's processor cannot wait for without async, with
// the limit of the template this binary carries (or of its --param values); the repository's
// example manifests pass.
func TestCheckTimeoutAgainstTheProcessor(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "timers.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`timers:
  - {name: Nightly, schedule: "02:00", timeout: 20m, action: {http: {url: "http://127.0.0.1:9/x"}}}
  - {name: Archive, schedule: "03:00", timeout: 2h, async: true, action: {http: {url: "http://127.0.0.1:9/x"}}}
`), 0o600))
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"check", path}, &out, &errOut)
	require.NotEqual(t, 0, code)
	require.Contains(t, errOut.String(), `timers[0] "Nightly": timeout: timeout 20m exceeds what a processor can wait (14m50s): set async: true, or a timeout up to 14m50s`)
	require.NotContains(t, errOut.String(), "Archive")

	errOut.Reset()
	require.NotEqual(t, 0, run(context.Background(), []string{"check", "--param", "ProcessorTimeoutSeconds=60", "../../examples/orders.yaml"}, &out, &errOut))
	require.Contains(t, errOut.String(), "timeout 1m30s exceeds what a processor can wait (50s)")

	for _, m := range []string{"../../examples/timers.yaml", "../../examples/orders.yaml"} {
		out.Reset()
		errOut.Reset()
		require.Equal(t, 0, run(context.Background(), []string{"check", m}, &out, &errOut), errOut.String())
		require.Contains(t, out.String(), ": valid")
	}
}

// An app's manifest may name a calendar of the default app; offline, check says it cannot
// verify it and leaves it to the publish.
func TestCheckSharedCalendarNote(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "timers.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`app: billing
timers:
  - {name: Pay, schedule: "09:00", calendar: us, action: {http: {url: "http://127.0.0.1:9/x"}}}
`), 0o600))
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run(context.Background(), []string{"check", path}, &out, &errOut), errOut.String())
	require.Contains(t, out.String(), `note: timers[0] "Pay": calendar "us" is not in this manifest: it must be a calendar of the default app (environment-wide), which sundial check cannot see offline`)
}

// check takes the stack's region from --region or AWS_REGION and refuses a notify topic
// outside it; without one it says the regions were not checked.
func TestCheckNotifyRegion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "timers.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`timers:
  - {name: Away, schedule: "every 1m", alerts: {durationOver: 1m, notify: "arn:aws:sns:eu-west-1:123456789012:b"}, action: {http: {url: "http://x/"}}}
`), 0o600))
	t.Setenv("AWS_REGION", "")
	t.Setenv("AWS_DEFAULT_REGION", "")
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run(context.Background(), []string{"check", path}, &out, &errOut), errOut.String())
	require.Contains(t, out.String(), "note: alert topics' regions were not checked")

	out.Reset()
	require.NotEqual(t, 0, run(context.Background(), []string{"check", "--region", "us-east-1", path}, &out, &errOut))
	require.Contains(t, errOut.String(), `timers[0] "Away": alerts: notify: topic arn:aws:sns:eu-west-1:123456789012:b is in eu-west-1, the stack in us-east-1`)

	errOut.Reset()
	t.Setenv("AWS_REGION", "eu-west-1")
	require.Equal(t, 0, run(context.Background(), []string{"check", path}, &out, &errOut), errOut.String())
}

// Counts take the noun's number ("1 timer", not "1 timers").
func TestCheckCountsInWords(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		yaml, want string
	}{
		{"timers:\n  - {name: A, schedule: \"02:00\", action: {http: {url: \"http://127.0.0.1:9/x\"}}}\n", "app default, 1 timer, 0 tenants listed: valid"},
		{"timers:\n  - {name: A, schedule: \"02:00\", action: {http: {url: \"http://127.0.0.1:9/x\"}}}\n  - {name: B, schedule: \"03:00\", action: {http: {url: \"http://127.0.0.1:9/x\"}}}\ntenants: [acme]\n", "app default, 2 timers, 1 tenant listed: valid"},
	} {
		path := filepath.Join(t.TempDir(), "timers.yaml")
		require.NoError(t, os.WriteFile(path, []byte(c.yaml), 0o600))
		var out, errOut bytes.Buffer
		require.Equal(t, 0, run(context.Background(), []string{"check", path}, &out, &errOut), errOut.String())
		require.Contains(t, out.String(), c.want)
	}
}

// check validates H for the timer it belongs to, names a bad one's field and reason, and says
// what a spread schedule resolves to.
func TestCheckSpread(t *testing.T) {
	t.Parallel()
	write := func(body string) string {
		path := filepath.Join(t.TempDir(), "timers.yaml")
		require.NoError(t, os.WriteFile(path, []byte(body), 0o600))
		return path
	}
	var out, errOut bytes.Buffer
	path := write(`app: billing
tenants: [acme]
timers:
  - {name: Nightly, schedule: "H H(2-4) * * *", action: {http: {url: "http://127.0.0.1:9/x"}}}
  - {name: Sync, schedule: "every 5m spread", multiTenant: true, action: {http: {url: "http://127.0.0.1:9/x"}}}
`)
	require.Equal(t, 0, run(context.Background(), []string{"check", path}, &out, &errOut), errOut.String())
	require.Regexp(t, `note: billing:Nightly spreads its start \(H H\(2-4\) \* \* \*\): it resolves to a next run at \d{4}-\d\d-\d\dT0[234]:36:00Z`, out.String())
	require.Contains(t, out.String(), `note: billing:Sync spreads its start (every 5m spread): each tenant's instance gets its own instant; see one with sundial schedule next "every 5m spread" --timer billing:Sync@TENANT`)

	out.Reset()
	errOut.Reset()
	path = write(`timers:
  - {name: A, schedule: "H(5-2) * * * *", action: {http: {url: "http://127.0.0.1:9/x"}}}
  - {name: B, schedule: "H/0 * * * * ?", action: {http: {url: "http://127.0.0.1:9/x"}}}
  - {name: C, schedule: "cron(0 0 1 1 ? H)", action: {http: {url: "http://127.0.0.1:9/x"}}}
  - {name: D, schedule: "rate(H minutes)", action: {http: {url: "http://127.0.0.1:9/x"}}}
`)
	require.NotEqual(t, 0, run(context.Background(), []string{"check", path}, &out, &errOut))
	require.Contains(t, errOut.String(), `timers[0] "A": schedule: schedule "H(5-2) * * * *": minute field "H(5-2)": range "H(5-2)" runs backwards; H(a-b) needs a <= b`)
	require.Contains(t, errOut.String(), `timers[1] "B": schedule: schedule "H/0 * * * * ?": second field "H/0": step "0" must be a positive integer`)
	require.Contains(t, errOut.String(), `timers[2] "C": schedule: schedule "cron(0 0 1 1 ? H)": year field "H": H cannot be used in the year field`)
	require.Contains(t, errOut.String(), `timers[3] "D": schedule: schedule "rate(H minutes)": H (a spread start time) cannot be used in rate()`)
}

// check names the timer and the field of a bad pauseAfterFailures or pauseFor, and accepts a
// good pair.
func TestCheckAutoPause(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "timers.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`timers:
  - {name: Good, schedule: "every 1m", pauseAfterFailures: 5, pauseFor: 2h, action: {http: {url: "http://127.0.0.1:9/x"}}}
  - {name: Zero, schedule: "every 1m", pauseAfterFailures: 0, action: {http: {url: "http://127.0.0.1:9/x"}}}
  - {name: Alone, schedule: "every 1m", pauseFor: 1h, action: {http: {url: "http://127.0.0.1:9/x"}}}
`), 0o600))
	var out, errOut bytes.Buffer
	require.NotEqual(t, 0, run(context.Background(), []string{"check", path}, &out, &errOut))
	require.Contains(t, errOut.String(), `timers[1] "Zero": pauseAfterFailures: 0 is out of range 1..1000 (leave it out to never pause)`)
	require.Contains(t, errOut.String(), `timers[2] "Alone": pauseFor: 1h0m0s without pauseAfterFailures: say after how many failures in a row to pause`)
	require.NotContains(t, errOut.String(), "Good")
}

// check refuses a dependency cycle and an unknown upstream of the manifest's app, naming
// them, and notes another app's upstreams, which it cannot see offline.
func TestCheckDeps(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
		return p
	}
	var out, errOut bytes.Buffer
	cyclic := write("cycle.yaml", `timers:
  - {name: A, schedule: "02:00", after: [C], action: {http: {url: "http://127.0.0.1:9/x"}}}
  - {name: B, schedule: "03:00", after: [A, Nope], action: {http: {url: "http://127.0.0.1:9/x"}}}
  - {name: C, schedule: "04:00", after: [B], action: {http: {url: "http://127.0.0.1:9/x"}}}
`)
	require.NotEqual(t, 0, run(context.Background(), []string{"check", cyclic}, &out, &errOut))
	require.Contains(t, errOut.String(), `timers[1] "B": after[1]: unknown upstream "Nope": app default has no timer of that name in this manifest`)
	require.Contains(t, errOut.String(), `after: dependency cycle A → C → B → A`)

	out.Reset()
	errOut.Reset()
	chain := write("chain.yaml", `app: ops
timers:
  - {name: A, schedule: "02:00", action: {http: {url: "http://127.0.0.1:9/x"}}}
  - {name: C, schedule: "04:00", after: [A, "billing:B"], waitUntil: "06:00", onUpstreamFailed: alert, action: {http: {url: "http://127.0.0.1:9/x"}}}
`)
	require.Equal(t, 0, run(context.Background(), []string{"check", chain}, &out, &errOut), errOut.String())
	require.Contains(t, out.String(), `note: timers[1] "C": after billing:B names another app's timer, which sundial check cannot see offline`)
	require.Contains(t, out.String(), ": valid")
}
