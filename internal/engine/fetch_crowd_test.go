package engine_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/engine"
)

// A crowded second's firings are sent early enough to be claimed before their instant, in
// priority order; a lone firing is sent for its instant as before.
func TestFetchSendsACrowdedSecondEarly(t *testing.T) {
	t.Parallel()
	fetch, f := setupFetcher(t)
	fetch.ClaimRate = 400
	fetch.SendConcurrency = 1 // the order checked below is the order the batches are sent in
	crowd := t0.Add(30 * time.Second)
	for i := range 1000 {
		in := instance(fmt.Sprintf("Crowd%04d", i), crowd)
		in.Shard = i % shards
		if i < 10 {
			in.Priority = 1 // claimed first: the most lead
		}
		f.put(in)
	}
	f.put(instance("Lone", t0.Add(40*time.Second)))
	_, err := fetch.Run(context.Background())
	require.NoError(t, err)

	sent := f.Queue.Drain()
	require.Len(t, sent, 1001)
	byLead := map[time.Duration]int{}
	for i, o := range sent {
		if o.Firing.Timer == "Lone" {
			require.Equal(t, 40*time.Second, o.Delay, "alone in its second: no lead")
			continue
		}
		require.Equal(t, crowd, o.Firing.DueAt, "the firing is still due at its instant")
		lead := 30*time.Second - o.Delay
		byLead[lead]++
		if i > 0 && sent[i-1].Firing.Timer != "Lone" {
			require.LessOrEqual(t, lead, 30*time.Second-sent[i-1].Delay, "lead falls along the claim order")
		}
		if o.Priority == 1 {
			require.Equal(t, engine.MaxLead, lead, o.Firing.Timer)
		}
	}
	require.Equal(t, map[time.Duration]int{time.Second: 900, 0: 100}, byLead,
		"at 400 claims a second, all but the last 100 of 1,000 firings are sent a second early")
}
