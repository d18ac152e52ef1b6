package dynamo

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/sundialhq/sundial/internal/timer"
)

// An operator's edit (timer.Edit) is written into the attributes the engine reads —
// schedule, timeoutMs, leaseMs, priority, dst — and the values it replaced (the manifest's)
// are kept in the "defaults" map while the edit is in force.

type editItem struct {
	Defaults *struct {
		Schedule  string `dynamodbav:"schedule"`
		TimeoutMs int64  `dynamodbav:"timeoutMs"`
		Priority  int    `dynamodbav:"priority"`
		DST       string `dynamodbav:"dst,omitempty"`
		// MisfireAfterMs: absent in records written before it, and for the default window.
		MisfireAfterMs int64 `dynamodbav:"misfireAfterMs,omitempty"`
	} `dynamodbav:"defaults"`
	EditedAt int64  `dynamodbav:"editedAt"`
	EditedBy string `dynamodbav:"editedBy"`
	App      string `dynamodbav:"app"`
	Timer    string `dynamodbav:"timer"`
	Tenant   string `dynamodbav:"tenant"`
}

func (it editItem) record() (timer.EditRecord, bool) {
	if it.Defaults == nil {
		return timer.EditRecord{}, false
	}
	d := it.Defaults
	return timer.EditRecord{
		Defaults: timer.Overridable{Schedule: d.Schedule, Timeout: time.Duration(d.TimeoutMs) * time.Millisecond, Priority: d.Priority, DST: d.DST,
			MisfireAfter: time.Duration(d.MisfireAfterMs) * time.Millisecond},
		At: fromMs(it.EditedAt), By: it.EditedBy,
	}, true
}

func defaultsValue(o timer.Overridable) expression.ValueBuilder {
	v := map[string]any{"schedule": o.Schedule, "timeoutMs": o.Timeout.Milliseconds(), "priority": o.Priority}
	if o.DST != "" {
		v["dst"] = o.DST
	}
	if o.MisfireAfter > 0 {
		v["misfireAfterMs"] = o.MisfireAfter.Milliseconds()
	}
	return expression.Value(v)
}

// setDST writes a DST policy as items keep it: the attribute only for a policy other than
// the default, so items written before the policy existed read as the default.
func setDST(upd expression.UpdateBuilder, dst string) expression.UpdateBuilder {
	if dst == "" {
		return upd.Remove(expression.Name("dst"))
	}
	return upd.Set(expression.Name("dst"), expression.Value(dst))
}

// dstIs is the condition that an item's DST policy is dst.
func dstIs(dst string) expression.ConditionBuilder {
	if dst == "" {
		return expression.Name("dst").AttributeNotExists()
	}
	return expression.Name("dst").Equal(expression.Value(dst))
}

// overridableIs is the condition that an instance's editable values are still o.
func overridableIs(o timer.Overridable) expression.ConditionBuilder {
	n := expression.Name
	return n("schedule").Equal(expression.Value(o.Schedule)).
		And(n("timeoutMs").Equal(expression.Value(o.Timeout.Milliseconds()))).
		And(n("priority").Equal(expression.Value(o.Priority))).
		And(dstIs(o.DST)).
		And(misfireAfterIs(o.MisfireAfter))
}

// misfireAfterIs is the condition that an item's misfire window is d (zero: the attribute is
// absent, the default window).
func misfireAfterIs(d time.Duration) expression.ConditionBuilder {
	if d <= 0 {
		return expression.Name("misfireAfterMs").AttributeNotExists()
	}
	return expression.Name("misfireAfterMs").Equal(expression.Value(d.Milliseconds()))
}

