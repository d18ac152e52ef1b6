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

	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/timer"
)

// Service Center's reads and edits: the fetcher's state, log pages with a cursor, one log
// entry, and an operator's edit of a timer's effective schedule, timeout and priority.

// FetchState reads the fetcher's watermark and last tick (zero values: it never ran).
func (s *Store) FetchState(ctx context.Context) (timer.FetchState, error) {
	out, err := s.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.timers, Key: metaKey, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return timer.FetchState{}, fmt.Errorf("get fetch state: %w", err)
	}
	var m struct {
		Watermark int64 `dynamodbav:"watermark"`
		LastTick  int64 `dynamodbav:"lastTick"`
	}
	if err := attributevalue.UnmarshalMap(out.Item, &m); err != nil {
		return timer.FetchState{}, fmt.Errorf("decode fetch state: %w", err)
	}
	return timer.FetchState{Watermark: fromMs(m.Watermark), LastTick: fromMs(m.LastTick)}, nil
}

// LogPage reads a page of the log and returns the cursor of the next page ("" at the end).
func (s *Store) LogPage(ctx context.Context, q timer.LogPageQuery) ([]timer.Execution, string, error) {
	if q.Limit <= 0 {
		q.Limit = 50
	}
	if q.Days <= 0 {
		q.Days = 31
	}
	before := q.After
	if before == "" {
		before = time.Now().Add(time.Minute).UTC().Format(logSortLayout)
	}
	if _, err := time.Parse(time.DateOnly, before[:min(len(before), len(time.DateOnly))]); err != nil {
		return nil, "", fmt.Errorf("%w: log cursor %q", errkind.Invalid, q.After)
	}
	// One entry more than asked tells whether there is a next page.
	want := q.Limit + 1
	var (
		out []timer.Execution
		err error
	)
	if q.Key != nil {
		kc := expression.Key("pk").Equal(expression.Value(q.Key.String())).And(expression.Key("sk").LessThan(expression.Value(before)))
		var filt *expression.ConditionBuilder
		if q.ErrorsOnly {
			f := expression.Name("outcome").NotEqual(expression.Value(string(timer.OutcomeSuccess))).
				And(expression.Name("outcome").NotEqual(expression.Value(string(timer.OutcomeWarnings))))
			filt = &f
		}
		if out, err = s.queryLog(ctx, kc, filt, want); err != nil {
			return nil, "", err
		}
	} else if out, err = s.allTimersLog(ctx, q.App, q.Tenant, q.ErrorsOnly, before, q.Days, want); err != nil {
		return nil, "", err
	}
	if len(out) <= q.Limit {
		return out, "", nil
	}
	out = out[:q.Limit]
	return out, out[len(out)-1].Ref(), nil
}

// Execution reads one log entry by its instance and Ref: timer.ErrNotFound if absent.
func (s *Store) Execution(ctx context.Context, key timer.Key, ref string) (timer.Execution, error) {
	if ref == "" || !strings.Contains(ref, "#") {
		return timer.Execution{}, fmt.Errorf("%w: log entry reference %q", errkind.Invalid, ref)
	}
	out, err := s.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.logs, Key: map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: key.String()},
		"sk": &types.AttributeValueMemberS{Value: ref},
	}})
	if err != nil {
		return timer.Execution{}, fmt.Errorf("get log entry of %s: %w", key, err)
	}
	if len(out.Item) == 0 {
		return timer.Execution{}, fmt.Errorf("%w: %s has no log entry %s", timer.ErrNotFound, key, ref)
	}
	var it logItem
	if err := attributevalue.UnmarshalMap(out.Item, &it); err != nil {
		return timer.Execution{}, fmt.Errorf("decode log entry: %w", err)
	}
	return it.execution(), nil
}
