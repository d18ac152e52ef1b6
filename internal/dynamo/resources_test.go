package dynamo_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/actionspec"
	"github.com/sundialhq/sundial/internal/testenv"
	"github.com/sundialhq/sundial/internal/timer"
)

// On DynamoDB, twelve processors racing for a pool of 2 get exactly 2 slots (the
// conditional write on the pool's version); a holder whose lease deadline passed holds
// nothing; a release frees only its own execution's slot, and a release of a slot not held
// writes nothing.
func TestPoolSlotsOnDynamo(t *testing.T) {
	testenv.Integration(t)
	t.Parallel()
	ctx := context.Background()
	s, _ := newStore(t)
	now := time.Date(2026, 11, 27, 4, 0, 0, 0, time.UTC)
	pool := fmt.Sprintf("test/erp-%d", time.Now().UnixNano())
	use := timer.ResourceUse{Pool: pool, Slots: 2}

	var wg sync.WaitGroup
	var mu sync.Mutex
	var got, waited []string
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := timer.SlotHolder{Timer: fmt.Sprintf("T%d", i), Execution: fmt.Sprintf("e%d", i), Until: now.Add(time.Minute)}
			err := s.TakeSlot(ctx, use, h, now)
			mu.Lock()
			defer mu.Unlock()
			var no *timer.ErrNoSlot
			switch {
			case err == nil:
				got = append(got, h.Execution)
			case errors.As(err, &no):
				waited = append(waited, h.Execution)
			default:
				t.Errorf("take %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	require.Len(t, got, 2, "exactly 2 of 12 racing takers hold a slot")
	require.Len(t, waited, 10)
	holders, err := s.SlotHolders(ctx, pool)
	require.NoError(t, err)
	require.Len(t, holders, 2)

	// Another execution's release changes nothing; the holder's own frees its slot.
	require.NoError(t, s.ReleaseSlot(ctx, pool, "e-none"))
	holders, err = s.SlotHolders(ctx, pool)
	require.NoError(t, err)
	require.Len(t, holders, 2)
	require.NoError(t, s.ReleaseSlot(ctx, pool, got[0]))
	holders, err = s.SlotHolders(ctx, pool)
	require.NoError(t, err)
	require.Len(t, holders, 1)
	require.Equal(t, got[1], holders[0].Execution)

	// Past the remaining holder's lease deadline, its slot is free: two new holders fit.
	later := now.Add(time.Minute)
	for _, e := range []string{"n1", "n2"} {
		require.NoError(t, s.TakeSlot(ctx, use, timer.SlotHolder{Timer: e, Execution: e, Until: later.Add(time.Minute)}, later))
	}
	err = s.TakeSlot(ctx, use, timer.SlotHolder{Timer: "n3", Execution: "n3", Until: later.Add(time.Minute)}, later)
	require.EqualError(t, err, fmt.Sprintf("waiting for %s (held by n1, n2)", pool))
}

// A timer's resources are stored with it (created, read back, changed and removed by a
// settings update): the processor's messages carry them from the instance it reads.
func TestPoolResourcesStoredWithTheTimer(t *testing.T) {
	testenv.Integration(t)
	t.Parallel()
	ctx := context.Background()
	s, _ := newStore(t)
	key := timer.Key{App: "pools", Timer: fmt.Sprintf("Uses%d", time.Now().UnixNano())}
	in := timer.Instance{Key: key, Active: true, Settings: timer.Settings{Schedule: "every 1m", Priority: 3, Timeout: time.Minute,
		Action:    actionspec.Spec{HTTP: &actionspec.HTTPSpec{URL: "http://127.0.0.1:9/"}},
		Resources: []timer.ResourceUse{{Pool: "pools/erp", Slots: 2}}}}
	require.NoError(t, s.Create(ctx, in))
	got, err := s.Get(ctx, key)
	require.NoError(t, err)
	require.Equal(t, []timer.ResourceUse{{Pool: "pools/erp", Slots: 2}}, got.Resources)

	st := got.Settings
	st.Resources = []timer.ResourceUse{{Pool: "erp", Slots: 3}}
	_, err = s.UpdateSettings(ctx, key, st, false, time.Time{})
	require.NoError(t, err)
	got, err = s.Get(ctx, key)
	require.NoError(t, err)
	require.Equal(t, []timer.ResourceUse{{Pool: "erp", Slots: 3}}, got.Resources)

	st.Resources = nil
	_, err = s.UpdateSettings(ctx, key, st, false, time.Time{})
	require.NoError(t, err)
	got, err = s.Get(ctx, key)
	require.NoError(t, err)
	require.Empty(t, got.Resources)
}
