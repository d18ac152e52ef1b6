package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/local"
	"github.com/sundialhq/sundial/internal/testenv"
	"github.com/sundialhq/sundial/internal/timer"
)

// `up` watches its app stacks' templates: a changed template is applied once (a touch that
// leaves the content alone is not), and what the update did is printed.
func TestWatchAppStacks(t *testing.T) {
	testenv.Integration(t)
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "shipping")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	tpl := filepath.Join(dir, local.AppStackTemplate)
	write := func(schedule string) {
		require.NoError(t, os.WriteFile(tpl, []byte(`Transform: AWS::Serverless-2016-10-31
Resources:
  Timers:
    Type: Custom::SundialTimers
    Properties:
      ServiceToken: !ImportValue sundial-PublishFunctionArn
      App: shipping
      Manifest:
        timers:
          - {name: Cleanup, schedule: "`+schedule+`", action: {http: {url: "http://127.0.0.1:9/x"}}}
`), 0o644))
	}
	write("every 1h")
	var logs testenv.SyncBuffer
	p, err := local.Up(ctx, local.Options{Template: "../../template.yaml", SourceDir: "../..", Out: &logs, Log: &logs, AppStacks: []string{dir}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, p.Stop()) })

	var out testenv.SyncBuffer
	stop := watchAppStacks(ctx, p, []string{dir}, &out)
	defer stop()
	now := time.Now()
	require.NoError(t, os.Chtimes(tpl, now, now.Add(time.Minute)))
	time.Sleep(2500 * time.Millisecond)
	require.Empty(t, out.String(), "a touch is not a change")

	write("every 2h")
	require.Eventually(t, func() bool {
		return strings.Contains(out.String(), "Timers (Custom::SundialTimers) Update: app shipping: created 0, updated 1")
	}, 20*time.Second, 100*time.Millisecond, "%s", out.String())
	in, err := p.App.Store.Get(ctx, timer.Key{App: "shipping", Timer: "Cleanup"})
	require.NoError(t, err)
	require.Equal(t, "every 2h", in.Schedule)
	time.Sleep(2500 * time.Millisecond)
	require.Equal(t, 1, strings.Count(out.String(), "template changed"), "applied once: %s", out.String())
}
