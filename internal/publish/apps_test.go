package publish_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/cfn"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/inmem"
	"github.com/sundialhq/sundial/internal/publish"
	"github.com/sundialhq/sundial/internal/timer"
)

// appEvent is the realistic Custom::SundialTimers Create request in testdata: every scalar of
// the inline manifest a string, as CloudFormation sends it.
func appEvent(t *testing.T) cfn.Event {
	t.Helper()
	raw, err := os.ReadFile("testdata/sundialtimers-create.json")
	require.NoError(t, err)
	var ev cfn.Event
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&ev))
	return ev
}

// deactivations records DeleteAppStack calls (admin.Service's own is tested in
// functions/publish, internal/admin and TestAppOwnedByOneStack).
type deactivations struct{ apps []string }

func (d *deactivations) DeleteAppStack(_ context.Context, app, _, _ string) (admin.SyncReport, bool, error) {
	d.apps = append(d.apps, app)
	return admin.SyncReport{}, true, nil
}

func newAppHandler(t *testing.T) (*publish.Handler, *inmem.Store, *deactivations) {
	t.Helper()
	store := inmem.NewStore()
	clock := timer.NewManualClock(time.Date(2026, 11, 25, 9, 15, 0, 0, time.UTC))
	d := &deactivations{}
	return &publish.Handler{Admin: &admin.Service{Store: store, Queue: &inmem.Queue{}, Clock: clock, Shards: 1},
		Log: slog.New(slog.DiscardHandler), Apps: d}, store, d
}

// The inline manifest arrives with every value a string; it decodes as the same timers.yaml
// would (numbers, booleans, durations), and the timers are the app's.
func TestAppCreateStringProperties(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, store, _ := newAppHandler(t)
	ev := appEvent(t)
	id, data, err := h.Handle(ctx, ev)
	require.NoError(t, err)
	require.Equal(t, "sundial-timers-billing", id)
	require.Equal(t, "billing", data["App"])
	require.EqualValues(t, 3, data["Created"])
	require.EqualValues(t, 1, data["Woken"], "Init, When Published")

	inv, err := store.Get(ctx, timer.Key{App: "billing", Timer: "Invoices"})
	require.NoError(t, err)
	require.Equal(t, 2, inv.Priority)
	require.Equal(t, 2*time.Minute, inv.Timeout)
	require.Equal(t, 5, inv.MaxRetries)
	require.Equal(t, map[string]string{"batch": "100", "dryRun": "false"}, inv.Properties, "string properties stay strings")
	require.True(t, inv.Active)
	cleanup, err := store.Get(ctx, timer.Key{App: "billing", Timer: "Cleanup"})
	require.NoError(t, err)
	require.False(t, cleanup.Active, `active: "false"`)
	require.Equal(t, 4, cleanup.Priority)
	require.Equal(t, "03:30", cleanup.Schedule)

	// The same request again (Lambda retrying the event): nothing happens twice.
	_, data, err = h.Handle(ctx, ev)
	require.NoError(t, err)
	require.Equal(t, true, data["AlreadyPublished"])
}

func TestInlineManifestString(t *testing.T) {
	m, err := publish.InlineManifest("app: billing\ntimers:\n  - {name: Cleanup, schedule: every 1h, priority: 2, action: {http: {url: \"http://x/y\"}}}\n")
	require.NoError(t, err)
	require.Equal(t, "billing", m.App)
	require.Equal(t, 2, *m.Timers[0].Priority)
	_, err = publish.InlineManifest([]any{"x"})
	require.ErrorContains(t, err, "want an object")
}

