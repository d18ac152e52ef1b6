package publish_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/cfn"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/inmem"
	"github.com/sundialhq/sundial/internal/publish"
	"github.com/sundialhq/sundial/internal/timer"
)

// TestHandlerInMemory: a deploy is published once, whatever CloudFormation resends, on the
// in-memory store with a manual clock (TestPublishFunction runs the function on the emulator).
func TestHandlerInMemory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, q := inmem.NewStore(), &inmem.Queue{}
	clock := timer.NewManualClock(time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC))
	path := filepath.Join(t.TempDir(), "timers.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`timers:
  - {name: Init, schedule: "When Published", action: {http: {url: "http://127.0.0.1:9/x"}}}
`), 0o644))
	h := &publish.Handler{Admin: &admin.Service{Store: store, Queue: q, Clock: clock, Shards: 1}, Manifest: path,
		Log: slog.New(slog.DiscardHandler)}
	deploy := func(version string) map[string]any {
		_, data, err := h.Handle(ctx, cfn.Event{RequestType: cfn.RequestUpdate, RequestID: "r-" + version,
			ResourceProperties: map[string]any{"FunctionVersion": version, "DeployId": "d-" + version}})
		require.NoError(t, err)
		return data
	}

	require.EqualValues(t, 1, deploy("1")["Woken"])
	require.Equal(t, clock.Now(), getInstance(t, store, "Init").NextRun, "woken: it runs now")
	clock.Advance(time.Minute)
	require.Equal(t, true, deploy("1")["AlreadyPublished"], "the same deploy again changes nothing")
	require.Equal(t, clock.Now().Add(-time.Minute), getInstance(t, store, "Init").NextRun)
	require.EqualValues(t, 1, deploy("2")["Woken"], "the next deploy wakes it again")
	require.Equal(t, clock.Now(), getInstance(t, store, "Init").NextRun)
}

func getInstance(t *testing.T, s *inmem.Store, name string) timer.Instance {
	t.Helper()
	in, err := s.Get(context.Background(), timer.Key{Timer: name})
	require.NoError(t, err)
	return in
}

// TestPublishedLogLineIsBounded: the "published" log line gives each list of the report as
// its count and a sample of publish.LogSample names, whatever the publish's size — it listed
// every instance (659 KB for the 50,000 of bench publish, built whole in the function's
// memory and sent to CloudWatch Logs as one event).
func TestPublishedLogLineIsBounded(t *testing.T) {
	t.Parallel()
	const timers, tenants = 10, 200
	var doc strings.Builder
	doc.WriteString("tenants:\n")
	for i := range tenants {
		fmt.Fprintf(&doc, "  - t%03d\n", i)
	}
	doc.WriteString("timers:\n")
	for i := range timers {
		fmt.Fprintf(&doc, "  - {name: P%02d, multiTenant: true, schedule: \"every 1h\", action: {http: {url: \"http://127.0.0.1:9/x\"}}}\n", i)
	}
	path := filepath.Join(t.TempDir(), "timers.yaml")
	require.NoError(t, os.WriteFile(path, []byte(doc.String()), 0o644))
	var logged bytes.Buffer
	clock := timer.NewManualClock(time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC))
	h := &publish.Handler{Admin: &admin.Service{Store: inmem.NewStore(), Queue: &inmem.Queue{}, Clock: clock, Shards: 1}, Manifest: path,
		Log: slog.New(slog.NewJSONHandler(&logged, nil))}
	_, data, err := h.Handle(context.Background(), cfn.Event{RequestType: cfn.RequestCreate, RequestID: "r-1",
		ResourceProperties: map[string]any{"FunctionVersion": "1", "DeployId": "d-1"}})
	require.NoError(t, err)
	require.EqualValues(t, timers*tenants, data["Created"])

	type list struct {
		Count  int      `json:"count"`
		Sample []string `json:"sample"`
	}
	var line []byte
	var rec struct {
		Created      list `json:"created"`
		Unchanged    list `json:"unchanged"`
		TenantsAdded list `json:"tenants_added"`
	}
	for l := range bytes.Lines(logged.Bytes()) {
		var head struct {
			Msg string `json:"msg"`
		}
		require.NoError(t, json.Unmarshal(l, &head))
		if head.Msg == "published" {
			line = l
			break
		}
	}
	require.NotNil(t, line, "the publish logged its report: %s", logged.String())
	require.Less(t, len(line), 4096, "the line is a summary, not every name: %d bytes", len(line))
	require.NoError(t, json.Unmarshal(line, &rec))
	require.Equal(t, list{Count: timers * tenants, Sample: []string{"P00@t000", "P00@t001", "P00@t002", "P00@t003", "P00@t004",
		"P00@t005", "P00@t006", "P00@t007", "P00@t008", "P00@t009"}}, rec.Created)
	require.Zero(t, rec.Unchanged.Count)
	require.Empty(t, rec.Unchanged.Sample)
	require.Equal(t, tenants, rec.TenantsAdded.Count)
	require.Len(t, rec.TenantsAdded.Sample, 10, "publish.LogSample names")
}

// A publish stores a timer's dependencies on its instance, and a later publish without them
// removes them; a manifest with a dependency cycle is refused and changes nothing.
func TestHandlerPublishesDeps(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, q := inmem.NewStore(), &inmem.Queue{}
	clock := timer.NewManualClock(time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC))
	path := filepath.Join(t.TempDir(), "timers.yaml")
	h := &publish.Handler{Admin: &admin.Service{Store: store, Queue: q, Clock: clock, Shards: 1}, Manifest: path,
		Log: slog.New(slog.DiscardHandler)}
	deploy := func(version, manifest string) error {
		require.NoError(t, os.WriteFile(path, []byte(manifest), 0o644))
		_, _, err := h.Handle(ctx, cfn.Event{RequestType: cfn.RequestUpdate, RequestID: "r-" + version,
			ResourceProperties: map[string]any{"FunctionVersion": version, "DeployId": "d-" + version}})
		return err
	}
	require.NoError(t, deploy("1", `timers:
  - {name: A, schedule: "02:00", action: {http: {url: "http://127.0.0.1:9/x"}}}
  - {name: C, schedule: "04:00", after: [A, "billing:B"], waitUntil: "06:00", onUpstreamFailed: alert, action: {http: {url: "http://127.0.0.1:9/x"}}}
`))
	require.Equal(t, timer.Deps{After: []timer.Key{{Timer: "A"}, {App: "billing", Timer: "B"}}, WaitUntil: &timer.ClockTime{Hour: 6},
		OnUpstreamFailed: timer.UpstreamAlert}, getInstance(t, store, "C").Deps)

	err := deploy("2", `timers:
  - {name: A, schedule: "02:00", after: [C], action: {http: {url: "http://127.0.0.1:9/x"}}}
  - {name: C, schedule: "04:00", after: [A], action: {http: {url: "http://127.0.0.1:9/x"}}}
`)
	require.ErrorContains(t, err, "after: dependency cycle A → C → A")
	require.True(t, getInstance(t, store, "A").Deps.IsZero(), "a refused manifest changes nothing")

	require.NoError(t, deploy("3", `timers:
  - {name: A, schedule: "02:00", action: {http: {url: "http://127.0.0.1:9/x"}}}
  - {name: C, schedule: "04:00", action: {http: {url: "http://127.0.0.1:9/x"}}}
`))
	require.True(t, getInstance(t, store, "C").Deps.IsZero(), "dropped from the manifest: removed")
}
