package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/cfn"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/functions/internal/lambdatest"
	"github.com/sundialhq/sundial/internal/audit"
	"github.com/sundialhq/sundial/internal/manifest"
	"github.com/sundialhq/sundial/internal/publish"
	"github.com/sundialhq/sundial/internal/testenv"
	"github.com/sundialhq/sundial/internal/timer"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// The sample CloudFormation Create request goes through the handler main.go starts, with the
// manifest packaged as `make build-PublishFunction` packages it (examples/timers.yaml as
// timers.yaml beside the bootstrap, in LAMBDA_TASK_ROOT): every timer is created, and the
// function answers SUCCESS at the request's pre-signed URL. Only ResponseURL is replaced, by
// a server standing in for S3.
func TestSampleEvent(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	body, err := os.ReadFile("../../examples/timers.yaml")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(root, "timers.yaml"), body, 0o644))
	cfg, outs := lambdatest.Env(t, "publish", map[string]string{"LAMBDA_TASK_ROOT": root})
	_, ev := lambdatest.Event[cfn.Event](t)
	require.Equal(t, cfn.RequestCreate, ev.RequestType)
	require.Equal(t, "Custom::SundialPublish", ev.ResourceType)
	require.Contains(t, ev.ResourceProperties, "ServiceToken")

	url, answers := responseServer(t)
	ev.ResponseURL = url
	payload, err := json.Marshal(ev)
	require.NoError(t, err)

	_, err = lambdatest.Invoke(t, "publish", handler(ctx), 300*time.Second, payload)
	require.NoError(t, err)

	got := answers()
	require.Len(t, got, 1, "one answer to CloudFormation")
	res := got[0]
	require.Equal(t, cfn.StatusSuccess, res.Status, res.Reason)
	require.Equal(t, publish.PhysicalID, res.PhysicalResourceID)
	require.Equal(t, ev.RequestID, res.RequestID)
	require.Equal(t, ev.StackID, res.StackID)
	require.Equal(t, ev.LogicalResourceID, res.LogicalResourceID)
	require.NotZero(t, res.Data["Created"])

	m, err := manifest.Load(filepath.Join(root, "timers.yaml"))
	require.NoError(t, err)
	a := lambdatest.App(t, cfg, outs)
	for _, tm := range m.Timers {
		tenant := ""
		if tm.MultiTenant {
			tenant = m.Tenants[0]
		}
		in, err := a.Store.Get(ctx, timer.Key{Timer: tm.InstanceNames()[0], Tenant: tenant})
		require.NoError(t, err, "%s was created", tm.Name)
		require.Equal(t, tm.IsActive(), in.Active, tm.Name)
	}
	// Audited once, as the stack, through the audit writer (the publish role invokes it).
	recs, err := a.AuditDirect().List(ctx, audit.Query{Who: ev.StackID})
	require.NoError(t, err)
	require.Len(t, recs, 1)
	require.Equal(t, audit.Publish, recs[0].Action)
	require.Equal(t, float64(len(m.Timers)) > 0, recs[0].After["created"].(float64) > 0, "the record counts what the publish created")
}

