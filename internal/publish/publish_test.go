package publish_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/cfn"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/lambdarun"
	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/app"
	"github.com/sundialhq/sundial/internal/publish"
	"github.com/sundialhq/sundial/internal/testenv"
	"github.com/sundialhq/sundial/internal/timer"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// cloudFormation stands in for the pre-signed S3 URL CloudFormation gives a custom resource:
// it records each response PUT to it.
type cloudFormation struct {
	srv  *httptest.Server
	mu   sync.Mutex
	resp map[string]cfn.Response // by request id
}

func newCloudFormation(t *testing.T) *cloudFormation {
	c := &cloudFormation{resp: map[string]cfn.Response{}}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var res cfn.Response
		if r.Method != http.MethodPut || json.Unmarshal(body, &res) != nil {
			http.Error(w, "want a PUT of a JSON response", http.StatusBadRequest)
			return
		}
		c.mu.Lock()
		c.resp[res.RequestID] = res
		c.mu.Unlock()
	}))
	t.Cleanup(c.srv.Close)
	return c
}

func (c *cloudFormation) response(t *testing.T, id string) cfn.Response {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	res, ok := c.resp[id]
	require.True(t, ok, "the function answered request %s", id)
	return res
}

// The publish function runs as Lambda runs it (lambdarun: a JSON event in, the handler's
// context deadline and request id), on the emulator's stack, answering CloudFormation.
func TestPublishFunction(t *testing.T) {
	ctx := context.Background()
	awsCfg, outs := testenv.Stack(t)
	a, err := app.ForStack(awsCfg, outs, app.Options{Node: "test-publish"})
	require.NoError(t, err)
	dir := t.TempDir()
	path := filepath.Join(dir, "timers.yaml")
	h := &publish.Handler{Admin: a.Admin, Manifest: path, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	fn := lambdarun.NewFunction("sundial-publish", cfn.LambdaWrap(h.Handle), time.Minute)
	cf := newCloudFormation(t)

	name := testenv.Unique(t)
	init, hourly, perTenant := name+"Init", name+"Hourly", name+"PerTenant"
	write := func(doc string) { require.NoError(t, os.WriteFile(path, []byte(doc), 0o644)) }
	good := func(hourlySchedule string) string {
		return `tenants: [acme, globex]
timers:
  - {name: ` + init + `, schedule: "When Published", action: {http: {url: "http://127.0.0.1:9/x"}}}
  - {name: ` + hourly + `, schedule: "` + hourlySchedule + `", timeout: 30s, action: {http: {url: "http://127.0.0.1:9/x"}}}
  - {name: ` + perTenant + `, schedule: "When Published", multiTenant: true, action: {http: {url: "http://127.0.0.1:9/x"}}}
`
	}
	// version is the resource's properties, as template.yaml sets them: the publish function's
	// version and the DeployId; a rollback sends the previous deploy's.
	requests := 0
	invoke := func(typ cfn.RequestType, version string) cfn.Response {
		t.Helper()
		requests++
		id := fmt.Sprintf("request-%d", requests)
		ev := cfn.Event{RequestType: typ, RequestID: id, ResponseURL: cf.srv.URL + "/response?sig=x",
			ResourceType: "Custom::SundialPublish", LogicalResourceID: "TimersPublish", StackID: "arn:aws:cloudformation:us-east-1:000000000000:stack/sundial/1",
			ResourceProperties: map[string]any{"ServiceToken": "arn:aws:lambda:us-east-1:000000000000:function:publish", "FunctionVersion": version, "DeployId": "d-" + version}}
		if typ != cfn.RequestCreate {
			ev.PhysicalResourceID = publish.PhysicalID
		}
		payload, err := json.Marshal(ev)
		require.NoError(t, err)
		_, err = fn.Invoke(ctx, "req-"+id, payload)
		require.NoError(t, err)
		return cf.response(t, id)
	}
	get := func(k timer.Key) timer.Instance {
		t.Helper()
		in, err := a.Store.Get(ctx, k)
		require.NoError(t, err)
		return in
	}

	// Create: every timer is created; the When Published ones run once (per tenant).
	write(good("every 1h"))
	res := invoke(cfn.RequestCreate, "1")
	require.Equal(t, cfn.StatusSuccess, res.Status, res.Reason)
	require.Equal(t, publish.PhysicalID, res.PhysicalResourceID)
	require.EqualValues(t, 4, res.Data["Created"])
	require.EqualValues(t, 3, res.Data["Woken"], "Init, PerTenant@acme, PerTenant@globex")
	require.False(t, get(timer.Key{Timer: perTenant, Tenant: "acme"}).NextRun.IsZero(), "woken: it runs now")

	// The same deploy again (Lambda retrying the event, CloudFormation resending): nothing
	// changes and nothing runs twice.
	res = invoke(cfn.RequestCreate, "1")
	require.Equal(t, cfn.StatusSuccess, res.Status)
	require.Equal(t, true, res.Data["AlreadyPublished"])
	require.Nil(t, res.Data["Woken"])

	// The operator changes Hourly's schedule and deactivates Init; the next deploy changes
	// Hourly's default: the operator's values survive.
	_, err = a.Admin.Edit(ctx, timer.Key{Timer: hourly}, admin.Edit{Schedule: ptr("every 5m"), By: "test"})
	require.NoError(t, err)
	_, err = a.Admin.SetActive(ctx, timer.Key{Timer: init}, false)
	require.NoError(t, err)
	write(good("every 2h"))
	res = invoke(cfn.RequestUpdate, "2")
	require.Equal(t, cfn.StatusSuccess, res.Status, res.Reason)
	require.Equal(t, publish.PhysicalID, res.PhysicalResourceID, "the same resource: CloudFormation deletes nothing")
	require.Equal(t, "every 5m", get(timer.Key{Timer: hourly}).Schedule)
	require.False(t, get(timer.Key{Timer: init}).Active)
	require.EqualValues(t, 2, res.Data["Woken"], "the deactivated Init is not woken; the tenants' instances are")

	// An invalid manifest fails the deploy, naming the timer and the field; nothing changes.
	before := map[string]timer.Instance{}
	for _, k := range []timer.Key{{Timer: init}, {Timer: hourly}, {Timer: perTenant, Tenant: "acme"}} {
		before[k.String()] = get(k)
	}
	write(strings.Replace(good("every 2h"), `"every 2h"`, `"25:00"`, 1) + "  - {name: Extra, schedule: \"every 1m\", priority: 9, action: {http: {url: \"http://127.0.0.1:9/x\"}}}\n")
	res = invoke(cfn.RequestUpdate, "3")
	require.Equal(t, cfn.StatusFailed, res.Status)
	require.Contains(t, res.Reason, `timers[1] "`+hourly+`": schedule`)
	require.Contains(t, res.Reason, `timers[3] "Extra": priority: 9 is out of range`)
	for k, in := range before {
		key, err := timer.ParseKey(k)
		require.NoError(t, err)
		require.Equal(t, in, get(key), "an invalid manifest changed %s", k)
	}
	_, err = a.Store.Get(ctx, timer.Key{Timer: "Extra"})
	require.ErrorIs(t, err, timer.ErrNotFound)

	// CloudFormation rolls the failed update back: an Update with deploy 2's properties, run by
	// the function that still carries the invalid manifest. Deploy 2 was published: it stands,
	// the rollback succeeds, and no When Published timer runs again.
	res = invoke(cfn.RequestUpdate, "2")
	require.Equal(t, cfn.StatusSuccess, res.Status, res.Reason)
	require.Equal(t, true, res.Data["AlreadyPublished"])
	for k, in := range before {
		key, err := timer.ParseKey(k)
		require.NoError(t, err)
		require.Equal(t, in, get(key), "the rollback changed %s", k)
	}

	// A missing manifest fails too (a packaging mistake must not deploy silently).
	require.NoError(t, os.Remove(path))
	res = invoke(cfn.RequestUpdate, "4")
	require.Equal(t, cfn.StatusFailed, res.Status)
	require.Contains(t, res.Reason, "timers.yaml")

	// Delete succeeds and leaves the timers (and their history) alone.
	res = invoke(cfn.RequestDelete, "4")
	require.Equal(t, cfn.StatusSuccess, res.Status)
	require.True(t, get(timer.Key{Timer: hourly}).Active)
}

func TestDeployKey(t *testing.T) {
	ev := func(id string, props map[string]any) cfn.Event {
		return cfn.Event{RequestID: id, ResourceProperties: props}
	}
	a := publish.DeployKey(ev("r1", map[string]any{"FunctionVersion": "3", "DeployId": "x"}))
	require.Equal(t, a, publish.DeployKey(ev("r2", map[string]any{"FunctionVersion": "3", "DeployId": "x"})), "the same deploy, another request")
	require.NotEqual(t, a, publish.DeployKey(ev("r1", map[string]any{"FunctionVersion": "4", "DeployId": "x"})))
	require.NotEqual(t, a, publish.DeployKey(ev("r1", map[string]any{"FunctionVersion": "3", "DeployId": "y"})))
	require.Equal(t, "request-r9", publish.DeployKey(ev("r9", nil)), "no properties: the request")
}

func TestManifestPath(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	require.Equal(t, "/var/task/timers.yaml", publish.ManifestPath(env(map[string]string{"LAMBDA_TASK_ROOT": "/var/task"})))
	require.Equal(t, "/x/m.yaml", publish.ManifestPath(env(map[string]string{"LAMBDA_TASK_ROOT": "/var/task", "SUNDIAL_MANIFEST": "/x/m.yaml"})))
	require.Equal(t, "timers.yaml", publish.ManifestPath(env(nil)))
}

func ptr[T any](v T) *T { return &v }
