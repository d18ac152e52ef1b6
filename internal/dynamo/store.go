// Package dynamo is the DynamoDB adapter: timer instances with their fenced transitions as
// conditional writes, the sparse due and running indexes, and the execution log.
package dynamo

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/timer"
)

var _ engine.Store = (*Store)(nil)

// API is the part of the DynamoDB client the store uses (a fault-injecting wrapper fits here).
type API interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
	Query(ctx context.Context, in *dynamodb.QueryInput, optFns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	Scan(ctx context.Context, in *dynamodb.ScanInput, optFns ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
	BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
	BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error)
	TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, optFns ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
}

// Store implements engine.Store (and the operator's operations in admin.go) on two tables.
type Store struct {
	api       API
	timers    string
	logs      string
	retention time.Duration
	shards    int // see SetShards
}

// New returns a store on the given tables; log items expire after retention.
func New(api API, timersTable, logTable string, retention time.Duration) *Store {
	return &Store{api: api, timers: timersTable, logs: logTable, retention: retention}
}

var metaKey = map[string]types.AttributeValue{
	"pk": &types.AttributeValueMemberS{Value: "META"},
	"sk": &types.AttributeValueMemberS{Value: "FETCH"},
}

func instanceKey(k timer.Key) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: pk(k)},
		"sk": &types.AttributeValueMemberS{Value: sk(k.Tenant)},
	}
}

// AdvanceWatermark implements engine.Store; the watermark only moves forward.
func (s *Store) AdvanceWatermark(ctx context.Context, to, now time.Time) (time.Time, error) {
	prev, _, err := s.AdvanceWatermarkMarks(ctx, to, now)
	return prev, err
}

// AdvanceWatermarkMarks implements engine.CalendarMarker: AdvanceWatermark, and the
// calendar edits in transit (timer.CalendarMark) the watermark item carries, read back
// from the same write (ReturnValues ALL_OLD): the fetch learns of them with no request
// of its own.
func (s *Store) AdvanceWatermarkMarks(ctx context.Context, to, now time.Time) (time.Time, []timer.CalendarMark, error) {
	n := expression.Name
	cond := n("watermark").AttributeNotExists().Or(n("watermark").LessThan(expression.Value(ms(to))))
	// prevWatermark keeps what this advance replaced (the right-hand side reads the item as it
	// was before the update), so that a tick whose reply was lost can still learn its window.
	tick := rand.Text() // identifies this advance, whose SDK retries send the same request
	upd := expression.Set(n("prevWatermark"), expression.IfNotExists(n("watermark"), expression.Value(0))).
		Set(n("watermark"), expression.Value(ms(to))).Set(n("lastTick"), expression.Value(ms(now))).
		Set(n("tickId"), expression.Value(tick))
	out, err := s.update(ctx, s.timers, metaKey, upd, &cond, types.ReturnValueAllOld)
	if isConditionFailed(err) {
		var cur struct {
			PrevWatermark int64  `dynamodbav:"prevWatermark"`
			TickID        string `dynamodbav:"tickId"`
		}
		if old, ok := conditionOld(err); ok && attributevalue.UnmarshalMap(old, &cur) == nil && cur.TickID == tick {
			// This very advance was applied by an earlier attempt whose reply was lost: its
			// window still has to be queried, or its firings would wait for recovery.
			return fromMs(cur.PrevWatermark), calendarMarks(old), nil
		}
		wm, err := s.Watermark(ctx) // already at or past `to`: report it, the caller skips the tick
		return wm, nil, err
	}
	if err != nil {
		return time.Time{}, nil, err
	}
	var old struct {
		Watermark int64 `dynamodbav:"watermark"`
	}
	if err := attributevalue.UnmarshalMap(out.Attributes, &old); err != nil {
		return time.Time{}, nil, fmt.Errorf("decode watermark: %w", err)
	}
	return fromMs(old.Watermark), calendarMarks(out.Attributes), nil
}

// RestoreWatermark implements engine.Store.
func (s *Store) RestoreWatermark(ctx context.Context, prev, to time.Time) error {
	cond := expression.Name("watermark").Equal(expression.Value(ms(to)))
	upd := expression.Remove(expression.Name("watermark"))
	if !prev.IsZero() {
		upd = expression.Set(expression.Name("watermark"), expression.Value(ms(prev)))
	}
	_, err := s.update(ctx, s.timers, metaKey, upd, &cond, types.ReturnValueNone)
	if isConditionFailed(err) {
		return nil // another tick moved it on; nothing to give back
	}
	return err
}