// An application's own stack declares Custom::SundialTimers (examples/billing): the realistic
// Create request (every scalar of the inline manifest a string, as CloudFormation sends it) and
// the requests that follow it go through the handler main.go starts, as Lambda runs it, with
// the publish function's role.
func TestAppStackEvents(t *testing.T) {
	ctx := context.Background()
	cfg, outs := lambdatest.Env(t, "publish", map[string]string{"LAMBDA_TASK_ROOT": t.TempDir()})
	a := lambdatest.App(t, cfg, outs)
	raw, err := os.ReadFile("../../internal/publish/testdata/sundialtimers-create.json")
	require.NoError(t, err)
	var create cfn.Event
	require.NoError(t, json.Unmarshal(raw, &create))
	require.Equal(t, publish.TimersResourceType, create.ResourceType)

	url, answers := responseServer(t)
	fresh := func() cfn.Event { // a deep copy of the Create request
		var ev cfn.Event
		require.NoError(t, json.Unmarshal(raw, &ev))
		return ev
	}
	invoke := func(ev cfn.Event) cfn.Response {
		t.Helper()
		ev.ResponseURL = url
		payload, err := json.Marshal(ev)
		require.NoError(t, err)
		_, err = lambdatest.Invoke(t, "publish", handler(ctx), 300*time.Second, payload)
		require.NoError(t, err)
		for _, res := range slices.Backward(answers()) {
			if res.RequestID == ev.RequestID {
				return res
			}
		}
		t.Fatalf("the function did not answer %s", ev.RequestID)
		return cfn.Response{}
	}
	timers := func(ev cfn.Event) []any { return ev.ResourceProperties["Manifest"].(map[string]any)["timers"].([]any) }
	// billing names one of the app's timers.
	billing := func(name string) timer.Key { return timer.Key{App: "billing", Timer: name} }
	get := func(k timer.Key) timer.Instance {
		t.Helper()
		in, err := a.Store.Get(ctx, k)
		require.NoError(t, err, "%s", k)
		return in
	}

	// Create: the app's timers exist, decoded from strings.
	res := invoke(create)
	require.Equal(t, cfn.StatusSuccess, res.Status, res.Reason)
	require.Equal(t, "sundial-timers-billing", res.PhysicalResourceID)
	require.EqualValues(t, 3, res.Data["Created"])
	require.Equal(t, 2, get(billing("Invoices")).Priority)
	require.False(t, get(billing("Cleanup")).Active, `active: "false"`)
	require.True(t, get(billing("Init")).Active)

	// Update with a changed manifest: Invoices updated, Init (dropped) deactivated.
	up := fresh()
	up.RequestType, up.RequestID, up.PhysicalResourceID = cfn.RequestUpdate, "update-1", res.PhysicalResourceID
	up.OldResourceProperties = create.ResourceProperties
	ts := timers(up)
	ts[0].(map[string]any)["schedule"] = "every 2h"
	up.ResourceProperties["Manifest"].(map[string]any)["timers"] = ts[:2]
	res = invoke(up)
	require.Equal(t, cfn.StatusSuccess, res.Status, res.Reason)
	require.Equal(t, "sundial-timers-billing", res.PhysicalResourceID)
	require.Equal(t, "every 2h", get(billing("Invoices")).Schedule)
	require.False(t, get(billing("Init")).Active, "removed from the manifest: deactivated")
	before := map[string]timer.Instance{}
	for _, n := range []string{"Invoices", "Cleanup", "Init"} {
		before[n] = get(billing(n))
	}
	unchanged := func() {
		t.Helper()
		for n, in := range before {
			require.Equal(t, in, get(billing(n)), "%s changed", n)
		}
	}

	// An invalid inline manifest fails the app's deploy, naming timer and field; nothing changes.
	bad := fresh()
	bad.RequestType, bad.RequestID, bad.PhysicalResourceID = cfn.RequestUpdate, "update-bad", "sundial-timers-billing"
	timers(bad)[1].(map[string]any)["priority"] = "9"
	timers(bad)[0].(map[string]any)["timeout"] = "soon"
	res = invoke(bad)
	require.Equal(t, cfn.StatusFailed, res.Status)
	require.Contains(t, res.Reason, `timers[0] "Invoices": timeout: want a duration`)
	require.Equal(t, "sundial-timers-billing", res.PhysicalResourceID, "a failed update keeps the resource")
	bad.RequestID = "update-bad-2"
	delete(timers(bad)[0].(map[string]any), "timeout")
	res = invoke(bad)
	require.Equal(t, cfn.StatusFailed, res.Status)
	require.Contains(t, res.Reason, `timers[1] "Cleanup": priority: 9 is out of range`)
	unchanged()

	// A manifest naming another app than App fails.
	other := fresh()
	other.RequestType, other.RequestID, other.PhysicalResourceID = cfn.RequestUpdate, "update-other", "sundial-timers-billing"
	other.ResourceProperties["Manifest"].(map[string]any)["app"] = "orders"
	res = invoke(other)
	require.Equal(t, cfn.StatusFailed, res.Status)
	require.Contains(t, res.Reason, `the manifest names app "orders", but the resource's App is "billing"`)
	unchanged()

	// A failed Create answers the request id as its physical id; the Delete CloudFormation then
	// sends names it and changes nothing.
	failed := fresh()
	failed.RequestID = "create-failed"
	failed.ResourceProperties["App"] = "bill ing"
	res = invoke(failed)
	require.Equal(t, cfn.StatusFailed, res.Status)
	require.Equal(t, "create-failed", res.PhysicalResourceID)
	del := fresh()
	del.RequestType, del.RequestID, del.PhysicalResourceID = cfn.RequestDelete, "delete-failed", res.PhysicalResourceID
	res = invoke(del)
	require.Equal(t, cfn.StatusSuccess, res.Status, res.Reason)
	unchanged()

	// Another app's stack publishes its own Cleanup; deleting billing's stack deactivates only
	// billing's timers.
	orders := fresh()
	orders.RequestID, orders.StackID = "create-orders", "arn:aws:cloudformation:us-east-1:123456789012:stack/orders/1"
	orders.ResourceProperties["App"] = "orders"
	orders.ResourceProperties["Manifest"] = map[string]any{"timers": []any{map[string]any{"name": "Cleanup", "schedule": "every 1h",
		"action": map[string]any{"http": map[string]any{"url": "http://127.0.0.1:9/x"}}}}}
	res = invoke(orders)
	require.Equal(t, cfn.StatusSuccess, res.Status, res.Reason)
	ordersCleanup := timer.Key{App: "orders", Timer: "Cleanup"}
	require.True(t, get(ordersCleanup).Active)
	require.True(t, get(billing("Invoices")).Active, "publishing orders leaves billing's timers")
	del = fresh()
	del.RequestType, del.RequestID, del.PhysicalResourceID = cfn.RequestDelete, "delete-billing", "sundial-timers-billing"
	res = invoke(del)
	require.Equal(t, cfn.StatusSuccess, res.Status, res.Reason)
	for _, n := range []string{"Invoices", "Cleanup", "Init"} {
		require.False(t, get(billing(n)).Active, "%s: billing's stack is deleted", n)
	}
	require.True(t, get(ordersCleanup).Active, "another app's timer is untouched")
}

