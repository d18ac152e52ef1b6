package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/audit"
)

// readLines reads `WORD value` lines of a command's banner until the line starting with
// last, into a map.
func readLines(t *testing.T, sc *bufio.Scanner, last string) map[string]string {
	t.Helper()
	printed := map[string]string{}
	deadline := time.Now().Add(90 * time.Second)
	for sc.Scan() && time.Now().Before(deadline) {
		word, rest, _ := strings.Cut(sc.Text(), " ")
		if f := strings.Fields(rest); len(f) > 0 {
			printed[word] = f[0]
		}
		if word == last {
			break
		}
	}
	require.Contains(t, printed, last, "the banner: %v", printed)
	go func() {
		for sc.Scan() {
		}
	}()
	return printed
}

// TestConsoleForADeployedStack drives `sundial console` in headless Chromium against the
// local platform's IAM-checked Service Center API (`sundial up --operators`), signed with
// the keys of an operator of one app (billing) in its environment: the operator reads every
// app, runs billing's timer, and is refused shipping's with the refusal shown, naming the
// action and resource.
func TestConsoleForADeployedStack(t *testing.T) {
	chromium := chromium(t)
	if testing.Short() {
		t.Skip("runs sundial up, sundial console and Chromium")
	}
	bin, err := sundialBinary()
	require.NoError(t, err)
	actions := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	t.Cleanup(actions.Close)
	dir := t.TempDir()
	write := func(name, body string) string { return writeFileIn(t, dir, name, body) }
	billing := write("billing.yaml", fmt.Sprintf("app: billing\ntimers:\n  - {name: Invoice, schedule: \"every 1h\", action: {http: {url: \"%s/ok\"}}}\n", actions.URL))
	shipping := write("shipping.yaml", fmt.Sprintf("app: shipping\ntimers:\n  - {name: Label, schedule: \"every 1h\", action: {http: {url: \"%s/ok\"}}}\n", actions.URL))
	ops := write("operators.yaml", billingOps)
	up := startPlatform(t, dir, billing, []string{"SUNDIAL_CONSOLE_TOKEN="}, "--console", "127.0.0.1:0", "--operators", ops).Banner
	_, errOut, code := cli(t, dir, "sync", shipping)
	require.Equal(t, 0, code, errOut)

	con := exec.Command(bin, "console", "--api", up["console"]+"api/", "--listen", "127.0.0.1:0")
	con.Dir = t.TempDir() // not the platform's directory: nothing of its administrator's
	con.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID=AKIDBILLINGOPS", "AWS_SECRET_ACCESS_KEY=billing-secret", "AWS_SESSION_TOKEN=",
		"AWS_PROFILE=", "AWS_REGION=us-east-1", "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null", "SUNDIAL_CONSOLE_TOKEN=")
	conOut, err := con.StdoutPipe()
	require.NoError(t, err)
	con.Stderr = os.Stderr
	require.NoError(t, con.Start())
	t.Cleanup(func() { _ = con.Process.Signal(syscall.SIGINT); _ = con.Wait() })
	c := readLines(t, bufio.NewScanner(conOut), "ready")
	base := strings.TrimSuffix(c["console"], "/")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.WindowSize(1400, 1000))
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	t.Cleanup(cancelAlloc)
	bctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(cancelTab)
	text := func(sel string) string {
		v, err := chromedp.Run(bctx, chromedp.Evaluate[string](fmt.Sprintf(`(document.querySelector(%q) || {innerText: ""}).innerText.trim()`, sel)))
		require.NoError(t, err, sel)
		return v
	}
	navigate := func(u string) { require.NoError(t, chromedp.Do(bctx, chromedp.Navigate(u)), u) }
	submit := func(sel string) {
		_, err := chromedp.Run(bctx, chromedp.WaitEvent(page.LoadEventFired, nil, chromedp.Click(chromedp.CSS(sel))))
		require.NoError(t, err, sel)
	}
	shot := func(name string) {
		png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
		require.NoError(t, err)
		out, err := filepath.Abs("../../test-artifacts/console")
		require.NoError(t, err)
		require.NoError(t, os.MkdirAll(out, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(out, name+".png"), png, 0o644))
	}

	navigate(c["login"])
	require.Equal(t, "Environment Health", text("h1"))
	navigate(base + "/timers")
	timers := text("main")
	require.Contains(t, timers, "billing:Invoice", "reads every app")
	require.Contains(t, timers, "shipping:Label", "reads every app")

	navigate(base + "/timers/billing:Invoice")
	submit("#run-now")
	require.Contains(t, text("#flash"), "firing sent", "runs its own app's timer")
	shot("10-console-operator-runs-own-app")

	navigate(base + "/timers/shipping:Label")
	submit("#run-now")
	refused := text("main")
	require.Contains(t, refused, "User: billing-ops is not authorized to perform: execute-api:Invoke on resource:")
	require.Contains(t, refused, "/POST/api/apps/shipping/timers/Label/run-now")
	shot("11-console-operator-refused-other-app")

	out, errOut, code := cli(t, dir, "audit", "--json")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, `"who":"billing-ops"`, "the Run Now is recorded as the operator's")
	require.Contains(t, out, `"action":"run-now"`)
	for _, r := range jsonLines[audit.Record](t, out) {
		require.False(t, r.App == "shipping" && r.Timer == "Label", "shipping's Label is not billing-ops's: %+v", r)
	}
}

// chromium finds Chromium; without it the test skips, except in CI.
func chromium(t *testing.T) string {
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
	t.Skip("Chromium is not installed; the browser test is skipped outside CI")
	return ""
}
