package main

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/functions/internal/lambdatest"
	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// The sample scheduled event goes through the handler main.go starts: the tick advances the
// watermark one lookahead (two ticks) past now and enqueues the timer due within it.
func TestSampleEvent(t *testing.T) {
	ctx := context.Background()
	cfg, outs := lambdatest.Env(t, "fetch", nil)
	raw := lambdatest.ScheduledEvent(t)

	a := lambdatest.App(t, cfg, outs)
	name := testenv.Unique(t)
	lambdatest.Sync(t, a, `timers:
  - {name: `+name+`, schedule: "every 1m", action: {http: {url: "http://127.0.0.1:9/x"}}}
`)
	before, err := a.Store.FetchState(ctx)
	require.NoError(t, err)

	began := time.Now()
	out, err := lambdatest.Invoke(t, "fetch", handler(ctx), time.Minute, raw)
	require.NoError(t, err)
	var st engine.FetchStats
	require.NoError(t, json.Unmarshal(out, &st))

	after, err := a.Store.FetchState(ctx)
	require.NoError(t, err)
	require.True(t, after.Watermark.After(before.Watermark), "the watermark moved: %s -> %s", before.Watermark, after.Watermark)
	require.Equal(t, st.To.UnixMilli(), after.Watermark.UnixMilli(), "the handler reports the watermark it wrote")
	require.WithinDuration(t, began.Add(2*time.Minute), after.Watermark, 10*time.Second, "lookahead: two ticks of 60s")
	require.GreaterOrEqual(t, st.Due, 1, "%s is due within the lookahead", name)
	require.Equal(t, st.Due, st.Sent)
}
