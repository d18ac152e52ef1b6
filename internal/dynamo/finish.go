package dynamo

import (
	"context"
	"crypto/rand"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/sundialhq/sundial/internal/timer"
)

// Finish implements engine.Store with one plain UpdateItem on the timer item, fenced by owner
// and version, that releases the lease and writes the run's results; nextRun and active are
// checked against what the decision assumed, so a change made during the run is never
// overwritten. It is the only write that ends an execution, and the execution's log entry is
// derived from it: the item's stream carries the item before (the execution: id, start,
// runner, attempt) and after (outcome, duration, error, next run, lastExecId), and the log
// writer puts one entry per such record (ExecutionFromImages, PutExecutions). A processor that
// dies after this write has ended its execution, and the entry follows from the stream; one
// that dies before has written nothing, and recovery ends the execution the same way. e is
// not written here: it is what the stream will yield, so it must be the log entry of the
// execution f's fence ends (timer.Finish.Ends), else nothing is written.
//
// The due index key moves only when it must. A next run at or before sentUpTo (a watermark
// the caller read before this write) is sent by the caller itself (the fetch has covered, or
// is covering, that window), so its key stays where it was, earlier: the fetch's later
// windows do not reach it, and recovery, which reads every key up to now, still finds it if
// that firing is lost. Any other next run is keyed at itself so that the fetch finds it. A
// finish that keeps the key writes the item only (one write unit up to 1 KB); one that moves
// it also writes the keys-only index twice (a delete and a put).
//
// UpdateItem returns the item, but the instance returned is computed from observed with
// timer.Instance.Apply, as before: the condition guarantees that everything Apply reads
// (fence, active, nextRun) is as observed.
func (s *Store) Finish(ctx context.Context, observed timer.Instance, f timer.Finish, e timer.Execution, sentUpTo time.Time) (timer.Instance, error) {
	if err := f.Ends(observed.Key, e); err != nil {
		return timer.Instance{}, err
	}
	after, err := observed.Apply(f)
	if err != nil {
		return timer.Instance{}, err // the decision does not fit what it was decided on
	}
	token := rand.Text()[:16] // tells this finish's own write from another finisher's
	update, err := s.finishUpdate(observed.Key, f, sentUpTo, token)
	if err != nil {
		return timer.Instance{}, err
	}
	in := &dynamodb.UpdateItemInput{
		TableName: &s.timers, Key: instanceKey(observed.Key),
		UpdateExpression: update.Update(), ConditionExpression: update.Condition(),
		ExpressionAttributeNames: update.Names(), ExpressionAttributeValues: update.Values(),
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
	if !f.LastSuccessFor.IsZero() {
		// A success takes the waiters off (finishUpdate): their old value comes back with
		// the reply (no read, no write unit more), so each waiter is woken once.
		in.ReturnValues = types.ReturnValueUpdatedOld
	}
	out, err := s.api.UpdateItem(ctx, in)
	if isConditionFailed(err) {
		return s.finishFailed(ctx, observed, f, token, err, after)
	}
	if err != nil {
		return timer.Instance{}, fmt.Errorf("finish %s: %w", observed.Key, err)
	}
	if !f.LastSuccessFor.IsZero() && out != nil {
		after.Waiters = nil
		if w, ok := out.Attributes["waiters"]; ok {
			if err := attributevalue.Unmarshal(w, &after.Waiters); err != nil {
				return timer.Instance{}, fmt.Errorf("finish %s: decode waiters: %w", observed.Key, err)
			}
		}
	}
	return after, nil
}

// finishFailed explains a refused finish: this very write applied by an earlier attempt whose
// reply was lost (the item carries its token in its finish slot), the execution ended by someone
// else (timer.ErrFenceLost), or the instance changed under the decision (timer.ErrChanged).
func (s *Store) finishFailed(ctx context.Context, observed timer.Instance, f timer.Finish, token string, err error, after timer.Instance) (timer.Instance, error) {
	old, ok := conditionOld(err)
	if !ok {
		out, gerr := s.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.timers, Key: instanceKey(observed.Key), ConsistentRead: aws.Bool(true)})
		if gerr != nil {
			return timer.Instance{}, fmt.Errorf("finish %s: read it back: %w", observed.Key, gerr)
		}
		old = out.Item
	}
	if len(old) == 0 {
		return timer.Instance{}, timer.ErrFenceLost
	}
	var cur instanceItem
	if err := attributevalue.UnmarshalMap(old, &cur); err != nil {
		return timer.Instance{}, fmt.Errorf("finish %s: decode: %w", observed.Key, err)
	}
	var mine string
	_ = attributevalue.Unmarshal(old[finishSlot(f.Fence.Version)], &mine)
	switch {
	case mine == token:
		// Applied by an earlier attempt of this very request, even if the timer has run
		// again since (recovery re-sends a firing whose finisher is still retrying).
		return after, nil
	case cur.ExecID != f.Fence.ExecutionID || cur.Version != f.Fence.Version:
		return timer.Instance{}, timer.ErrFenceLost
	case !f.IfLeaseExpiredBy.IsZero() && cur.LeaseExpiresAt > ms(f.IfLeaseExpiredBy):
		return timer.Instance{}, fmt.Errorf("%w: %s's lease runs until %s, after %s", timer.ErrLeaseLive, observed.Key,
			fromMs(cur.LeaseExpiresAt).UTC().Format(time.RFC3339Nano), f.IfLeaseExpiredBy.UTC().Format(time.RFC3339Nano))
	}
	return timer.Instance{}, timer.ErrChanged
}