// SaveEdit applies an operator's edit in one conditional write (timer.ErrNotFound,
// timer.ErrChanged). Lease and version are untouched, so a running execution keeps its fence.
func (s *Store) SaveEdit(ctx context.Context, key timer.Key, e timer.Edit) (timer.Instance, error) {
	n := expression.Name
	cond := overridableIs(e.Expect)
	eff := timer.Settings{Timeout: e.Effective.Timeout}
	upd := expression.Set(n("schedule"), expression.Value(e.Effective.Schedule)).
		Set(n("timeoutMs"), expression.Value(e.Effective.Timeout.Milliseconds())).
		Set(n("leaseMs"), expression.Value(eff.Lease().Milliseconds())).
		Set(n("priority"), expression.Value(e.Effective.Priority))
	upd = setDST(upd, e.Effective.DST)
	if e.Effective.MisfireAfter > 0 {
		upd = upd.Set(n("misfireAfterMs"), expression.Value(e.Effective.MisfireAfter.Milliseconds()))
	} else {
		upd = upd.Remove(n("misfireAfterMs"))
	}
	if e.Effective == e.Defaults {
		upd = upd.Remove(n("defaults")).Remove(n("editedAt")).Remove(n("editedBy"))
	} else {
		upd = upd.Set(n("defaults"), defaultsValue(e.Defaults)).
			Set(n("editedAt"), expression.Value(ms(e.At))).Set(n("editedBy"), expression.Value(e.By))
	}
	if e.Reschedule {
		upd = upd.Remove(n("pendingScheduledAt")).Remove(n("pendingAttempt")).Remove(n("requeuedAt")).Remove(n("waiting"))
		if e.NextRun.IsZero() {
			upd = upd.Remove(n("nextRun")).Remove(n("dueShard")).Remove(n("dueAt"))
		} else {
			upd = upd.Set(n("nextRun"), expression.Value(ms(e.NextRun)))
		}
	}
	out, err := s.update(ctx, s.timers, instanceKey(key), upd, &cond, types.ReturnValueAllNew)
	if isConditionFailed(err) {
		if _, gerr := s.Get(ctx, key); gerr != nil {
			return timer.Instance{}, gerr
		}
		return timer.Instance{}, fmt.Errorf("%w: %s was edited by someone else meanwhile; reload and edit again", timer.ErrChanged, key)
	}
	if err != nil {
		return timer.Instance{}, fmt.Errorf("edit %s: %w", key, err)
	}
	in, err := decodeInstance(out.Attributes)
	if err != nil || !e.Reschedule {
		return in, err
	}
	return s.syncDueIndex(ctx, in)
}

// EditOf reads the edit in force on an instance; ok is false when it runs its defaults.
func (s *Store) EditOf(ctx context.Context, key timer.Key) (rec timer.EditRecord, ok bool, err error) {
	out, err := s.api.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: &s.timers, Key: instanceKey(key), ConsistentRead: aws.Bool(true),
		ProjectionExpression: aws.String("#d, editedAt, editedBy"), ExpressionAttributeNames: map[string]string{"#d": "defaults"},
	})
	if err != nil {
		return rec, false, fmt.Errorf("get edit of %s: %w", key, err)
	}
	var it editItem
	if err := attributevalue.UnmarshalMap(out.Item, &it); err != nil {
		return rec, false, fmt.Errorf("decode edit of %s: %w", key, err)
	}
	rec, ok = it.record()
	return rec, ok, nil
}

// Edits returns every edit in force, by instance. It scans: an operator's operation.
func (s *Store) Edits(ctx context.Context) (map[timer.Key]timer.EditRecord, error) {
	filt := expression.Name("kind").Equal(expression.Value("instance")).And(expression.Name("defaults").AttributeExists())
	items, err := scanTimers[editItem](ctx, s, filt, "edits")
	if err != nil {
		return nil, err
	}
	out := map[timer.Key]timer.EditRecord{}
	for _, it := range items {
		if rec, ok := it.record(); ok {
			out[keyOf(it.App, it.Timer, it.Tenant)] = rec
		}
	}
	return out, nil
}

// SetEditDefaults records new defaults under an edit in force (after a manifest sync), or
// removes the edit record when the effective values equal them.
func (s *Store) SetEditDefaults(ctx context.Context, key timer.Key, defaults timer.Overridable) error {
	n := expression.Name
	same := overridableIs(defaults)
	_, err := s.update(ctx, s.timers, instanceKey(key), expression.Remove(n("defaults")).Remove(n("editedAt")).Remove(n("editedBy")), &same, types.ReturnValueNone)
	if err == nil || !isConditionFailed(err) {
		return err
	}
	exists := n("pk").AttributeExists()
	_, err = s.update(ctx, s.timers, instanceKey(key), expression.Set(n("defaults"), defaultsValue(defaults)), &exists, types.ReturnValueNone)
	if isConditionFailed(err) {
		return fmt.Errorf("%w: %s", timer.ErrNotFound, key)
	}
	return err
}
