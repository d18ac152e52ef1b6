package dynamo

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/sundialhq/sundial/internal/timer"
)

// Finish implements engine.Store: one TransactWriteItems request with two writes that apply
// together or not at all —
//
//   - the timer item: an update fenced by owner and version that releases the lease and writes
//     the run's results; nextRun and active are checked against what the decision assumed, so
//     a change made during the run is never overwritten;
//   - the log item: put once (attribute_not_exists), so an execution is logged exactly once.
//
// A processor that dies after this request either finished and logged the execution, or did
// neither (recovery then takes the lease back and logs it). It is still one request; DynamoDB
// bills transactional writes at twice the write units of plain ones.
//
// Transactions return no item, so the instance after the change is computed from observed
// with timer.Instance.Apply: the condition guarantees that everything Apply reads (fence,
// active, nextRun) is as observed. Settings an operator changed during the run are not in it.
func (s *Store) Finish(ctx context.Context, observed timer.Instance, f timer.Finish, e timer.Execution) (timer.Instance, error) {
	after, err := observed.Apply(f)
	if err != nil {
		return timer.Instance{}, err // the decision does not fit what it was decided on
	}
	token := rand.Text() // ClientRequestToken (at most 36 characters) and the log item's finishId
	update, err := s.finishUpdate(observed.Key, f)
	if err != nil {
		return timer.Instance{}, err
	}
	entry := toLogItem(e, s.retention)
	entry.FinishID = token
	item, err := attributevalue.MarshalMap(entry)
	if err != nil {
		return timer.Instance{}, fmt.Errorf("encode log entry: %w", err)
	}
	_, err = s.api.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{
		ClientRequestToken: aws.String(token),
		TransactItems: []types.TransactWriteItem{
			{Update: &types.Update{
				TableName: &s.timers, Key: instanceKey(observed.Key),
				UpdateExpression: update.Update(), ConditionExpression: update.Condition(),
				ExpressionAttributeNames: update.Names(), ExpressionAttributeValues: update.Values(),
			}},
			{Put: &types.Put{TableName: &s.logs, Item: item, ConditionExpression: aws.String("attribute_not_exists(pk)")}},
		},
	})
	var canceled *types.TransactionCanceledException
	if errors.As(err, &canceled) {
		return s.finishFailed(ctx, observed, f, e, token, after)
	}
	if err != nil {
		return timer.Instance{}, fmt.Errorf("finish %s: %w", observed.Key, err)
	}
	return after, nil
}

// finishFailed explains a canceled finish: this very write applied by an earlier attempt whose
// reply was lost (the log item carries its token), the execution ended by someone else
// (timer.ErrFenceLost), or the instance changed under the decision (timer.ErrChanged).
func (s *Store) finishFailed(ctx context.Context, observed timer.Instance, f timer.Finish, e timer.Execution, token string, after timer.Instance) (timer.Instance, error) {
	logged, err := s.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.logs, Key: logKey(e), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return timer.Instance{}, fmt.Errorf("finish %s: read its log entry: %w", observed.Key, err)
	}
	if len(logged.Item) > 0 {
		var it logItem
		if err := attributevalue.UnmarshalMap(logged.Item, &it); err == nil && it.FinishID == token {
			return after, nil
		}
		return timer.Instance{}, timer.ErrFenceLost // another writer ended and logged this execution
	}
	cur, err := s.Get(ctx, observed.Key)
	switch {
	case errors.Is(err, timer.ErrNotFound):
		return timer.Instance{}, timer.ErrFenceLost
	case err != nil:
		return timer.Instance{}, err
	case cur.Fence() != f.Fence:
		return timer.Instance{}, timer.ErrFenceLost
	}
	return timer.Instance{}, timer.ErrChanged
}

// finishUpdate is the fenced update of the timer item that ends an execution.
func (s *Store) finishUpdate(key timer.Key, f timer.Finish) (expression.Expression, error) {
	n := expression.Name
	cond := n("execId").Equal(expression.Value(f.Fence.ExecutionID)).
		And(n("version").Equal(expression.Value(f.Fence.Version))).
		And(n("active").Equal(expression.Value(f.Active)))
	if f.KeepNextRun {
		cond = cond.And(n("nextRun").Equal(expression.Value(ms(f.NextRun))))
	} else {
		cond = cond.And(n("nextRun").AttributeNotExists())
	}
	upd := expression.Set(n("lastRun"), expression.Value(ms(f.LastRun))).
		Set(n("lastDurationMs"), expression.Value(f.LastDuration.Milliseconds())).
		Set(n("numberOfTries"), expression.Value(f.Tries)).
		Set(n("lastOutcome"), expression.Value(string(f.Outcome))).
		Set(n("version"), n("version").Plus(expression.Value(1)))
	for _, a := range []string{"isRunningSince", "isRunningBy", "execId", "leaseExpiresAt", "leaseDeadline", "runShard", "claimedNextRun", "runScheduledAt", "runAttempt", "requeuedAt"} {
		upd = upd.Remove(n(a))
	}
	if f.Error != "" {
		upd = upd.Set(n("lastError"), expression.Value(f.Error))
	} else {
		upd = upd.Remove(n("lastError"))
	}
	if !f.KeepNextRun && !f.NextRun.IsZero() {
		upd = upd.Set(n("nextRun"), expression.Value(ms(f.NextRun)))
	}
	if f.Active && !f.NextRun.IsZero() {
		upd = s.placement(upd, key, "dueShard")
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
	return nil
}