func TestAppRejected(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		edit func(p map[string]any)
		want []string
	}{
		{"invalid timer", func(p map[string]any) {
			tm := p["Manifest"].(map[string]any)["timers"].([]any)
			tm[0].(map[string]any)["priority"] = "9"
			tm[1].(map[string]any)["schedule"] = "25:00"
		}, []string{`timers[0] "Invoices": priority: 9 is out of range`, `timers[1] "Cleanup": schedule`}},
		{"not a number", func(p map[string]any) {
			p["Manifest"].(map[string]any)["timers"].([]any)[0].(map[string]any)["maxRetries"] = "many"
		}, []string{`Manifest: invalid input: timers[0] "Invoices": maxRetries: cannot unmarshal !!str ` + "`many`" + ` into int`}},
		{"unknown field", func(p map[string]any) {
			p["Manifest"].(map[string]any)["timers"].([]any)[0].(map[string]any)["shedule"] = "every 1h"
		}, []string{`timers[0] "Invoices": shedule: unknown field`}},
		{"another app", func(p map[string]any) { p["Manifest"].(map[string]any)["app"] = "orders" },
			[]string{`the manifest names app "orders", but the resource's App is "billing"`}},
		{"manifest names the default app", func(p map[string]any) { p["Manifest"].(map[string]any)["app"] = "default" },
			[]string{`the manifest names app "default", but the resource's App is "billing"`}},
		{"no app", func(p map[string]any) { delete(p, "App") }, []string{"App: required"}},
		{"bad app", func(p map[string]any) { p["App"] = "bill ing" }, []string{`App: "bill ing" must match`}},
		{"default app", func(p map[string]any) { p["App"] = "default"; delete(p["Manifest"].(map[string]any), "app") },
			[]string{"Sundial's own stack"}},
		{"no manifest", func(p map[string]any) { delete(p, "Manifest") }, []string{"Manifest", "ManifestS3", "required"}},
		{"both", func(p map[string]any) { p["ManifestS3"] = map[string]any{"Bucket": "b", "Key": "k"} }, []string{"not both"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, store, _ := newAppHandler(t)
			ev := appEvent(t)
			tc.edit(ev.ResourceProperties)
			id, _, err := h.Handle(ctx, ev)
			require.Error(t, err)
			for _, w := range tc.want {
				require.Contains(t, err.Error(), w)
			}
			require.Empty(t, id, "a failed create answers the request id: its Delete touches nothing")
			all, err := store.List(ctx)
			require.NoError(t, err)
			require.Empty(t, all, "nothing changed")
			owners, err := h.Admin.AppOwners(ctx)
			require.NoError(t, err)
			require.Empty(t, owners, "a rejected Create claims no app")
		})
	}
}

// Update: a changed manifest updates the app's timers and deactivates the one it dropped; an
// Update that changes App answers a new physical id (CloudFormation then deletes the old one).
func TestAppUpdate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, store, _ := newAppHandler(t)
	ev := appEvent(t)
	_, _, err := h.Handle(ctx, ev)
	require.NoError(t, err)

	up := appEvent(t)
	up.RequestType, up.RequestID, up.PhysicalResourceID = cfn.RequestUpdate, "r-update", "sundial-timers-billing"
	up.OldResourceProperties = ev.ResourceProperties
	timers := up.ResourceProperties["Manifest"].(map[string]any)["timers"].([]any)
	timers[0].(map[string]any)["schedule"] = "every 2h"
	up.ResourceProperties["Manifest"].(map[string]any)["timers"] = timers[:2] // Init is gone
	id, data, err := h.Handle(ctx, up)
	require.NoError(t, err)
	require.Equal(t, "sundial-timers-billing", id, "the same resource")
	require.EqualValues(t, 1, data["Updated"])
	require.EqualValues(t, 1, data["Deactivated"])
	inv, err := store.Get(ctx, timer.Key{App: "billing", Timer: "Invoices"})
	require.NoError(t, err)
	require.Equal(t, "every 2h", inv.Schedule)
	init, err := store.Get(ctx, timer.Key{App: "billing", Timer: "Init"})
	require.NoError(t, err)
	require.False(t, init.Active, "dropped from the manifest: deactivated, history kept")

	// A rollback sends the previous properties in a new request: they are published again.
	back := appEvent(t)
	back.RequestType, back.RequestID, back.PhysicalResourceID = cfn.RequestUpdate, "r-rollback", "sundial-timers-billing"
	back.OldResourceProperties = up.ResourceProperties
	_, data, err = h.Handle(ctx, back)
	require.NoError(t, err)
	require.Nil(t, data["AlreadyPublished"])
	inv, err = store.Get(ctx, timer.Key{App: "billing", Timer: "Invoices"})
	require.NoError(t, err)
	require.Equal(t, "every 1h", inv.Schedule, "the rollback restored the previous manifest")

	// An invalid Update fails, keeping the resource's physical id (empty: cfn.LambdaWrap
	// answers the request's).
	bad := appEvent(t)
	bad.RequestType, bad.RequestID, bad.PhysicalResourceID = cfn.RequestUpdate, "r-bad", "sundial-timers-billing"
	bad.ResourceProperties["Manifest"].(map[string]any)["timers"].([]any)[0].(map[string]any)["timeout"] = "forever"
	id, _, err = h.Handle(ctx, bad)
	require.ErrorContains(t, err, `timers[0] "Invoices": timeout: want a duration such as 20m or 10s, got "forever"`)
	require.Empty(t, id)

	// App renamed: a new physical id.
	ren := appEvent(t)
	ren.RequestType, ren.RequestID, ren.PhysicalResourceID = cfn.RequestUpdate, "r-rename", "sundial-timers-billing"
	ren.ResourceProperties["App"] = "invoicing"
	delete(ren.ResourceProperties["Manifest"].(map[string]any), "app")
	id, _, err = h.Handle(ctx, ren)
	require.NoError(t, err)
	require.Equal(t, "sundial-timers-invoicing", id)
}