// finishUpdate is the fenced update of the timer item that ends an execution.
func (s *Store) finishUpdate(key timer.Key, f timer.Finish, sentUpTo time.Time, token string) (expression.Expression, error) {
	n := expression.Name
	cond := n("execId").Equal(expression.Value(f.Fence.ExecutionID)).
		And(n("version").Equal(expression.Value(f.Fence.Version))).
		And(n("active").Equal(expression.Value(f.Active)))
	if f.KeepNextRun {
		cond = cond.And(n("nextRun").Equal(expression.Value(ms(f.NextRun))))
	} else {
		cond = cond.And(n("nextRun").AttributeNotExists())
	}
	if !f.Stopped {
		// A stop requested during the run makes it end as stopped (timer.Decide): a finish
		// decided without it is refused, re-read and decided again.
		cond = cond.And(n("stopAt").AttributeNotExists())
	}
	if !f.IfLeaseExpiredBy.IsZero() {
		// Recovery's finish: only a lease that has expired is taken back, whatever the
		// (eventually consistent) read it decided from said.
		cond = cond.And(n("leaseExpiresAt").AttributeNotExists().Or(n("leaseExpiresAt").LessThanEqual(expression.Value(ms(f.IfLeaseExpiredBy)))))
	}
	if was := f.BackfillWas; f.Backfill != nil && was != nil {
		// The backfill's cursor moves on only from where this run found it (a cancel made
		// during the run stands).
		cond = cond.And(n("backfill.id").Equal(expression.Value(was.ID))).
			And(n("backfill.next").Equal(expression.Value(ms(was.Next)))).
			And(n("backfill.attempt").Equal(expression.Value(was.Attempt))).
			And(n("backfill.cancelled").AttributeNotExists())
	}
	// The calendar rules the next run was decided under are still the instance's (an
	// operator's calendar edit that reached it during the run makes the finisher decide
	// again): a term of the same write, no read.
	if f.CalendarEdit == "" {
		cond = cond.And(n("calendar.edit").AttributeNotExists())
	} else {
		cond = cond.And(n("calendar.edit").Equal(expression.Value(f.CalendarEdit)))
	}
	upd := expression.Set(n("lastRun"), expression.Value(ms(f.LastRun))).
		Set(n("lastDurationMs"), expression.Value(f.LastDuration.Milliseconds())).
		Set(n("numberOfTries"), expression.Value(f.Tries)).
		Set(n("lastOutcome"), expression.Value(string(f.Outcome))).
		Set(n("version"), n("version").Plus(expression.Value(1))).
		Set(n("lastExecId"), expression.Value(f.Fence.ExecutionID)).
		Set(n(finishSlot(f.Fence.Version)), expression.Value(token))
	if f.GaveUp {
		upd = upd.Set(n("lastGaveUp"), expression.Value(true))
	} else {
		upd = upd.Remove(n("lastGaveUp"))
	}
	for _, a := range []string{"isRunningSince", "isRunningBy", "execId", "leaseExpiresAt", "leaseDeadline", "claimedNextRun", "runScheduledAt", "runAttempt", "requeuedAt", "runBackfill", "runProgress", "stopBy", "stopAt", "waiting"} {
		upd = upd.Remove(n(a))
	}
	if f.ClearRunParams {
		upd = upd.Remove(n("runParams")).Remove(n("runIgnoreAfter")) // absent on a plain firing's item: the write costs what it did
	}
	if f.Backfill != nil {
		upd = upd.Set(n("backfill"), expression.Value(toBackfillItem(f.Backfill)))
	}
	if f.Error != "" {
		upd = upd.Set(n("lastError"), expression.Value(f.Error))
	} else {
		upd = upd.Remove(n("lastError"))
	}
	if f.Output != "" {
		upd = upd.Set(n("lastOutput"), expression.Value(f.Output))
	} else {
		upd = upd.Remove(n("lastOutput"))
	}
	for _, a := range []struct {
		name string
		v    any
		set  bool
	}{{"lastSummary", f.Report.Summary, f.Report.Summary != ""}, {"lastCounters", f.Report.Counters, len(f.Report.Counters) > 0},
		{"lastWarnings", f.Report.Warnings, len(f.Report.Warnings) > 0}} {
		if a.set {
			upd = upd.Set(n(a.name), expression.Value(a.v))
		} else {
			upd = upd.Remove(n(a.name))
		}
	}
	if !f.LastSuccessFor.IsZero() {
		upd = upd.Set(n("lastSuccessAt"), expression.Value(ms(f.LastSuccessAt))).
			Set(n("lastSuccessFor"), expression.Value(ms(f.LastSuccessFor))).
			Remove(n("waiters")) // taken: the finisher wakes them (Finish)
	}
	switch {
	case f.State == nil: // the run returned no state: the instance keeps its own
	case *f.State == "":
		upd = upd.Remove(n("state"))
	default:
		upd = upd.Set(n("state"), expression.Value(*f.State))
	}
	if f.Skipped > 0 {
		// Only a finish that skipped instants touches the counter: a plain one costs nothing more.
		upd = upd.Add(n("skipped"), expression.Value(f.Skipped)).
			Set(n("skippedSince"), expression.IfNotExists(n("skippedSince"), expression.Value(ms(f.FirstSkipped))))
	}
	if !f.KeepNextRun && !f.NextRun.IsZero() {
		upd = upd.Set(n("nextRun"), expression.Value(ms(f.NextRun)))
	}
	switch {
	case !f.Active || f.NextRun.IsZero():
		upd = upd.Remove(n("dueShard")).Remove(n("dueAt")) // out of the due index
	case f.NextRun.After(sentUpTo):
		upd = s.placement(upd, key, "dueShard").Set(n("dueAt"), expression.Value(ms(f.NextRun)))
	}
	if f.PendingAttempt > 0 {
		upd = upd.Set(n("pendingScheduledAt"), expression.Value(ms(f.PendingScheduledAt))).
			Set(n("pendingAttempt"), expression.Value(f.PendingAttempt))
	} else {
		upd = upd.Remove(n("pendingScheduledAt")).Remove(n("pendingAttempt"))
	}
	expr, err := expression.NewBuilder().WithUpdate(upd).WithCondition(cond).Build()
	if err != nil {
		return expression.Expression{}, fmt.Errorf("build finish: %w", err)
	}
	return expr, nil
}

// ownClaim reports whether the item (as a failed claim's condition saw it) is held by the
// execution that tried to claim it.
func ownClaim(item map[string]types.AttributeValue, executionID string) bool {
	v, ok := item["execId"].(*types.AttributeValueMemberS)
	return ok && executionID != "" && v.Value == executionID
}

// PutExecution writes a log entry by itself, once: timer.ErrExists if that execution is logged
// already. The engine never needs it (Finish logs as it ends an execution); it is for tools
// and tests that fill the log.
func (s *Store) PutExecution(ctx context.Context, e timer.Execution) error {
	item, err := attributevalue.MarshalMap(toLogItem(e, s.retention))
	if err != nil {
		return fmt.Errorf("encode log entry: %w", err)
	}
	_, err = s.api.PutItem(ctx, &dynamodb.PutItemInput{
		TableName: &s.logs, Item: item, ConditionExpression: aws.String("attribute_not_exists(pk)"),
	})
	if isConditionFailed(err) {
		return timer.ErrExists
	}
	if err != nil {
		return fmt.Errorf("put log entry for %s: %w", e.Key, err)
	}
	pages, err := s.pageWrites([]timer.Execution{e})
	if err != nil {
		return err
	}
	return s.batchWriteLog(ctx, pages)
}
