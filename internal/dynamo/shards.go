package dynamo

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/sundialhq/sundial/internal/timer"
)

// Changing DueShards. Every write that puts an instance on the due index places
// it under this deployment's shard count (SetShards), so instances move to the new shards as
// they run. The fetch and recovery read every shard up to the largest count ever used
// (maxShards on the fetch's meta item), so an instance left above a lowered count — one that
// has not run since, or is inactive — is still found; the fetch moves the idle ones down
// (DrainShard) and, once the shards above the count have stayed empty for a grace period,
// lowers maxShards (RetireShards). Raising the count needs nothing more: the new shards are
// read from the first tick of the deployment that uses them.

// SetShards makes the store place instances on `shards` write shards (the stack's
// DueShards); 0 keeps each instance on the shard it was created on.
func (s *Store) SetShards(shards int) { s.shards = shards }

// placement is the update that puts an instance's index attribute (dueShard) on its shard
// under the deployment's count, keeping shardKey in step.
func (s *Store) placement(upd expression.UpdateBuilder, key timer.Key, attr string) expression.UpdateBuilder {
	if s.shards <= 0 {
		return upd.Set(expression.Name(attr), expression.Name("shardKey"))
	}
	sk := expression.Value(shardKey(ShardOf(key, s.shards)))
	return upd.Set(expression.Name(attr), sk).Set(expression.Name("shardKey"), sk)
}

type shardMeta struct {
	MaxShards    int   `dynamodbav:"maxShards"`
	DrainedSince int64 `dynamodbav:"drainedSince"`
}

func (s *Store) shardMeta(ctx context.Context) (shardMeta, error) {
	out, err := s.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.timers, Key: metaKey, ConsistentRead: aws.Bool(true),
		ProjectionExpression: aws.String("maxShards, drainedSince")})
	if err != nil {
		return shardMeta{}, fmt.Errorf("get shard count: %w", err)
	}
	var m shardMeta
	if err := attributevalue.UnmarshalMap(out.Item, &m); err != nil {
		return shardMeta{}, fmt.Errorf("decode shard count: %w", err)
	}
	return m, nil
}

// ShardSpan implements engine.Store.
func (s *Store) ShardSpan(ctx context.Context, shards int) (int, error) {
	m, err := s.shardMeta(ctx)
	if err != nil {
		return 0, err
	}
	if m.MaxShards >= shards {
		return m.MaxShards, nil
	}
	n := expression.Name("maxShards")
	cond := n.AttributeNotExists().Or(n.LessThan(expression.Value(shards)))
	upd := expression.Set(n, expression.Value(shards)).Remove(expression.Name("drainedSince"))
	_, err = s.update(ctx, s.timers, metaKey, upd, &cond, types.ReturnValueNone)
	if isConditionFailed(err) { // raised meanwhile by another deployment's function
		if m, err = s.shardMeta(ctx); err != nil {
			return 0, err
		}
		return max(m.MaxShards, shards), nil
	}
	if err != nil {
		return 0, fmt.Errorf("record shard count %d: %w", shards, err)
	}
	return shards, nil
}

// DrainShard implements engine.Store with one Query of the due index, moving what it finds
// (idle or running: a running instance keeps its entry) with one conditional write each,
// only while the instance is still on that shard.
func (s *Store) DrainShard(ctx context.Context, from, shards, limit int) (bool, error) {
	kc := expression.Key("dueShard").Equal(expression.Value(shardKey(from)))
	expr, err := expression.NewBuilder().WithKeyCondition(kc).Build()
	if err != nil {
		return false, err
	}
	page, err := s.api.Query(ctx, &dynamodb.QueryInput{TableName: &s.timers, IndexName: aws.String(indexDue),
		KeyConditionExpression: expr.KeyCondition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
		Limit: aws.Int32(int32(limit))})
	if err != nil {
		return false, fmt.Errorf("drain shard %d: %w", from, err)
	}
	for _, item := range page.Items {
		key, err := keyOfItem(item)
		if err != nil {
			return false, fmt.Errorf("drain shard %d: %w", from, err)
		}
		to := expression.Value(shardKey(ShardOf(key, shards)))
		cond := expression.Name("dueShard").Equal(expression.Value(shardKey(from)))
		upd := expression.Set(expression.Name("dueShard"), to).Set(expression.Name("shardKey"), to)
		if _, err := s.update(ctx, s.timers, instanceKey(key), upd, &cond, types.ReturnValueNone); err != nil && !isConditionFailed(err) {
			return false, fmt.Errorf("drain shard %d: move %s: %w", from, key, err)
		}
	}
	return len(page.Items) > 0 || page.LastEvaluatedKey != nil, nil
}

// keyOfItem reads an instance's key from its table key (pk "T#<timer>" or "T#<app>:<timer>",
// sk "I#<tenant>"), as
// the keys-only due index returns it.
func keyOfItem(item map[string]types.AttributeValue) (timer.Key, error) {
	var k struct {
		PK string `dynamodbav:"pk"`
		SK string `dynamodbav:"sk"`
	}
	if err := attributevalue.UnmarshalMap(item, &k); err != nil {
		return timer.Key{}, fmt.Errorf("decode key: %w", err)
	}
	name, okT := strings.CutPrefix(k.PK, "T#")
	tenant, okI := strings.CutPrefix(k.SK, instancePrefix)
	if !okT || !okI || name == "" {
		return timer.Key{}, fmt.Errorf("item %q/%q is not a timer instance", k.PK, k.SK)
	}
	app, name := timer.ParseName(name)
	return timer.Key{App: app, Timer: name, Tenant: tenant}, nil
}

// RetireShards implements engine.Store.
func (s *Store) RetireShards(ctx context.Context, span, shards int, empty bool, now time.Time, grace time.Duration) error {
	m, err := s.shardMeta(ctx)
	if err != nil || m.MaxShards != span {
		return err // changed meanwhile: the next tick decides again
	}
	n := expression.Name
	cond := n("maxShards").Equal(expression.Value(span))
	var upd expression.UpdateBuilder
	switch {
	case !empty && m.DrainedSince == 0:
		return nil
	case !empty:
		upd = expression.Remove(n("drainedSince"))
	case m.DrainedSince == 0:
		upd = expression.Set(n("drainedSince"), expression.Value(ms(now)))
	case now.Sub(fromMs(m.DrainedSince)) >= grace:
		upd = expression.Set(n("maxShards"), expression.Value(shards)).Remove(n("drainedSince"))
		cond = cond.And(n("drainedSince").Equal(expression.Value(m.DrainedSince)))
	default:
		return nil
	}
	if _, err := s.update(ctx, s.timers, metaKey, upd, &cond, types.ReturnValueNone); err != nil && !isConditionFailed(err) {
		return fmt.Errorf("retire shards above %d: %w", shards, err)
	}
	return nil
}
