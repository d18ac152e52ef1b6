package dynamo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/timer"
)

var _ engine.Pools = (*Store)(nil)

// A shared resource's pool is an item of the timers table (pk "POOL#<pool>", sk "POOL",
// kind "pool") holding its holders and a version: a slot is taken and released by a
// conditional write on the version read (optimistic, the processor's GetItem and
// UpdateItem on the timers table), never in a transaction with the claim (the instance
// and the pool may live in different partitions). Like the owner records it has no index
// attribute and no execId, so neither the fetch nor the log stream sees it.
const (
	poolPKPrefix = "POOL#"
	poolSK       = "POOL"
	kindPool     = "pool"
	// poolTries bounds the retries of a write that lost a race with another taker.
	poolTries = 8
)

type poolItem struct {
	timer.Pool
	Ver int64 `dynamodbav:"ver"`
}

func poolKey(pool string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: poolPKPrefix + pool},
		"sk": &types.AttributeValueMemberS{Value: poolSK},
	}
}

// readPool reads a pool strongly consistent (zero: none written yet).
func (s *Store) readPool(ctx context.Context, pool string) (poolItem, error) {
	out, err := s.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.timers, Key: poolKey(pool), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return poolItem{}, fmt.Errorf("read pool %s: %w", pool, err)
	}
	var it poolItem
	if err := attributevalue.UnmarshalMap(out.Item, &it); err != nil {
		return poolItem{}, fmt.Errorf("decode pool %s: %w", pool, err)
	}
	return it, nil
}

// writePool replaces the pool's holders if its version is still it.Ver; false: another
// writer came first.
func (s *Store) writePool(ctx context.Context, pool string, it poolItem, next timer.Pool) (bool, error) {
	n := expression.Name
	if next.Holders == nil {
		next.Holders = []timer.SlotHolder{}
	}
	if next.Waiters == nil {
		next.Waiters = []timer.SlotWaiter{}
	}
	holders, err := attributevalue.Marshal(next.Holders)
	if err != nil {
		return false, fmt.Errorf("encode pool %s: %w", pool, err)
	}
	waiters, err := attributevalue.Marshal(next.Waiters)
	if err != nil {
		return false, fmt.Errorf("encode pool %s: %w", pool, err)
	}
	upd := expression.Set(n("kind"), expression.Value(kindPool)).Set(n("holders"), expression.Value(holders)).
		Set(n("waiters"), expression.Value(waiters)).Set(n("ver"), expression.Value(it.Ver+1))
	cond := expression.AttributeNotExists(n("pk"))
	if it.Ver > 0 {
		cond = expression.Equal(n("ver"), expression.Value(it.Ver))
	}
	_, err = s.update(ctx, s.timers, poolKey(pool), upd, &cond, types.ReturnValueNone)
	if isConditionFailed(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("write pool %s: %w", pool, err)
	}
	return true, nil
}

// TakeSlot implements engine.Pools: a consistent read of the pool and a write conditional on
// its version, also when the firing must wait (it records the waiter, so that it is served
// before later comers).
func (s *Store) TakeSlot(ctx context.Context, use timer.ResourceUse, h timer.SlotHolder, now time.Time) error {
	var waiting error
	for range poolTries {
		it, err := s.readPool(ctx, use.Pool)
		if err != nil {
			return err
		}
		next, taken := timer.TakeSlot(use.Pool, it.Pool, use.Slots, h, now)
		if taken == nil && slices.Equal(next.Holders, it.Holders) && slices.Equal(next.Waiters, it.Waiters) {
			return nil // a retried take
		}
		if ok, err := s.writePool(ctx, use.Pool, it, next); err != nil {
			return err
		} else if ok {
			return taken
		}
		waiting = taken
	}
	if waiting != nil {
		return waiting // it waits, unrecorded this time: it asks again after its wait
	}
	return fmt.Errorf("take a slot of pool %s: %w", use.Pool, errPoolContended)
}

// ReleaseSlot implements engine.Pools (a read, and a write only if execution holds a slot).
func (s *Store) ReleaseSlot(ctx context.Context, pool, execution string) error {
	for range poolTries {
		it, err := s.readPool(ctx, pool)
		if err != nil {
			return err
		}
		next, held := timer.ReleaseSlot(it.Holders, execution)
		if !held {
			return nil
		}
		if ok, err := s.writePool(ctx, pool, it, timer.Pool{Holders: next, Waiters: it.Waiters}); ok || err != nil {
			return err
		}
	}
	return fmt.Errorf("release a slot of pool %s: %w", pool, errPoolContended)
}

// SlotHolders implements engine.Pools.
func (s *Store) SlotHolders(ctx context.Context, pool string) ([]timer.SlotHolder, error) {
	it, err := s.readPool(ctx, pool)
	return it.Holders, err
}

var errPoolContended = errors.New("the pool changed under every try; the message is redelivered")

// setResources writes a timer's resources (uses:) with its settings, or removes them.
func setResources(upd expression.UpdateBuilder, uses []timer.ResourceUse) expression.UpdateBuilder {
	if len(uses) == 0 {
		return upd.Remove(expression.Name("resources"))
	}
	return upd.Set(expression.Name("resources"), expression.Value(uses))
}
