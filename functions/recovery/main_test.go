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
	"github.com/sundialhq/sundial/internal/timer"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// The sample scheduled event goes through the handler main.go starts: the sweep takes back a
// claim whose processor died an hour ago (its lease long expired) and frees the timer.
func TestSampleEvent(t *testing.T) {
	ctx := context.Background()
	cfg, outs := lambdatest.Env(t, "recovery", nil)
	raw := lambdatest.ScheduledEvent(t)

	a := lambdatest.App(t, cfg, outs)
	name := testenv.Unique(t)
	lambdatest.Sync(t, a, `timers:
  - {name: `+name+`, schedule: "every 1m", timeout: 10s, action: {http: {url: "http://127.0.0.1:9/x"}}}
`)
	key := timer.Key{Timer: name}
	// The firing was due an hour ago and claimed then by a processor that died.
	hourAgo := time.Now().Add(-time.Hour).UTC().Truncate(time.Millisecond)
	in, err := a.Store.SetNextRun(ctx, key, hourAgo, false)
	require.NoError(t, err)
	claimed, err := a.Store.Claim(ctx, key, timer.Claim{Due: in.NextRun, ScheduledAt: in.NextRun, Attempt: 1,
		ExecutionID: "dead-execution", By: "a processor that died", Now: hourAgo})
	require.NoError(t, err)
	require.True(t, claimed.LeaseExpiresAt.Before(time.Now()), "the lease has expired")

	out, err := lambdatest.Invoke(t, "recovery", handler(ctx), time.Minute, raw)
	require.NoError(t, err)
	var st engine.RecoveryStats
	require.NoError(t, json.Unmarshal(out, &st))
	require.GreaterOrEqual(t, st.Recovered, 1)

	after, err := a.Store.Get(ctx, key)
	require.NoError(t, err)
	require.True(t, after.IsRunningSince.IsZero(), "the dead claim is released")
	require.Empty(t, after.IsRunningBy)
}