// Delete deactivates the app the physical id names, and only an id this handler gave.
func TestAppDelete(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, _, d := newAppHandler(t)
	del := func(physical string, props map[string]any) error {
		_, _, err := h.Handle(ctx, cfn.Event{RequestType: cfn.RequestDelete, RequestID: "r-" + physical,
			StackID: "arn:aws:cloudformation:us-east-1:123456789012:stack/billing/1", ResourceType: publish.TimersResourceType, LogicalResourceID: "Timers", PhysicalResourceID: physical,
			ResourceProperties: props})
		return err
	}
	require.NoError(t, del("sundial-timers-billing", map[string]any{"App": "billing"}))
	require.Equal(t, []string{"billing"}, d.apps)

	// After a failed Create: the request id, not an app's; nothing is touched.
	require.NoError(t, del("0b6f6c1e-9a52-4d8e-b1f3-2c7e5a9d4f10", map[string]any{"App": "billing"}))
	require.NoError(t, del("2026/11/25/[$LATEST]0123abcd", map[string]any{"App": "billing"}), "a log stream name")
	require.NoError(t, del("sundial-timers-default", map[string]any{"App": "default"}), "never Sundial's own app")
	require.Equal(t, []string{"billing"}, d.apps)

	// After a replacement (App renamed billing → invoicing), the old id is deleted: billing's.
	require.NoError(t, del("sundial-timers-billing", map[string]any{"App": "invoicing"}))
	require.Equal(t, []string{"billing", "billing"}, d.apps)

	// The packaged manifest's resource still deletes nothing.
	_, _, err := h.Handle(ctx, cfn.Event{RequestType: cfn.RequestDelete, ResourceType: publish.PublishResourceType,
		PhysicalResourceID: publish.PhysicalID})
	require.NoError(t, err)
	require.Len(t, d.apps, 2)

	// A failure to deactivate fails the Delete (CloudFormation shows it; the stack can retry).
	h.Apps = failing{}
	require.ErrorContains(t, del("sundial-timers-billing", nil), "table unavailable")
}

