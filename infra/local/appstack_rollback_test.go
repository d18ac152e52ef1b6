package local_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/local"
	"github.com/sundialhq/sundial/internal/testenv"
)

// A rolled-back app stack update does not run the app's When Published timer: the publish
// function refuses the new manifest (priority: 9, out of range), the
// rollback's Update republishes the previous properties, and WarmUp is not woken (before, the
// rollback's republish woke it). A later valid update is a publish and wakes it.
func TestAppStackRollbackIsNotAPublish(t *testing.T) {
	testenv.Integration(t)
	t.Parallel()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "billing")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	write := func(priority int) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, local.AppStackTemplate), []byte(`AWSTemplateFormatVersion: "2010-09-09"
Transform: AWS::Serverless-2016-10-31
Parameters:
  SundialStack: {Type: String, Default: sundial}
Resources:
  Timers:
    Type: Custom::SundialTimers
    Properties:
      ServiceToken:
        Fn::ImportValue: !Sub "${SundialStack}-PublishFunctionArn"
      App: billing
      Manifest:
        timers:
          - {name: Cleanup, schedule: "every 1h", priority: `+fmt.Sprint(priority)+`, action: {http: {url: "http://127.0.0.1:9/x"}}}
          - {name: WarmUp, schedule: "When Published", action: {http: {url: "http://127.0.0.1:9/x"}}}
`), 0o644))
	}
	write(2)
	var out, logs testenv.SyncBuffer
	p, err := local.Up(ctx, local.Options{Template: "../../template.yaml", SourceDir: "../..", Out: &out, Log: &logs,
		AppStacks: []string{dir}, StateFile: filepath.Join(t.TempDir(), "state.json")})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, p.Stop()) })
	require.EqualValues(t, 1, p.AppStacks[0].Published[0].Data["Woken"], "the stack's create is a publish")

	write(9)
	up, err := p.UpdateAppStack(ctx, dir)
	require.ErrorContains(t, err, `priority: 9 is out of range`)
	require.ErrorContains(t, err, "the update was rolled back")
	require.Len(t, up.Changes, 1)
	require.Equal(t, "Rollback", up.Changes[0].Action)
	require.EqualValues(t, 0, up.Changes[0].Data["Woken"], "the rollback's republish wakes no When Published timer")
	require.EqualValues(t, 2, up.Changes[0].Data["Unchanged"])

	write(3)
	up, err = p.UpdateAppStack(ctx, dir)
	require.NoError(t, err)
	require.Equal(t, "Update", up.Changes[0].Action)
	require.EqualValues(t, 1, up.Changes[0].Data["Woken"], "a deploy that succeeds is a publish")
}
