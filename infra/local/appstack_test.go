package local_test

import (
	"context"
	"fmt"
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
	t.Parallel()
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
	require.ErrorContains(t, err, `Fn::ImportValue other-PublishFunctionArn: no deployed stack exports "other-PublishFunctionArn" (exports: sundial-PublishFunctionArn`)
}

// A changed app stack template is applied as CloudFormation applies a stack update to its
// custom resources: a changed resource gets Update, a changed App is a replacement (the old
// app's timers deactivated in the cleanup), a removed resource gets Delete; when a request
// fails, what the update changed is rolled back, the failed resource included. The state file
// follows, so that `sundial app-stack delete` deletes what stands.
func TestAppStackUpdate(t *testing.T) {
	testenv.Integration(t)
	t.Parallel()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "shipping")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	resource := func(id, app, schedule string, priority int) string {
		return `  ` + id + `:
    Type: Custom::SundialTimers
    Properties:
      ServiceToken:
        Fn::ImportValue: !Sub "${SundialStack}-PublishFunctionArn"
      App: ` + app + `
      Manifest:
        timers:
          - {name: Cleanup, schedule: "` + schedule + `", priority: ` + fmt.Sprint(priority) + `, action: {http: {url: "http://127.0.0.1:9/x"}}}
`
	}
	write := func(resources ...string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, local.AppStackTemplate), []byte(`AWSTemplateFormatVersion: "2010-09-09"
Transform: AWS::Serverless-2016-10-31
Parameters:
  SundialStack: {Type: String, Default: sundial}
Resources:
`+strings.Join(resources, "")), 0o644))
	}
	write(resource("Timers", "shipping", "every 1h", 2), resource("EuTimers", "shipping-eu", "every 1h", 2))
	stateDir := t.TempDir()
	state := filepath.Join(stateDir, local.StateFileName)
	var out, logs testenv.SyncBuffer
	p, err := local.Up(ctx, local.Options{Template: "../../template.yaml", SourceDir: "../..", Out: &out, Log: &logs,
		AppStacks: []string{dir}, StateFile: state})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, p.Stop()) })
	cleanup := func(app string) timer.Instance {
		t.Helper()
		in, err := p.App.Store.Get(ctx, timer.Key{App: app, Timer: "Cleanup"})
		require.NoError(t, err)
		return in
	}
	actions := func(up local.AppStackUpdate) []string {
		var out []string
		for _, c := range up.Changes {
			out = append(out, c.LogicalID+" "+c.Action)
		}
		return out
	}

	// Timers changes; EuTimers does not: one Update.
	write(resource("Timers", "shipping", "every 2h", 2), resource("EuTimers", "shipping-eu", "every 1h", 2))
	up, err := p.UpdateAppStack(ctx, dir)
	require.NoError(t, err)
	require.Equal(t, []string{"Timers Update"}, actions(up))
	require.EqualValues(t, 1, up.Changes[0].Data["Updated"])
	require.Equal(t, "every 2h", cleanup("shipping").Schedule)

	// EuTimers changes validly, Timers invalidly (the template's order is EuTimers, Timers):
	// the update fails at Timers, and EuTimers is rolled back to every 1h.
	write(resource("Timers", "shipping", "every 2h", 9), resource("EuTimers", "shipping-eu", "every 3h", 2))
	up, err = p.UpdateAppStack(ctx, dir)
	require.ErrorContains(t, err, `Timers (Custom::SundialTimers)`)
	require.ErrorContains(t, err, `priority: 9 is out of range`)
	require.ErrorContains(t, err, "the update was rolled back")
	require.Equal(t, []string{"EuTimers Update", "Timers Rollback", "EuTimers Rollback"}, actions(up))
	require.Equal(t, "every 1h", cleanup("shipping-eu").Schedule, "rolled back")

	// A new resource, a replacement (EuTimers' App), then a failure: the Update back comes
	// first, then the rollback's cleanup deletes what the update created, newest first.
	write(resource("Timers", "shipping", "every 2h", 9), resource("EuTimers", "shipping-us", "every 1h", 2),
		resource("NewTimers", "shipping-ca", "every 1h", 2))
	up, err = p.UpdateAppStack(ctx, dir)
	require.ErrorContains(t, err, "the update was rolled back")
	require.Equal(t, []string{"EuTimers Replace", "NewTimers Create", "Timers Rollback", "NewTimers Rollback", "EuTimers Rollback"}, actions(up))
	require.False(t, cleanup("shipping-ca").Active, "the created resource was deleted")
	require.False(t, cleanup("shipping-us").Active, "the replacement's new app was deleted")
	require.True(t, cleanup("shipping-eu").Active, "the replaced app was never touched")
	require.Equal(t, "every 2h", cleanup("shipping").Schedule)

	// A changed ServiceToken is refused before any request, as CloudFormation refuses it.
	write(strings.Replace(resource("Timers", "shipping", "every 5h", 2), `Fn::ImportValue: !Sub "${SundialStack}-PublishFunctionArn"`,
		`arn:aws:lambda:us-east-1:000000000000:function:other-publish`, 1), resource("EuTimers", "shipping-eu", "every 1h", 2))
	up, err = p.UpdateAppStack(ctx, dir)
	require.ErrorContains(t, err, "Timers (Custom::SundialTimers): Modifying service token is not allowed")
	require.Empty(t, up.Changes)
	require.Equal(t, "every 2h", cleanup("shipping").Schedule)

	// EuTimers' App changes: a replacement; the cleanup deletes the old app's resource.
	write(resource("Timers", "shipping", "every 2h", 2), resource("EuTimers", "shipping-us", "every 1h", 2))
	up, err = p.UpdateAppStack(ctx, dir)
	require.NoError(t, err)
	require.Equal(t, []string{"EuTimers Replace"}, actions(up))
	require.False(t, cleanup("shipping-eu").Active, "the replaced app's timers are deactivated")
	require.True(t, cleanup("shipping-us").Active)
	owners, err := p.App.Admin.AppOwners(ctx)
	require.NoError(t, err)
	var owned []string
	for _, o := range owners {
		owned = append(owned, o.App)
	}
	require.Equal(t, []string{"shipping", "shipping-us"}, owned)
	var ids []string
	for _, cr := range p.AppStacks[0].Published {
		ids = append(ids, cr.PhysicalID)
	}
	require.ElementsMatch(t, []string{"sundial-timers-shipping", "sundial-timers-shipping-us"}, ids, "the report follows the update")

	// EuTimers leaves the template: Delete.
	write(resource("Timers", "shipping", "every 2h", 2))
	up, err = p.UpdateAppStack(ctx, dir)
	require.NoError(t, err)
	require.Equal(t, []string{"EuTimers Delete"}, actions(up))
	require.False(t, cleanup("shipping-us").Active)

	// The state file has what stands: the stack's Delete deactivates shipping. The delete
	// (another process, `sundial app-stack delete --state DIR`) does not write the platform's
	// local.json: it is its owner's.
	before, err := os.ReadFile(state)
	require.NoError(t, err)
	done, err := local.DeleteAppStack(ctx, stateDir, dir)
	require.NoError(t, err)
	require.Len(t, done, 1)
	require.Equal(t, "sundial-timers-shipping", done[0].PhysicalID)
	require.False(t, cleanup("shipping").Active)
	after, err := os.ReadFile(state)
	require.NoError(t, err)
	require.Equal(t, string(before), string(after), "app-stack delete leaves the owner's local.json alone")
	require.True(t, local.AppStackDeleted(stateDir, "shipping"))
	_, err = local.DeleteAppStack(ctx, stateDir, dir)
	require.ErrorContains(t, err, "sundial app-stack delete deleted it", "deleted once")

	// A deleted stack is not updated (nor brought back).
	write(resource("Timers", "shipping", "every 9h", 2))
	_, err = p.UpdateAppStack(ctx, dir)
	require.ErrorContains(t, err, "was deleted (sundial app-stack delete)")
	_, watched := p.AppStackHash(dir)
	require.False(t, watched, "no longer watched")
	s, ok := local.ReadState(state)
	require.True(t, ok)
	require.Empty(t, s.AppStacks, "the owner, told by the update, forgets the stack in its local.json")
	require.False(t, cleanup("shipping").Active)
	require.Equal(t, "every 2h", cleanup("shipping").Schedule)
}
