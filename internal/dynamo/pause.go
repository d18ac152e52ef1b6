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

// ResumePK is the partition of the timers table that lists the pauses the platform ends:
// one item per pause with an end, sorted by that end ("<until>#<instance>"). Recovery reads
// it each sweep; an item whose pause was ended or changed meanwhile is dropped.
const ResumePK = "RESUME"

type resumeItem struct {
	PK     string `dynamodbav:"pk"`
	SK     string `dynamodbav:"sk"`
	Kind   string `dynamodbav:"kind"`
	App    string `dynamodbav:"app"`
	Timer  string `dynamodbav:"timer"`
	Tenant string `dynamodbav:"tenant,omitempty"`
	At     int64  `dynamodbav:"resumeAt"`
}

// Pause deactivates the instance with p (an operator's: manifest syncs keep it) and, when p
// has an end, lists it for recovery to activate again then.
func (s *Store) Pause(ctx context.Context, key timer.Key, p timer.Pause) (timer.Instance, error) {
	in, err := s.pause(ctx, key, p, expression.Name("pk").AttributeExists())
	if isConditionFailed(err) {
		return timer.Instance{}, s.changedOrGone(ctx, key)
	}
	return in, err
}

// pause writes p on the instance if cond holds (a condition failure is returned as it is).
func (s *Store) pause(ctx context.Context, key timer.Key, p timer.Pause, cond expression.ConditionBuilder) (timer.Instance, error) {
	n := expression.Name
	upd := expression.Set(n("active"), expression.Value(false)).Set(n("activeBy"), expression.Value(timer.ActiveByOperator)).
		Set(n("pauseNote"), expression.Value(p.Note)).Set(n("pausedBy"), expression.Value(p.By)).Set(n("pausedAt"), expression.Value(ms(p.At)))
	if p.Until.IsZero() {
		upd = upd.Remove(n("resumeAt"))
	} else {
		upd = upd.Set(n("resumeAt"), expression.Value(ms(p.Until)))
	}
	out, err := s.update(ctx, s.timers, instanceKey(key), upd, &cond, types.ReturnValueAllNew)
	if isConditionFailed(err) {
		return timer.Instance{}, err
	}
	if err != nil {
		return timer.Instance{}, fmt.Errorf("pause %s: %w", key, err)
	}
	in, err := decodeInstance(out.Attributes)
	if err != nil {
		return in, err
	}
	if !p.Until.IsZero() {
		item, err := attributevalue.MarshalMap(resumeItem{PK: ResumePK, SK: p.Until.UTC().Format(logSortLayout) + "#" + key.String(), Kind: "resume",
			App: appAttr(key.App), Timer: key.Timer, Tenant: key.Tenant, At: ms(p.Until)})
		if err != nil {
			return in, err
		}
		if _, err := s.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.timers, Item: item}); err != nil {
			return in, fmt.Errorf("list the end of %s's pause: %w", key, err)
		}
	}
	return s.syncDueIndex(ctx, in)
}

// ResumeDue activates every instance whose pause ended by now, as the platform; resumed is
// called with each (the audit trail). An instance activated, paused again with another end,
// or gone meanwhile is left as it is.
func (s *Store) ResumeDue(ctx context.Context, now time.Time, resumed func(timer.Instance, timer.Pause) error) (int, error) {
	kc := expression.Key("pk").Equal(expression.Value(ResumePK)).And(expression.Key("sk").LessThanEqual(expression.Value(now.UTC().Format(logSortLayout) + "#~")))
	expr, err := expression.NewBuilder().WithKeyCondition(kc).Build()
	if err != nil {
		return 0, err
	}
	out, err := s.api.Query(ctx, &dynamodb.QueryInput{TableName: &s.timers, KeyConditionExpression: expr.KeyCondition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(), ConsistentRead: aws.Bool(true), Limit: aws.Int32(100)})
	if err != nil {
		return 0, fmt.Errorf("read the pauses that end: %w", err)
	}
	var items []resumeItem
	if err := attributevalue.UnmarshalListOfMaps(out.Items, &items); err != nil {
		return 0, err
	}
	count := 0
	for _, it := range items {
		key := keyOf(it.App, it.Timer, it.Tenant)
		before, err := s.Get(ctx, key)
		ok := err == nil && !before.Active && before.Pause != nil && ms(before.Pause.Until) == it.At
		if ok {
			n := expression.Name
			upd := expression.Set(n("active"), expression.Value(true)).Set(n("activeBy"), expression.Value(timer.ActiveByOperator)).
				Remove(n("pauseNote")).Remove(n("pausedBy")).Remove(n("pausedAt")).Remove(n("resumeAt"))
			cond := n("resumeAt").Equal(expression.Value(it.At)).And(n("active").Equal(expression.Value(false)))
			res, err := s.update(ctx, s.timers, instanceKey(key), upd, &cond, types.ReturnValueAllNew)
			switch {
			case isConditionFailed(err):
				ok = false
			case err != nil:
				return count, fmt.Errorf("resume %s: %w", key, err)
			default:
				in, err := decodeInstance(res.Attributes)
				if err == nil {
					in, err = s.syncDueIndex(ctx, in)
				}
				if err != nil {
					return count, err
				}
				count++
				if err := resumed(in, *before.Pause); err != nil {
					return count, err
				}
			}
		}
		if _, err := s.api.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &s.timers, Key: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: it.PK}, "sk": &types.AttributeValueMemberS{Value: it.SK}}}); err != nil {
			return count, fmt.Errorf("drop the ended pause of %s: %w", key, err)
		}
	}
	return count, nil
}