// One stack owns an app: a second stack naming the same App is refused, naming the owner,
// and changes nothing; the second stack's Delete leaves the owner's timers alone; once the
// owner's stack is deleted (or an operator releases the app) the second stack may publish it.
func TestAppOwnedByOneStack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, store, _ := newAppHandler(t)
	h.Apps = nil // admin.Service's own DeleteAppStack
	const stackA = "arn:aws:cloudformation:us-east-1:123456789012:stack/billing/3f1c2b4a-c0de-11f0-9a7e-0e5d4c3b2a19"
	const stackB = "arn:aws:cloudformation:us-east-1:123456789012:stack/billing-copy/77aa0000-c0de-11f0-9a7e-0e5d4c3b2a19"
	a := appEvent(t)
	require.Equal(t, stackA, a.StackID)
	_, _, err := h.Handle(ctx, a)
	require.NoError(t, err)

	// Stack B's Create with another manifest for billing: refused, nothing changed.
	b := appEvent(t)
	b.StackID, b.RequestID = stackB, "r-b-create"
	b.ResourceProperties["Manifest"].(map[string]any)["timers"].([]any)[0].(map[string]any)["schedule"] = "every 5m"
	id, _, err := h.Handle(ctx, b)
	require.ErrorContains(t, err, "app billing belongs to stack "+stackA)
	require.ErrorContains(t, err, "sundial apps release billing")
	require.Empty(t, id, "its Delete will name the request id and touch nothing")
	inv, err := store.Get(ctx, timer.Key{App: "billing", Timer: "Invoices"})
	require.NoError(t, err)
	require.Equal(t, "every 1h", inv.Schedule, "stack A's timers unchanged")

	// A Delete from stack B naming billing's id (a stack that owned billing before an
	// operator released it to A, say): A's timers are left alone.
	delB := cfn.Event{RequestType: cfn.RequestDelete, RequestID: "r-b-delete", StackID: stackB,
		ResourceType: publish.TimersResourceType, LogicalResourceID: "Timers", PhysicalResourceID: "sundial-timers-billing"}
	_, data, err := h.Handle(ctx, delB)
	require.NoError(t, err)
	require.Equal(t, false, data["Owned"])
	inv, err = store.Get(ctx, timer.Key{App: "billing", Timer: "Invoices"})
	require.NoError(t, err)
	require.True(t, inv.Active, "stack B's Delete deactivated nothing")

	// Stack A's update still publishes (its own app).
	up := appEvent(t)
	up.RequestType, up.RequestID, up.PhysicalResourceID = cfn.RequestUpdate, "r-a-update", "sundial-timers-billing"
	up.ResourceProperties["Manifest"].(map[string]any)["timers"].([]any)[0].(map[string]any)["schedule"] = "every 2h"
	_, _, err = h.Handle(ctx, up)
	require.NoError(t, err)

	// Stack A deleted: its timers deactivated and the app released; B may now publish it.
	delA := delB
	delA.RequestID, delA.StackID = "r-a-delete", stackA
	_, data, err = h.Handle(ctx, delA)
	require.NoError(t, err)
	require.Nil(t, data["Owned"])
	inv, err = store.Get(ctx, timer.Key{App: "billing", Timer: "Invoices"})
	require.NoError(t, err)
	require.False(t, inv.Active)
	owners, err := h.Admin.AppOwners(ctx)
	require.NoError(t, err)
	require.Empty(t, owners)

	b.RequestID = "r-b-create-again"
	_, _, err = h.Handle(ctx, b)
	require.NoError(t, err)
	inv, err = store.Get(ctx, timer.Key{App: "billing", Timer: "Invoices"})
	require.NoError(t, err)
	require.True(t, inv.Active)
	require.Equal(t, "every 5m", inv.Schedule, "stack B's manifest")
	owners, err = h.Admin.AppOwners(ctx)
	require.NoError(t, err)
	require.Len(t, owners, 1)
	require.Equal(t, timer.AppOwner{App: "billing", Owner: stackB, Resource: "Timers", Since: time.Date(2026, 11, 25, 9, 15, 0, 0, time.UTC)}, owners[0])

	// An operator releases it (B gone without its Delete); A may publish again.
	held, err := h.Admin.ReleaseApp(ctx, "billing")
	require.NoError(t, err)
	require.Equal(t, stackB, held.Owner)
	_, err = h.Admin.ReleaseApp(ctx, "billing")
	require.ErrorContains(t, err, "app billing has no owning stack")
	a.RequestID = "r-a-create-again"
	_, _, err = h.Handle(ctx, a)
	require.NoError(t, err)
}

// A Create whose publish fails after its claim leaves no claim behind: CloudFormation's Delete
// for the failed Create names the request id, and the stack, re-created with a new id, must be
// able to publish the app.
func TestAppFailedCreateUnclaims(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, store, _ := newAppHandler(t)
	broken := &unmarkable{Store: store, fail: true}
	h.Admin.Store = broken
	first := appEvent(t)
	first.StackID = "arn:aws:cloudformation:us-east-1:123456789012:stack/billing/11111111-0000-0000-0000-000000000000"
	_, _, err := h.Handle(ctx, first)
	require.ErrorContains(t, err, "publish record unavailable")
	owners, err := h.Admin.AppOwners(ctx)
	require.NoError(t, err)
	require.Empty(t, owners, "the failed Create's claim is undone")

	broken.fail = false
	again := appEvent(t)
	again.StackID, again.RequestID = "arn:aws:cloudformation:us-east-1:123456789012:stack/billing/22222222-0000-0000-0000-000000000000", "r-again"
	_, _, err = h.Handle(ctx, again)
	require.NoError(t, err, "the re-created stack (a new StackId) publishes the app")
	owners, err = h.Admin.AppOwners(ctx)
	require.NoError(t, err)
	require.Len(t, owners, 1)
	require.Equal(t, again.StackID, owners[0].Owner)

	// An Update that fails keeps the stack's claim: it was not new.
	broken.fail = true
	up := appEvent(t)
	up.StackID, up.RequestType, up.RequestID, up.PhysicalResourceID = again.StackID, cfn.RequestUpdate, "r-up", "sundial-timers-billing"
	_, _, err = h.Handle(ctx, up)
	require.Error(t, err)
	owners, err = h.Admin.AppOwners(ctx)
	require.NoError(t, err)
	require.Len(t, owners, 1, "the owner's failed Update keeps its app")
}