// responseServer stands for the pre-signed S3 URL CloudFormation gives a custom resource: it
// keeps every response the function PUTs there, and answers returns them in order.
func responseServer(t *testing.T) (url string, answers func() []cfn.Response) {
	var (
		mu  sync.Mutex
		got []cfn.Response
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var res cfn.Response
		if r.Method != http.MethodPut || json.Unmarshal(b, &res) != nil {
			http.Error(w, "want a PUT of a JSON response", http.StatusBadRequest)
			return
		}
		mu.Lock()
		got = append(got, res)
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/response?X-Amz-Signature=x", func() []cfn.Response {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(got)
	}
}

// A FAILED answer stays within CloudFormation's 4,096-byte response limit as sent, JSON
// escapes included (a reason full of < and & takes six bytes per character), or CloudFormation
// would report "Response object is too long" instead of the reason. Before, the reason was
// cut at 1,800 bytes before escaping: this one was sent as 6,728 bytes.
func TestAnswerFitsCloudFormation(t *testing.T) {
	ctx := context.Background()
	cfg, outs := lambdatest.Env(t, "publish", map[string]string{"LAMBDA_TASK_ROOT": t.TempDir()})
	_ = lambdatest.App(t, cfg, outs)
	var (
		mu     sync.Mutex
		bodies [][]byte
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, b)
		mu.Unlock()
	}))
	defer srv.Close()
	raw, err := os.ReadFile("../../internal/publish/testdata/sundialtimers-create.json")
	require.NoError(t, err)
	var ev cfn.Event
	require.NoError(t, json.Unmarshal(raw, &ev))
	var timers []any
	for i := range 20 {
		timers = append(timers, map[string]any{"name": fmt.Sprintf("T%d", i), "schedule": strings.Repeat("<&>", 100),
			"action": map[string]any{"http": map[string]any{"url": "http://127.0.0.1:9/x"}}})
	}
	ev.ResourceProperties["Manifest"] = map[string]any{"timers": timers}
	ev.ResponseURL = srv.URL + "/response?X-Amz-Signature=x"
	payload, err := json.Marshal(ev)
	require.NoError(t, err)
	_, err = lambdatest.Invoke(t, "publish", handler(ctx), 300*time.Second, payload)
	require.NoError(t, err)
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, bodies, 1, "one answer")
	require.LessOrEqual(t, len(bodies[0]), 4096, "the answer as sent")
	var res cfn.Response
	require.NoError(t, json.Unmarshal(bodies[0], &res))
	require.Equal(t, cfn.StatusFailed, res.Status)
	require.Contains(t, res.Reason, `timers[0] "T0": schedule: schedule "<&><&>`)
	require.Contains(t, res.Reason, "(truncated")
}