// Watermark implements engine.Store.
func (s *Store) Watermark(ctx context.Context) (time.Time, error) {
	wm, _, err := s.WatermarkMarks(ctx)
	return wm, err
}

// WatermarkMarks implements engine.CalendarReader: Watermark, and the calendar edits in
// transit the same item carries (timer.CalendarMark), from the same GetItem.
func (s *Store) WatermarkMarks(ctx context.Context) (time.Time, []timer.CalendarMark, error) {
	out, err := s.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.timers, Key: metaKey, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return time.Time{}, nil, fmt.Errorf("get watermark: %w", err)
	}
	var m struct {
		Watermark int64 `dynamodbav:"watermark"`
	}
	if err := attributevalue.UnmarshalMap(out.Item, &m); err != nil {
		return time.Time{}, nil, fmt.Errorf("decode watermark: %w", err)
	}
	return fromMs(m.Watermark), calendarMarks(out.Item), nil
}

// QueryDue implements engine.Store: one Query of the due index for the keys in the window,
// then the items, read strongly consistent (BatchGetItem with ConsistentRead). The index is
// eventually consistent and can lag the items (engine.Fetcher.Run waits for it), but which
// items are sent is decided on the items as they are: an eventually consistent read could
// answer an instance as it was before a finish written just before the tick (still running),
// and the firing would be left out of its only window. An index key can be earlier than the
// instance's next run (Store.Finish), and items change between the two reads, so what is
// returned is checked against the item itself.
func (s *Store) QueryDue(ctx context.Context, shard int, after, upTo time.Time) ([]timer.Instance, error) {
	if !after.IsZero() && !after.Before(upTo) {
		return nil, nil // an empty window (DynamoDB refuses BETWEEN with bounds reversed)
	}
	ins, err := s.readDueIndex(ctx, shard, after, upTo, true)
	if err != nil {
		return nil, err
	}
	out := ins[:0]
	for _, in := range ins {
		if in.Active && !in.Running() && !in.NextRun.IsZero() &&
			(after.IsZero() || in.NextRun.After(after)) && !in.NextRun.After(upTo) {
			out = append(out, in)
		}
	}
	return out, nil
}

// QueryPast implements engine.Store from the same index: every instance keyed at or before
// now, running ones included (a running instance keeps its entry, keyed at or before the
// instant it was claimed for, hence before its lease's end). The items are read eventually
// consistent (half the read units: a sweep reads every instance keyed in the past): every
// write recovery makes is conditional on what it decided from (a lease it ends must still
// have expired, a firing it re-sends must still be idle at that next run), so a stale read
// only defers a decision to the next sweep.
func (s *Store) QueryPast(ctx context.Context, shard int, now time.Time) ([]timer.Instance, error) {
	return s.readDueIndex(ctx, shard, time.Time{}, now, false)
}

