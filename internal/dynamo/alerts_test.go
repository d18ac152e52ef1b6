package dynamo_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/testenv"
	"github.com/sundialhq/sundial/internal/timer"
)

// An alert is raised by one write however many raise it at once, re-raised only by the same
// raiser until announced, and resolved once.
func TestAlertRaisedAndResolvedOnce(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	k := timer.Key{App: "billing", Timer: testenv.Unique(t)}
	al := timer.Alert{Key: k, Rule: timer.RuleConsecutiveFailures, Since: time.UnixMilli(1_700_000_000_000).UTC(), ExecutionID: "E1", Detail: "3 in a row"}

	var wg sync.WaitGroup
	var mu sync.Mutex
	won := 0
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			by := "E1"
			if i > 0 {
				by = "other" + string(rune('a'+i))
			}
			ok, err := s.RaiseAlert(ctx, al, by)
			require.NoError(t, err)
			if ok {
				mu.Lock()
				won++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	require.Equal(t, 1, won, "one concurrent raise opens it")

	list, err := s.Alerts(ctx, "billing")
	require.NoError(t, err)
	var mine []timer.Alert
	for _, a := range list {
		if a.Key == k {
			mine = append(mine, a)
		}
	}
	require.Len(t, mine, 1)
	require.Equal(t, al.Since, mine[0].Since)
	require.Equal(t, "3 in a row", mine[0].Detail)

	// Whoever opened it may raise it again until it is announced (a redelivered batch), not after.
	require.NoError(t, s.AnnounceAlert(ctx, k, al.Rule, "E1"))
	for _, by := range []string{"E1", "E2"} {
		ok, err := s.RaiseAlert(ctx, al, by)
		require.NoError(t, err)
		require.False(t, ok, "open and announced: never raised again (%s)", by)
	}

	got, ok, err := s.ResolveAlert(ctx, k, al.Rule)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, al.Since, got.Since)
	_, ok, err = s.ResolveAlert(ctx, k, al.Rule)
	require.NoError(t, err)
	require.False(t, ok, "resolved once")
	ok, err = s.RaiseAlert(ctx, al, "E9")
	require.NoError(t, err)
	require.True(t, ok, "a rule that holds again is raised again")
}

// A redelivered raise whose event was never announced is raised again by the same raiser.
func TestAlertRaiseRedelivered(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	k := timer.Key{Timer: testenv.Unique(t)}
	al := timer.Alert{Key: k, Rule: timer.RuleDurationOver, Since: time.Now().UTC().Truncate(time.Millisecond)}
	for range 2 {
		ok, err := s.RaiseAlert(ctx, al, "E1")
		require.NoError(t, err)
		require.True(t, ok)
	}
	ok, err := s.RaiseAlert(ctx, al, "E2")
	require.NoError(t, err)
	require.False(t, ok)
}

// Watch keeps the first deadline until a success resets it; Overdue finds what passed.
func TestAlertWatch(t *testing.T) {
	s, _ := newStore(t)
	ctx := context.Background()
	k := timer.Key{Timer: testenv.Unique(t), Tenant: "acme"}
	t0 := time.Now().UTC().Truncate(time.Millisecond)
	require.NoError(t, s.Watch(ctx, k, t0.Add(time.Hour), false))
	require.NoError(t, s.Watch(ctx, k, t0.Add(2*time.Hour), false))
	due, err := s.Overdue(ctx, t0.Add(90*time.Minute))
	require.NoError(t, err)
	require.Equal(t, t0.Add(time.Hour), due[k], "the first run's deadline stands")
	require.NoError(t, s.Watch(ctx, k, t0.Add(3*time.Hour), true))
	due, err = s.Overdue(ctx, t0.Add(90*time.Minute))
	require.NoError(t, err)
	require.NotContains(t, due, k, "a success moved it")
	require.NoError(t, s.Unwatch(ctx, k))
	due, err = s.Overdue(ctx, t0.Add(10*time.Hour))
	require.NoError(t, err)
	require.NotContains(t, due, k)
}
