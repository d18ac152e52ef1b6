package dynamo

import (
	"cmp"
	"context"
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

// A backfill is an item of the timers table (pk "BACKFILL", sk "<app>#<timer>": one per
// timer, the latest), with no index attribute; each instance's part of it is the cursor on the
// instance's own item (instanceItem.Backfill), which the claims and finishes guard. Recovery
// reads the partition each sweep (one Query) to drive the running ones. Every write is an
// UpdateItem: the API function's policy allows UpdateItem on the timers table, not PutItem.
const (
	backfillPK   = "BACKFILL"
	kindBackfill = "backfill"
)

var _ engine.Backfills = (*Store)(nil)

type backfillRecord struct {
	ID          string   `dynamodbav:"id"`
	App         string   `dynamodbav:"app"`
	Timer       string   `dynamodbav:"timer"`
	Tenants     []string `dynamodbav:"tenants"`
	From        int64    `dynamodbav:"from"`
	To          int64    `dynamodbav:"to"`
	Parallel    int      `dynamodbav:"parallel"`
	Total       int      `dynamodbav:"total"`
	By          string   `dynamodbav:"by"`
	At          int64    `dynamodbav:"at"`
	State       string   `dynamodbav:"state"`
	CancelledBy string   `dynamodbav:"cancelledBy,omitempty"`
	EndedAt     int64    `dynamodbav:"endedAt,omitempty"`
	Params      string   `dynamodbav:"params,omitempty"`
}

func (r backfillRecord) backfill() timer.Backfill {
	return timer.Backfill{ID: r.ID, App: appOf(r.App), Timer: r.Timer, Tenants: r.Tenants, From: fromMs(r.From), To: fromMs(r.To),
		Parallel: r.Parallel, Total: r.Total, By: r.By, At: fromMs(r.At), State: r.State, CancelledBy: r.CancelledBy, EndedAt: fromMs(r.EndedAt), Params: r.Params}
}

func backfillKey(app, name string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: backfillPK},
		"sk": &types.AttributeValueMemberS{Value: appAttr(app) + "#" + name},
	}
}

// PutBackfill implements admin.BackfillStore: it records a new backfill of its timer in its
// state (timer.BackfillStarting for a start; "" is timer.BackfillRunning), replacing the
// timer's previous one unless that one is still starting or running (timer.ErrExists).
func (s *Store) PutBackfill(ctx context.Context, b timer.Backfill) error {
	state := cmp.Or(b.State, timer.BackfillRunning)
	n := expression.Name
	upd := expression.Set(n("kind"), expression.Value(kindBackfill)).
		Set(n("id"), expression.Value(b.ID)).Set(n("app"), expression.Value(appAttr(b.App))).
		Set(n("timer"), expression.Value(b.Timer)).Set(n("tenants"), expression.Value(b.Tenants)).
		Set(n("from"), expression.Value(ms(b.From))).Set(n("to"), expression.Value(ms(b.To))).
		Set(n("parallel"), expression.Value(b.Parallel)).Set(n("total"), expression.Value(b.Total)).
		Set(n("by"), expression.Value(b.By)).Set(n("at"), expression.Value(ms(b.At))).
		Set(n("state"), expression.Value(state)).
		Remove(n("cancelledBy")).Remove(n("endedAt"))
	if b.Params != "" {
		upd = upd.Set(n("params"), expression.Value(b.Params))
	} else {
		upd = upd.Remove(n("params"))
	}
	cond := n("pk").AttributeNotExists().Or(expression.And(n("state").NotEqual(expression.Value(timer.BackfillRunning)),
		n("state").NotEqual(expression.Value(timer.BackfillStarting))))
	_, err := s.update(ctx, s.timers, backfillKey(b.App, b.Timer), upd, &cond, types.ReturnValueNone)
	if isConditionFailed(err) {
		return fmt.Errorf("%w: a backfill of %s is starting or running", timer.ErrExists, b.Key("").Name())
	}
	if err != nil {
		return fmt.Errorf("save backfill of %s: %w", b.Key("").Name(), err)
	}
	return nil
}

// GetBackfill implements admin.BackfillStore: the timer's latest backfill (timer.ErrNotFound).
func (s *Store) GetBackfill(ctx context.Context, app, name string) (timer.Backfill, error) {
	out, err := s.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.timers, Key: backfillKey(app, name), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return timer.Backfill{}, fmt.Errorf("get backfill of %s: %w", timer.Key{App: app, Timer: name}.Name(), err)
	}
	if len(out.Item) == 0 {
		return timer.Backfill{}, fmt.Errorf("%w: %s has no backfill", timer.ErrNotFound, timer.Key{App: app, Timer: name}.Name())
	}
	var r backfillRecord
	if err := attributevalue.UnmarshalMap(out.Item, &r); err != nil {
		return timer.Backfill{}, fmt.Errorf("decode backfill: %w", err)
	}
	return r.backfill(), nil
}