// unmarkable fails MarkPublished while fail is set.
type unmarkable struct {
	*inmem.Store
	fail bool
}

func (u *unmarkable) MarkPublished(ctx context.Context, deploy string, now time.Time) error {
	if !u.fail {
		return u.Store.MarkPublished(ctx, deploy, now)
	}
	return errors.New("publish record unavailable")
}

type failing struct{}

func (failing) DeleteAppStack(context.Context, string, string, string) (admin.SyncReport, bool, error) {
	return admin.SyncReport{}, false, errors.New("table unavailable")
}

// fakeS3 serves objects by bucket/key?version.
type fakeS3 struct {
	objects map[string]string
	asked   []string
}

func (f *fakeS3) GetObject(_ context.Context, in *s3.GetObjectInput, _ ...func(*s3.Options)) (*s3.GetObjectOutput, error) {
	k := *in.Bucket + "/" + *in.Key
	if in.VersionId != nil {
		k += "?" + *in.VersionId
	}
	f.asked = append(f.asked, k)
	body, ok := f.objects[k]
	if !ok {
		return nil, errors.New("NoSuchKey")
	}
	return &s3.GetObjectOutput{Body: io.NopCloser(strings.NewReader(body))}, nil
}

// ManifestS3: the manifest is fetched from S3 (a fake client: the local platform has no S3).
func TestAppManifestS3(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, store, _ := newAppHandler(t)
	f := &fakeS3{objects: map[string]string{
		"billing-config/timers.yaml?v2": "timers:\n  - {name: Cleanup, schedule: every 1h, priority: 2, action: {http: {url: \"http://127.0.0.1:9/x\"}}}\n",
		"billing-config/bad.yaml":       "timers:\n  - {name: Cleanup, schedule: every 1h, priority: 7, action: {http: {url: \"http://127.0.0.1:9/x\"}}}\n",
	}}
	// One 300 KB value aliased 19 times (6 MB expanded), and one over DynamoDB's item limit.
	aliases := "timers:\n  - {name: T0, schedule: every 1h, action: {http: {url: \"http://h/\"}}, properties: {p: &big " + strings.Repeat("x", 300<<10) + "}}\n"
	for i := 1; i < 20; i++ {
		aliases += fmt.Sprintf("  - {name: T%d, schedule: every 1h, action: {http: {url: \"http://h/\"}}, properties: {p: *big}}\n", i)
	}
	f.objects["billing-config/aliases.yaml"] = aliases
	f.objects["billing-config/huge.yaml"] = "timers:\n  - {name: Huge, schedule: every 1h, action: {http: {url: \"http://h/\"}}, properties: {p: " + strings.Repeat("x", 410<<10) + "}}\n"
	h.S3 = f
	ev := func(loc map[string]any) cfn.Event {
		return cfn.Event{RequestType: cfn.RequestCreate, RequestID: "r-" + loc["Key"].(string), ResourceType: publish.TimersResourceType,
			LogicalResourceID: "Timers", StackID: "arn:aws:cloudformation:us-east-1:123456789012:stack/billing/1",
			ResourceProperties: map[string]any{"App": "billing", "ManifestS3": loc}}
	}
	id, _, err := h.Handle(ctx, ev(map[string]any{"Bucket": "billing-config", "Key": "timers.yaml", "Version": "v2"}))
	require.NoError(t, err)
	require.Equal(t, "sundial-timers-billing", id)
	in, err := store.Get(ctx, timer.Key{App: "billing", Timer: "Cleanup"})
	require.NoError(t, err)
	require.Equal(t, 2, in.Priority)

	_, _, err = h.Handle(ctx, ev(map[string]any{"Bucket": "billing-config", "Key": "bad.yaml"}))
	require.ErrorContains(t, err, `ManifestS3: s3://billing-config/bad.yaml: invalid input: timers[0] "Cleanup": priority: 7`)
	// The size checks of `sundial check` hold for a manifest read from S3 too.
	_, _, err = h.Handle(ctx, ev(map[string]any{"Bucket": "billing-config", "Key": "aliases.yaml"}))
	require.ErrorContains(t, err, `ManifestS3: s3://billing-config/aliases.yaml: invalid input: the manifest expands`)
	_, _, err = h.Handle(ctx, ev(map[string]any{"Bucket": "billing-config", "Key": "huge.yaml"}))
	require.ErrorContains(t, err, `ManifestS3: s3://billing-config/huge.yaml: invalid input: timers[0] "Huge": properties/action: an instance would be a`)
	_, _, err = h.Handle(ctx, ev(map[string]any{"Bucket": "billing-config", "Key": "missing.yaml"}))
	require.ErrorContains(t, err, "NoSuchKey")
	_, _, err = h.Handle(ctx, ev(map[string]any{"Key": "x"}))
	require.ErrorContains(t, err, "want {Bucket, Key, Version (optional)}")
	require.Equal(t, []string{"billing-config/timers.yaml?v2", "billing-config/bad.yaml", "billing-config/aliases.yaml", "billing-config/huge.yaml", "billing-config/missing.yaml"}, f.asked)
}

