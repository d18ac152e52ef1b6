package engine

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/timer"
)

func TestWholeLead(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	for _, c := range []struct {
		name        string
		need, ahead time.Duration
		want        time.Duration
	}{
		{"a lone claim is not worth a lead", 5 * ms, 30 * time.Second, 0},
		{"within the slack", LeadSlack, 30 * time.Second, 0},
		{"the truncated fraction covers it", 700 * ms, 30*time.Second + 600*ms, 0},
		{"a whole second where the fraction falls short", 700 * ms, 30*time.Second + 300*ms, time.Second},
		{"exactly whole seconds ahead: no fraction", 1000 * ms, 30 * time.Second, time.Second},
		{"capped at MaxLead", 10 * time.Second, time.Minute, MaxLead},
		{"never more than the delay there is", 10 * time.Second, 1*time.Second + 500*ms, time.Second},
		{"no whole second to take", 10 * time.Second, 900 * ms, 0},
		{"due now: nothing to take", 10 * time.Second, 400 * ms, 0},
	} {
		require.Equal(t, c.want, wholeLead(c.need, c.ahead), c.name)
	}
}

func TestLeadFor(t *testing.T) {
	t.Parallel()
	ahead := 30 * time.Second // no fraction: every lead is the fetch's
	t.Run("ACrowdedSecondIsSpreadHighestPriorityEarliest", func(t *testing.T) {
		leads := make([]time.Duration, 1000)
		for i := range leads {
			leads[i] = leadFor(i, 1000, 400, ahead)
		}
		// The i-th needs (1000−i)/400 s: the first 900 need more than the 0.25 s of slack (a
		// second, MaxLead), the last 100 are claimed within it (none).
		require.Equal(t, MaxLead, leads[0])
		require.Equal(t, time.Second, leads[899])
		require.Equal(t, time.Duration(0), leads[900])
		require.Equal(t, time.Duration(0), leads[999])
		for i := 1; i < len(leads); i++ {
			require.LessOrEqual(t, leads[i], leads[i-1], "a later place in the claim order never gets more lead")
		}
	})
	t.Run("ASecondTheStackClaimsInTimeGetsNone", func(t *testing.T) {
		for i := range 100 {
			require.Zero(t, leadFor(i, 100, 400, ahead))
		}
	})
	t.Run("NoRateNoLead", func(t *testing.T) {
		require.Zero(t, leadFor(0, 1000, 0, ahead))
		require.Zero(t, leadFor(0, 1000, -1, ahead))
	})
}

// watermarkStore counts watermark reads and holds each until released.
type watermarkStore struct {
	Store
	reads   atomic.Int64
	release chan struct{}
}

func (s *watermarkStore) Watermark(context.Context) (time.Time, error) {
	s.reads.Add(1)
	<-s.release
	return time.Date(2026, 11, 26, 12, 2, 0, 0, time.UTC), nil
}

// Finishes that find the watermark stale together make one read: the others use the value
// it replaces while it is under way.
func TestWatermarkReadOnceWhileStale(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	clock := timer.NewManualClock(t0)
	st := &watermarkStore{release: make(chan struct{})}
	f := &finisher{store: st, clock: clock, log: slog.New(slog.DiscardHandler)}
	close(st.release)
	require.Equal(t, t0.Add(2*time.Minute), f.watermark(context.Background()), "the first read")
	st.release = make(chan struct{})
	clock.Advance(watermarkFresh + time.Second) // stale now

	var wg sync.WaitGroup
	started := make(chan struct{})
	wg.Go(func() {
		close(started)
		f.watermark(context.Background()) // the refresh, held by the store
	})
	<-started
	require.Eventually(t, func() bool { return st.reads.Load() == 2 }, 5*time.Second, time.Millisecond)
	for range 50 {
		wg.Go(func() {
			require.Equal(t, t0.Add(2*time.Minute), f.watermark(context.Background()), "the value being replaced")
		})
	}
	time.Sleep(20 * time.Millisecond)
	close(st.release)
	wg.Wait()
	require.Equal(t, int64(2), st.reads.Load(), "one read for the 51 finishes that found it stale")
}
