package local_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/local"
	"github.com/sundialhq/sundial/internal/testenv"
	"github.com/sundialhq/sundial/internal/timer"
)

// appStack writes an app stack directory named name holding template.
func appStack(t *testing.T, name, timers string, extra string) string {
	dir := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.MkdirAll(dir, 0o755))
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
      App: `+name+`
      Manifest:
        timers:
`+timers+extra), 0o644))
	return dir
}

// An app stack's deploy stops up on what CloudFormation would fail it for — an export no
// stack has, a FAILED answer from the publish function (with its reason) — and reports what
// it does not run locally.
func TestAppStacks(t *testing.T) {
	testenv.Integration(t)
	up := func(dir string) (*local.Platform, error) {
		var out, logs testenv.SyncBuffer
		p, err := local.Up(context.Background(), local.Options{Template: "../../template.yaml", SourceDir: "../..", Out: &out, Log: &logs,
			AppStacks: []string{dir}})
		if err == nil {
			t.Cleanup(func() { require.NoError(t, p.Stop()) })
		}
		return p, err
	}
	valid := `          - {name: Cleanup, schedule: "every 1h", action: {http: {url: "http://127.0.0.1:9/x"}}}
`
	topic := `  Alerts:
    Type: AWS::SNS::Topic
`
	p, err := up(appStack(t, "shipping", valid, topic))
	require.NoError(t, err)
	require.Len(t, p.AppStacks, 1)
	rep := p.AppStacks[0]
	require.Equal(t, "shipping", rep.Name)
	require.Len(t, rep.Published, 1)
	require.Equal(t, "sundial-timers-shipping", rep.Published[0].PhysicalID)
	require.EqualValues(t, 1, rep.Published[0].Data["Created"])
	require.Equal(t, []string{"Alerts (AWS::SNS::Topic): not run locally (it has a name and an ARN only)"}, rep.Skipped)
	in, err := p.App.Store.Get(context.Background(), timer.Key{App: "shipping", Timer: "Cleanup"})
	require.NoError(t, err)
	require.True(t, in.Active)

	bad := strings.Replace(valid, `schedule: "every 1h",`, `schedule: "every 1h", priority: 9,`, 1)
	_, err = up(appStack(t, "invoicing", bad, ""))
	require.ErrorContains(t, err, "answered FAILED")
	require.ErrorContains(t, err, `timers[0] "Cleanup": priority: 9 is out of range`)

	dir := appStack(t, "orders", valid, "")
	tpl := filepath.Join(dir, local.AppStackTemplate)
	b, err := os.ReadFile(tpl)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(tpl, []byte(strings.Replace(string(b), "Default: sundial", "Default: other", 1)), 0o644))
	_, err = up(dir)
	require.ErrorContains(t, err, `Fn::ImportValue other-PublishFunctionArn: no deployed stack exports "other-PublishFunctionArn" (exports: sundial-PublishFunctionArn)`)
}