// readDueIndex reads the instances whose due index key in `shard` lies in (after, upTo],
// strongly consistent if consistent.
func (s *Store) readDueIndex(ctx context.Context, shard int, after, upTo time.Time, consistent bool) ([]timer.Instance, error) {
	kc := expression.Key("dueShard").Equal(expression.Value(shardKey(shard)))
	if after.IsZero() {
		kc = kc.And(expression.Key("dueAt").LessThanEqual(expression.Value(ms(upTo))))
	} else {
		kc = kc.And(expression.Key("dueAt").Between(expression.Value(ms(after)+1), expression.Value(ms(upTo))))
	}
	expr, err := expression.NewBuilder().WithKeyCondition(kc).Build()
	if err != nil {
		return nil, fmt.Errorf("build query: %w", err)
	}
	p := dynamodb.NewQueryPaginator(s.api, &dynamodb.QueryInput{
		TableName: &s.timers, IndexName: aws.String(indexDue),
		KeyConditionExpression:    expr.KeyCondition(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
	})
	var keys []map[string]types.AttributeValue
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("query due index: %w", err)
		}
		for _, it := range page.Items {
			keys = append(keys, map[string]types.AttributeValue{"pk": it["pk"], "sk": it["sk"]})
		}
	}
	// Each response is decoded as it comes and its attribute maps dropped: a window of 50,000
	// firings held as raw items needed about 370 MB, above the fetch function's 128 MB.
	out := make([]timer.Instance, 0, len(keys))
	err = s.batchGetEach(ctx, s.timers, keys, consistent, func(items []map[string]types.AttributeValue) error {
		for _, item := range items {
			in, err := decodeInstance(item)
			if err != nil {
				return err
			}
			out = append(out, in)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// batchGet reads items by key (strongly consistent if consistent), 100 keys a request, until
// DynamoDB has answered every key (UnprocessedKeys are asked again after a pause). Items that
// are not there are left out.
func (s *Store) batchGet(ctx context.Context, table string, keys []map[string]types.AttributeValue, consistent bool) ([]map[string]types.AttributeValue, error) {
	var out []map[string]types.AttributeValue
	err := s.batchGetEach(ctx, table, keys, consistent, func(items []map[string]types.AttributeValue) error {
		out = append(out, items...)
		return nil
	})
	return out, err
}

// batchGetEach is batchGet handing each response's items to each as they come.
func (s *Store) batchGetEach(ctx context.Context, table string, keys []map[string]types.AttributeValue, consistent bool, each func([]map[string]types.AttributeValue) error) error {
	for len(keys) > 0 {
		n := min(len(keys), 100)
		req := map[string]types.KeysAndAttributes{table: {Keys: keys[:n], ConsistentRead: aws.Bool(consistent)}}
		keys = keys[n:]
		for attempt := 0; len(req) > 0; attempt++ {
			if attempt > 0 {
				if err := pause(ctx, attempt); err != nil {
					return fmt.Errorf("read %s items: %w", table, err)
				}
			}
			res, err := s.api.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: req})
			if err != nil {
				return fmt.Errorf("read %s items: %w", table, err)
			}
			if err := each(res.Responses[table]); err != nil {
				return err
			}
			req = res.UnprocessedKeys
		}
	}
	return nil
}

// pause waits before retrying the unprocessed part of a batch request: 50 ms doubling, at
// most 2 s, as DynamoDB asks (exponential backoff).
func pause(ctx context.Context, attempt int) error {
	d := min(50*time.Millisecond<<min(attempt-1, 6), 2*time.Second)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Claim implements engine.Store: one conditional UpdateItem that takes the lease, moves
// nextRun aside and bumps the version, returning the whole instance. It changes no key of the
// due index (the instance stays there, where recovery looks for expired leases), so it
// writes the item only: one write unit for an item up to 1 KB.
func (s *Store) Claim(ctx context.Context, key timer.Key, c timer.Claim) (timer.Instance, error) {
	n := expression.Name
	cond := n("active").Equal(expression.Value(true)).
		And(n("execId").AttributeNotExists())
	if c.Backfill != "" {
		// A backfill firing: guarded by the instance's backfill cursor, not by nextRun, which
		// is set aside (if any) as a scheduled claim does.
		cond = cond.And(n("backfill.id").Equal(expression.Value(c.Backfill))).
			And(n("backfill.next").Equal(expression.Value(ms(c.ScheduledAt)))).
			And(n("backfill.attempt").Equal(expression.Value(c.Attempt))).
			And(n("backfill.waiting").AttributeNotExists()).
			And(n("backfill.cancelled").AttributeNotExists())
	} else {
		cond = cond.And(n("nextRun").Equal(expression.Value(ms(c.Due))))
	}
	upd := expression.Set(n("isRunningSince"), expression.Value(ms(c.Now))).
		Set(n("isRunningBy"), expression.Value(c.By)).
		Set(n("execId"), expression.Value(c.ExecutionID)).
		Set(n("leaseExpiresAt"), n("leaseMs").Plus(expression.Value(ms(c.Now)))).
		Set(n("leaseDeadline"), n("leaseMs").Plus(expression.Value(ms(c.Now)))).
		Set(n("runScheduledAt"), expression.Value(ms(c.ScheduledAt))).
		Set(n("runAttempt"), expression.Value(c.Attempt)).
		Set(n("version"), n("version").Plus(expression.Value(1))).
		Remove(n("nextRun"))
	if c.Backfill != "" {
		// The timer's pending retry (if any) is not this run's: it stays for when it ends.
		upd = upd.Set(n("runBackfill"), expression.Value(c.Backfill)).
			Set(n("claimedNextRun"), expression.IfNotExists(n("nextRun"), expression.Value(0))) // 0: none
	} else {
		upd = upd.Set(n("claimedNextRun"), n("nextRun")).
			Remove(n("pendingScheduledAt")).Remove(n("pendingAttempt"))
	}
	out, err := s.update(ctx, s.timers, instanceKey(key), upd, &cond, types.ReturnValueAllNew)
	if isConditionFailed(err) {
		old, ok := conditionOld(err)
		if ok && ownClaim(old, c.ExecutionID) {
			// This very claim was applied by an earlier attempt whose reply was lost (a 5xx or
			// a timeout after DynamoDB wrote it; the SDK retried): the execution owns the timer.
			return decodeInstance(old)
		}
		if !ok {
			if _, gerr := s.Get(ctx, key); errors.Is(gerr, timer.ErrNotFound) {
				return timer.Instance{}, gerr
			}
		} else if len(old) == 0 {
			return timer.Instance{}, fmt.Errorf("%w: %s", timer.ErrNotFound, key)
		}
		if c.Backfill != "" {
			return timer.Instance{}, fmt.Errorf("%w: %s is running, inactive, or its backfill %s is no longer at %s attempt %d", timer.ErrClaimLost, key,
				c.Backfill, c.ScheduledAt.UTC().Format(time.RFC3339), c.Attempt)
		}
		return timer.Instance{}, fmt.Errorf("%w: %s is running, inactive or its next run is no longer %s", timer.ErrClaimLost, key, c.Due.UTC().Format(time.RFC3339Nano))
	}
	if err != nil {
		return timer.Instance{}, fmt.Errorf("claim %s: %w", key, err)
	}
	return decodeInstance(out.Attributes)
}

// ExtendLease implements engine.Store (async heartbeats); the version is not bumped, so the
// execution's fence stays valid. The condition holds the lease to the execution's deadline
// (leaseDeadline, written by the claim as isRunningSince + leaseMs, the timeout × 1.2 then in
// force), whatever the caller asks: a stale or buggy action cannot keep the timer forever; and
// it extends only a lease that lives (leaseExpiresAt > now): once expired, recovery may be
// ending the execution, and a heartbeat must not revive it. timer.ErrFenceLost if the
// execution no longer holds the instance, timer.ErrLeaseExpired if its lease expired,
// timer.ErrPastDeadline if `until` is past the deadline, timer.ErrStopped if a stop was
// requested (RequestStop: the caller ends the execution as stopped).
func (s *Store) ExtendLease(ctx context.Context, key timer.Key, fence timer.Fence, until, now time.Time) error {
	return s.extendLease(ctx, key, fence, until, now, nil)
}

// ReportProgress is ExtendLease that also records the execution's progress, in the same
// conditional write (a heartbeat with a progress costs what a heartbeat costs).
func (s *Store) ReportProgress(ctx context.Context, key timer.Key, fence timer.Fence, until, now time.Time, p timer.Progress) error {
	return s.extendLease(ctx, key, fence, until, now, &p)
}

func (s *Store) extendLease(ctx context.Context, key timer.Key, fence timer.Fence, until, now time.Time, p *timer.Progress) error {
	n := expression.Name
	owns := n("execId").Equal(expression.Value(fence.ExecutionID)).And(n("version").Equal(expression.Value(fence.Version)))
	cond := owns.And(n("leaseExpiresAt").GreaterThan(expression.Value(ms(now)))).
		And(n("leaseDeadline").GreaterThanEqual(expression.Value(ms(until)))).
		And(n("stopAt").AttributeNotExists())
	upd := expression.Set(n("leaseExpiresAt"), expression.Value(ms(until)))
	if p != nil {
		upd = upd.Set(n("runProgress"), expression.Value(progressItem{Fraction: p.Fraction, Note: p.Note, At: ms(p.At)}))
	}
	_, err := s.update(ctx, s.timers, instanceKey(key), upd, &cond, types.ReturnValueNone)
	if isConditionFailed(err) {
		old, ok := conditionOld(err)
		var in timer.Instance
		if ok {
			if len(old) == 0 {
				return timer.ErrFenceLost
			}
			var derr error
			if in, derr = decodeInstance(old); derr != nil {
				return timer.ErrFenceLost
			}
		} else {
			var gerr error
			in, gerr = s.Get(ctx, key)
			if errors.Is(gerr, timer.ErrNotFound) {
				return timer.ErrFenceLost
			}
			if gerr != nil {
				return fmt.Errorf("extend lease %s: %w", key, gerr)
			}
		}
		switch {
		case in.Fence() != fence:
			return timer.ErrFenceLost
		case in.Stop != nil:
			return fmt.Errorf("%w: %s: %s", timer.ErrStopped, key, in.Stop.Reason())
		case !in.LeaseExpiresAt.After(now):
			return leaseExpired(key, in.LeaseExpiresAt, now)
		}
		return pastDeadline(key, until, in.LeaseDeadline)
	}
	if err != nil {
		return fmt.Errorf("extend lease %s: %w", key, err)
	}
	return nil
}

func leaseExpired(key timer.Key, expired, now time.Time) error {
	return fmt.Errorf("%w: %s's lease expired at %s (now %s)", timer.ErrLeaseExpired, key,
		expired.UTC().Format(time.RFC3339Nano), now.UTC().Format(time.RFC3339Nano))
}

func pastDeadline(key timer.Key, until, deadline time.Time) error {
	return fmt.Errorf("%w: %s asked until %s, deadline %s", timer.ErrPastDeadline, key,
		until.UTC().Format(time.RFC3339Nano), deadline.UTC().Format(time.RFC3339Nano))
}

// Get implements engine.Store.
func (s *Store) Get(ctx context.Context, key timer.Key) (timer.Instance, error) {
	out, err := s.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.timers, Key: instanceKey(key), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return timer.Instance{}, fmt.Errorf("get %s: %w", key, err)
	}
	if len(out.Item) == 0 {
		return timer.Instance{}, fmt.Errorf("%w: %s", timer.ErrNotFound, key)
	}
	return decodeInstance(out.Item)
}

// MarkRequeued implements engine.Store.
func (s *Store) MarkRequeued(ctx context.Context, key timer.Key, due, now time.Time) error {
	n := expression.Name
	cond := n("nextRun").Equal(expression.Value(ms(due))).And(n("execId").AttributeNotExists())
	upd := expression.Set(n("requeuedAt"), expression.Value(ms(now)))
	_, err := s.update(ctx, s.timers, instanceKey(key), upd, &cond, types.ReturnValueNone)
	if isConditionFailed(err) {
		return timer.ErrChanged
	}
	return err
}

func (s *Store) update(ctx context.Context, table string, key map[string]types.AttributeValue, upd expression.UpdateBuilder, cond *expression.ConditionBuilder, rv types.ReturnValue) (*dynamodb.UpdateItemOutput, error) {
	b := expression.NewBuilder().WithUpdate(upd)
	if cond != nil {
		b = b.WithCondition(*cond)
	}
	expr, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("build update: %w", err)
	}
	in := &dynamodb.UpdateItemInput{
		TableName: &table, Key: key,
		UpdateExpression:          expr.Update(),
		ExpressionAttributeNames:  expr.Names(),
		ExpressionAttributeValues: expr.Values(),
		ReturnValues:              rv,
	}
	if cond != nil {
		in.ConditionExpression = expr.Condition()
		in.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	}
	return s.api.UpdateItem(ctx, in)
}

func decodeInstance(m map[string]types.AttributeValue) (timer.Instance, error) {
	var it instanceItem
	if err := attributevalue.UnmarshalMap(m, &it); err != nil {
		return timer.Instance{}, fmt.Errorf("decode timer instance: %w", err)
	}
	return it.instance(), nil
}

func isConditionFailed(err error) bool {
	var ccf *types.ConditionalCheckFailedException
	return errors.As(err, &ccf)
}

// conditionOld returns the item DynamoDB sent back with a failed condition; ok is false when
// the service did not send one (not every emulator does), so callers must not infer absence.
func conditionOld(err error) (map[string]types.AttributeValue, bool) {
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) && ccf.Item != nil {
		return ccf.Item, true
	}
	return nil, false
}
