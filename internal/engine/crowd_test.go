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
	require.Equal(t, map[time.Duration]int{2 * time.Second: 500, time.Second: 400, 0: 100}, byLead,
		"at 400 claims a second, 1,000 firings are spread over the two seconds before the instant")
}

// A processor whose recent claims were slow sends its follow-ups early by what they took; one
// whose claims were quick, or too few to be a crowd, sends them for their instant.
func TestFollowUpsLeadByRecentClaims(t *testing.T) {
	t.Parallel()
	p, f := setupProcessor(t)
	p.Store = slowClaims{Store: f.Store, clock: f.Clock, took: 1500 * time.Millisecond}
	f.coverUpTo(t, t0.Add(time.Hour)) // the fetch has covered the next runs: the processor sends them
	next := t0.Add(15 * time.Minute)  // every 15m
	delays := map[string]time.Duration{}
	for i := range 11 {
		in := instance(fmt.Sprintf("T%02d", i), t0)
		f.put(in)
		handle(t, p, event(t, scheduled(in)))
		for _, o := range f.Queue.Drain() {
			require.Equal(t, next, o.Firing.DueAt)
			delays[o.Firing.Timer] = next.Sub(f.Clock.Now()) - o.Delay
		}
	}
	for i := range 9 {
		require.Zero(t, delays[fmt.Sprintf("T%02d", i)], "fewer than ten slow claims: no lead")
	}
	// Ten claims of 1.5 s: the follow-up must arrive 1.25 s (1.5 s less the slack) before
	// its instant; sent 14m45s ahead (no fraction), that is two whole seconds; sent 14m43.5s
	// ahead, SQS's truncation already gives half a second, and one more is enough.
	require.Equal(t, 2*time.Second, delays["T09"])
	require.Equal(t, time.Second, delays["T10"])

	f.Clock.Advance(time.Minute) // the crowd is over: its claims leave the window
	p.Store = slowClaims{Store: f.Store, clock: f.Clock, took: time.Millisecond}
	in := instance("Quiet", f.Clock.Now())
	f.put(in)
	handle(t, p, event(t, scheduled(in)))
	out := f.Queue.Drain()
	require.Len(t, out, 1)
	require.Equal(t, out[0].Firing.DueAt.Sub(f.Clock.Now()), out[0].Delay, "quiet again: sent for its instant")
}