// RunningBackfills implements engine.Backfills: the running and the starting ones.
func (s *Store) RunningBackfills(ctx context.Context) ([]timer.Backfill, error) {
	recs, err := queryPartition[backfillRecord](ctx, s, backfillPK, "backfills")
	if err != nil {
		return nil, err
	}
	var out []timer.Backfill
	for _, r := range recs {
		if r.State == timer.BackfillRunning || r.State == timer.BackfillStarting {
			out = append(out, r.backfill())
		}
	}
	return out, nil
}

// SetBackfillState implements admin.BackfillStore and engine.Backfills: backfill b, in
// state b.State ("" is timer.BackfillRunning), goes to state (by, when set, recorded as
// who cancelled it; now as its end unless state is running); timer.ErrChanged if it is not
// in b.State any more or was replaced.
func (s *Store) SetBackfillState(ctx context.Context, b timer.Backfill, state, by string, now time.Time) error {
	from := cmp.Or(b.State, timer.BackfillRunning)
	n := expression.Name
	upd := expression.Set(n("state"), expression.Value(state))
	if state != timer.BackfillRunning {
		upd = upd.Set(n("endedAt"), expression.Value(ms(now)))
	}
	if by != "" {
		upd = upd.Set(n("cancelledBy"), expression.Value(by))
	}
	cond := n("id").Equal(expression.Value(b.ID)).And(n("state").Equal(expression.Value(from)))
	_, err := s.update(ctx, s.timers, backfillKey(b.App, b.Timer), upd, &cond, types.ReturnValueNone)
	if isConditionFailed(err) {
		return fmt.Errorf("%w: backfill %s of %s is not %s", timer.ErrChanged, b.ID, b.Key("").Name(), from)
	}
	return err
}

// EndBackfill implements engine.Backfills.
func (s *Store) EndBackfill(ctx context.Context, b timer.Backfill, now time.Time) error {
	err := s.SetBackfillState(ctx, b, timer.BackfillDone, "", now)
	if errors.Is(err, timer.ErrChanged) {
		return nil // cancelled or ended meanwhile
	}
	return err
}

// SetBackfillCursor implements admin.BackfillStore: it gives an instance its part of a new
// backfill, unless the instance's part of another backfill is still under way
// (timer.ErrChanged) or the instance is gone (timer.ErrNotFound).
func (s *Store) SetBackfillCursor(ctx context.Context, key timer.Key, c timer.BackfillCursor) error {
	n := expression.Name
	upd := expression.Set(n("backfill"), expression.Value(toBackfillItem(&c)))
	cond := n("pk").AttributeExists().And(n("backfill.next").AttributeNotExists().Or(n("backfill.cancelled").AttributeExists()))
	_, err := s.update(ctx, s.timers, instanceKey(key), upd, &cond, types.ReturnValueNone)
	if isConditionFailed(err) {
		if _, gerr := s.Get(ctx, key); gerr != nil {
			return gerr
		}
		return fmt.Errorf("%w: %s's part of an earlier backfill is under way", timer.ErrChanged, key)
	}
	return err
}

// CancelBackfillCursor implements admin.BackfillStore: the instance's part of backfill id
// stops (a run under way ends, and nothing follows it); no-op if it is another's.
func (s *Store) CancelBackfillCursor(ctx context.Context, key timer.Key, id string) error {
	n := expression.Name
	cond := n("backfill.id").Equal(expression.Value(id))
	_, err := s.update(ctx, s.timers, instanceKey(key), expression.Set(n("backfill.cancelled"), expression.Value(true)), &cond, types.ReturnValueNone)
	if isConditionFailed(err) {
		return nil
	}
	return err
}

// MarkBackfillSent implements engine.Backfills.
func (s *Store) MarkBackfillSent(ctx context.Context, key timer.Key, c timer.BackfillCursor, now time.Time) error {
	n := expression.Name
	cond := n("backfill.id").Equal(expression.Value(c.ID)).And(n("backfill.next").Equal(expression.Value(ms(c.Next)))).
		And(n("backfill.attempt").Equal(expression.Value(c.Attempt))).And(n("backfill.cancelled").AttributeNotExists()).
		And(n("execId").AttributeNotExists())
	_, err := s.update(ctx, s.timers, instanceKey(key), expression.Set(n("backfill.sentAt"), expression.Value(ms(now))), &cond, types.ReturnValueNone)
	if isConditionFailed(err) {
		return timer.ErrChanged
	}
	return err
}

// StartBackfillPart implements engine.Backfills.
func (s *Store) StartBackfillPart(ctx context.Context, key timer.Key, id string, now time.Time) error {
	n := expression.Name
	cond := n("backfill.id").Equal(expression.Value(id)).And(n("backfill.waiting").AttributeExists()).
		And(n("backfill.cancelled").AttributeNotExists())
	upd := expression.Set(n("backfill.due"), expression.Value(ms(now))).Set(n("backfill.sentAt"), expression.Value(ms(now))).
		Remove(n("backfill.waiting"))
	_, err := s.update(ctx, s.timers, instanceKey(key), upd, &cond, types.ReturnValueNone)
	if isConditionFailed(err) {
		return timer.ErrChanged
	}
	return err
}
