package dynamo_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/actionspec"
	"github.com/sundialhq/sundial/internal/dynamo"
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
			err := s.TakeSlot(ctx, use, h, timer.DefaultPriority, now)
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
		require.NoError(t, s.TakeSlot(ctx, use, timer.SlotHolder{Timer: e, Execution: e, Until: later.Add(time.Minute)}, timer.DefaultPriority, later))
	}
	err = s.TakeSlot(ctx, use, timer.SlotHolder{Timer: "n3", Execution: "n3", Until: later.Add(time.Minute)}, timer.DefaultPriority, later)
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

// On DynamoDB, the waiters' priorities and first waits are stored with the pool: a
// priority-4 firing that waits is passed by a priority-1 newcomer once the slot is free,
// until it has waited 3 aging steps; then it is served first. The holder's take time is
// kept for display.
func TestPoolWaitersByPriorityOnDynamo(t *testing.T) {
	testenv.Integration(t)
	t.Parallel()
	ctx := context.Background()
	s, _ := newStore(t)
	now := time.Date(2026, 11, 27, 4, 0, 0, 0, time.UTC)
	pool := fmt.Sprintf("test/prio-%d", time.Now().UnixNano())
	use := timer.ResourceUse{Pool: pool, Slots: 1}
	take := func(name string, priority int, at time.Time) error {
		return s.TakeSlot(ctx, use, timer.SlotHolder{Timer: name, Execution: "e-" + name + at.Format("150405"), Until: at.Add(time.Minute), Since: at}, priority, at)
	}
	require.NoError(t, take("X", 3, now))
	var no *timer.ErrNoSlot
	require.ErrorAs(t, take("Low", 4, now), &no)
	require.True(t, no.First)
	p, err := s.SlotPool(ctx, pool)
	require.NoError(t, err)
	require.Equal(t, []timer.SlotWaiter{{Timer: "Low", Priority: 4, Since: now, Until: now.Add(timer.SlotWaiterTTL)}}, p.Waiters)
	require.Equal(t, now, p.Holders[0].Since)

	// X finishes; a priority-1 newcomer 2 s later goes before Low, which keeps waiting.
	require.NoError(t, s.ReleaseSlot(ctx, pool, "e-X040000"))
	require.NoError(t, take("H1", 1, now.Add(2*time.Second)))
	require.ErrorAs(t, take("Low", 4, now.Add(timer.SlotAgingStep)), &no)
	require.False(t, no.First, "the same wait")
	require.Equal(t, now, no.Since)
	require.NoError(t, s.ReleaseSlot(ctx, pool, "e-H1040002"))

	// After 3 aging steps Low is at level 1 and first: the next newcomer waits.
	t3 := now.Add(3 * timer.SlotAgingStep)
	require.ErrorAs(t, take("H2", 1, t3), &no)
	require.EqualError(t, no, fmt.Sprintf("waiting for %s (its free slots are owed to earlier or higher-priority waiters)", pool))
	require.NoError(t, take("Low", 4, t3))
	p, err = s.SlotPool(ctx, pool)
	require.NoError(t, err)
	require.Equal(t, "Low", p.Holders[0].Timer)
	require.Equal(t, []string{"H2"}, waiterNames(p.Waiters))
}

func waiterNames(ws []timer.SlotWaiter) []string {
	var out []string
	for _, w := range ws {
		out = append(out, w.Timer)
	}
	return out
}

// The pool write that starts a firing's wait names the waiter (newWaiter, which the log
// writer's stream filter lets through: one Slot Wait Started event per wait); the next
// asks of the same wait and the other pool writes remove it, so their records are
// filtered out. SlotWaitFromImage reads the wait back from the item.
func TestPoolNewWaiterMarksTheWaitsStart(t *testing.T) {
	testenv.Integration(t)
	t.Parallel()
	ctx := context.Background()
	cfg, out := testenv.Stack(t)
	api := dynamodb.NewFromConfig(cfg)
	s, _ := newStore(t)
	now := time.Date(2026, 11, 27, 4, 0, 0, 0, time.UTC)
	pool := fmt.Sprintf("test/nw-%d", time.Now().UnixNano())
	use := timer.ResourceUse{Pool: pool, Slots: 1}
	raw := func() map[string]types.AttributeValue {
		got, err := api.GetItem(ctx, &dynamodb.GetItemInput{TableName: &out.TimersTable, ConsistentRead: aws.Bool(true),
			Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "POOL#" + pool}, "sk": &types.AttributeValueMemberS{Value: "POOL"}}})
		require.NoError(t, err)
		return got.Item
	}
	x := timer.SlotHolder{Timer: "billing:X", Execution: "e-x", Until: now.Add(time.Minute), Since: now}
	require.NoError(t, s.TakeSlot(ctx, use, x, 3, now))
	_, _, ok, err := dynamo.SlotWaitFromImage(raw())
	require.NoError(t, err)
	require.False(t, ok, "a take starts no wait")

	waiter := timer.SlotHolder{Timer: "billing:Post@acme", Execution: "e-p", Until: now.Add(time.Minute), Since: now.Add(time.Second)}
	require.Error(t, s.TakeSlot(ctx, use, waiter, 2, now.Add(time.Second)))
	key, w, ok, err := dynamo.SlotWaitFromImage(raw())
	require.NoError(t, err)
	require.True(t, ok, "the write that starts the wait names it")
	require.Equal(t, timer.Key{App: "billing", Timer: "Post", Tenant: "acme"}, key)
	require.Equal(t, timer.PoolWait{Pool: pool, Since: now.Add(time.Second), Holders: []timer.SlotHolder{x}}, w)

	waiter.Execution = "e-p2"
	require.Error(t, s.TakeSlot(ctx, use, waiter, 2, now.Add(6*time.Second)))
	_, _, ok, err = dynamo.SlotWaitFromImage(raw())
	require.NoError(t, err)
	require.False(t, ok, "a later ask of the same wait is not a new one")
	require.NoError(t, s.ReleaseSlot(ctx, pool, "e-x"))
	_, _, ok, _ = dynamo.SlotWaitFromImage(raw())
	require.False(t, ok)
}