// A rolled-back update is not a publish for When Published: the rollback's Update carries the
// previous properties, which were published before, so it restores the previous timers and
// wakes nothing (before, it woke billing:Init again). A deploy of new properties wakes it; a
// failed Update (the publish refused the manifest) changes and wakes nothing.
func TestAppRollbackDoesNotWakeWhenPublished(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h, _, _ := newAppHandler(t)
	ev := appEvent(t)
	_, data, err := h.Handle(ctx, ev)
	require.NoError(t, err)
	require.EqualValues(t, 1, data["Woken"], "the first publish wakes Init")

	// The update's publish fails (an invalid manifest): nothing changes, nothing wakes...
	bad := appEvent(t)
	bad.RequestType, bad.RequestID, bad.PhysicalResourceID = cfn.RequestUpdate, "r-bad", "sundial-timers-billing"
	bad.OldResourceProperties = ev.ResourceProperties
	bad.ResourceProperties["Manifest"].(map[string]any)["timers"].([]any)[0].(map[string]any)["timeout"] = "forever"
	_, _, err = h.Handle(ctx, bad)
	require.Error(t, err)
	// ...and CloudFormation rolls it back: an Update to the previous properties.
	back := appEvent(t)
	back.RequestType, back.RequestID, back.PhysicalResourceID = cfn.RequestUpdate, "r-rollback", "sundial-timers-billing"
	back.OldResourceProperties = bad.ResourceProperties
	_, data, err = h.Handle(ctx, back)
	require.NoError(t, err)
	require.EqualValues(t, 0, data["Woken"], "a rollback is not a publish for When Published")
	require.EqualValues(t, 3, data["Unchanged"])

	// An update that succeeded, then a rollback of it (another resource of the stack failed):
	// the new properties woke Init once, the rollback's restores the previous timers only.
	up := appEvent(t)
	up.RequestType, up.RequestID, up.PhysicalResourceID = cfn.RequestUpdate, "r-update", "sundial-timers-billing"
	up.OldResourceProperties = ev.ResourceProperties
	up.ResourceProperties["Manifest"].(map[string]any)["timers"].([]any)[0].(map[string]any)["schedule"] = "every 2h"
	_, data, err = h.Handle(ctx, up)
	require.NoError(t, err)
	require.EqualValues(t, 1, data["Woken"], "new properties are a publish")
	back2 := appEvent(t)
	back2.RequestType, back2.RequestID, back2.PhysicalResourceID = cfn.RequestUpdate, "r-rollback-2", "sundial-timers-billing"
	back2.OldResourceProperties = up.ResourceProperties
	_, data, err = h.Handle(ctx, back2)
	require.NoError(t, err)
	require.EqualValues(t, 1, data["Updated"], "the rollback restored every 1h")
	require.EqualValues(t, 0, data["Woken"])

	// A property that changes per deploy (DeployId) makes every deploy a publish, a deploy back
	// to an earlier manifest included.
	next := appEvent(t)
	next.RequestType, next.RequestID, next.PhysicalResourceID = cfn.RequestUpdate, "r-next", "sundial-timers-billing"
	next.ResourceProperties["DeployId"] = "20261125T230000Z"
	_, data, err = h.Handle(ctx, next)
	require.NoError(t, err)
	require.EqualValues(t, 1, data["Woken"])
}
