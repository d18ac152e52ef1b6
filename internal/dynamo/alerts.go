package dynamo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/sundialhq/sundial/internal/timer"
)

// alertRulesItem is the stored form of timer.AlertRules on an instance item.
type alertRulesItem struct {
	ConsecutiveFailures int    `dynamodbav:"cf,omitempty"`
	NoSuccessWithinMs   int64  `dynamodbav:"nswMs,omitempty"`
	DurationOverMs      int64  `dynamodbav:"durMs,omitempty"`
	Notify              string `dynamodbav:"notify,omitempty"`
	// Counters are the counter rules (timer.AlertRules.Counters).
	Counters map[string]timer.CounterBound `dynamodbav:"ctr,omitempty"`
}

func alertRulesToItem(r timer.AlertRules) *alertRulesItem {
	if !r.Any() {
		return nil
	}
	return &alertRulesItem{ConsecutiveFailures: r.ConsecutiveFailures, NoSuccessWithinMs: r.NoSuccessWithin.Milliseconds(),
		DurationOverMs: r.DurationOver.Milliseconds(), Notify: r.Notify, Counters: r.Counters}
}

func (a *alertRulesItem) rules() timer.AlertRules {
	if a == nil {
		return timer.AlertRules{}
	}
	return timer.AlertRules{ConsecutiveFailures: a.ConsecutiveFailures, NoSuccessWithin: time.Duration(a.NoSuccessWithinMs) * time.Millisecond,
		DurationOver: time.Duration(a.DurationOverMs) * time.Millisecond, Notify: a.Notify, Counters: a.Counters}
}

// Open alerts live in the timers table under pk alertsPK, one item per instance and rule
// (sk alertSK), written only with conditions: an alert is raised by the one write that
// creates it and resolved by the one that deletes it, however many log writer batches or
// sweeps see the rule hold. The noSuccessWithin watch items (pk watchPK, sk the instance)
// carry each watched instance's deadline: its last success (or first run) + the window.
// Timer names cannot hold '#' or '|', so neither partition is an instance's.
const (
	alertsPK = "A#alerts"
	watchPK  = "A#watch"
)

func alertSK(k timer.Key, rule string) string { return k.String() + "|" + rule }

type alertItem struct {
	PK        string `dynamodbav:"pk"`
	SK        string `dynamodbav:"sk"`
	App       string `dynamodbav:"app"`
	Timer     string `dynamodbav:"timer"`
	Tenant    string `dynamodbav:"tenant,omitempty"`
	Rule      string `dynamodbav:"rule"`
	Since     int64  `dynamodbav:"since"`
	ExecID    string `dynamodbav:"execId,omitempty"`
	Detail    string `dynamodbav:"detail,omitempty"`
	RaisedBy  string `dynamodbav:"raisedBy"`
	Announced bool   `dynamodbav:"announced,omitempty"`
}

func (it alertItem) alert() timer.Alert {
	return timer.Alert{Key: keyOf(it.App, it.Timer, it.Tenant), Rule: it.Rule,
		Since: fromMs(it.Since), ExecutionID: it.ExecID, Detail: it.Detail}
}

// RaiseAlert opens a, raised by `by` (an execution id, or the sweep's deadline): true when
// this call opened it, or when the same raiser opened it before without the raise being
// announced (a redelivery after a crash) — the caller then puts the Alert Raised event and
// calls AnnounceAlert. False when it is already open.
func (s *Store) RaiseAlert(ctx context.Context, a timer.Alert, by string) (bool, error) {
	item, err := attributevalue.MarshalMap(alertItem{PK: alertsPK, SK: alertSK(a.Key, a.Rule), App: appAttr(a.App), Timer: a.Timer,
		Tenant: a.Tenant, Rule: a.Rule, Since: ms(a.Since), ExecID: a.ExecutionID, Detail: a.Detail, RaisedBy: by})
	if err != nil {
		return false, err
	}
	n := expression.Name
	cond := n("pk").AttributeNotExists().Or(n("raisedBy").Equal(expression.Value(by)).And(n("announced").AttributeNotExists()))
	expr, err := expression.NewBuilder().WithCondition(cond).Build()
	if err != nil {
		return false, err
	}
	_, err = s.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.timers, Item: item, ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values()})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("raise alert %s %s: %w", a.Key, a.Rule, err)
	}
	return true, nil
}

// AnnounceAlert records that the raise of an alert by `by` was announced (its event put or
// kept), so that no later redelivery announces it again.
func (s *Store) AnnounceAlert(ctx context.Context, k timer.Key, rule, by string) error {
	n := expression.Name
	expr, err := expression.NewBuilder().WithUpdate(expression.Set(n("announced"), expression.Value(true))).
		WithCondition(n("raisedBy").Equal(expression.Value(by))).Build()
	if err != nil {
		return err
	}
	_, err = s.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &s.timers, Key: alertKey(k, rule),
		UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values()})
	var ccf *types.ConditionalCheckFailedException
	if err != nil && !errors.As(err, &ccf) { // resolved meanwhile: nothing to record
		return fmt.Errorf("announce alert %s %s: %w", k, rule, err)
	}
	return nil
}

func alertKey(k timer.Key, rule string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: alertsPK}, "sk": &types.AttributeValueMemberS{Value: alertSK(k, rule)}}
}

// ResolveAlert closes the instance's alert for rule: the alert it closed, or false when none
// was open.
func (s *Store) ResolveAlert(ctx context.Context, k timer.Key, rule string) (timer.Alert, bool, error) {
	expr, err := expression.NewBuilder().WithCondition(expression.Name("pk").AttributeExists()).Build()
	if err != nil {
		return timer.Alert{}, false, err
	}
	out, err := s.api.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &s.timers, Key: alertKey(k, rule), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ReturnValues: types.ReturnValueAllOld})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return timer.Alert{}, false, nil
	}
	if err != nil {
		return timer.Alert{}, false, fmt.Errorf("resolve alert %s %s: %w", k, rule, err)
	}
	var it alertItem
	if err := attributevalue.UnmarshalMap(out.Attributes, &it); err != nil {
		return timer.Alert{}, false, err
	}
	return it.alert(), true, nil
}

// AlertsOf reads the open alerts of the instances ks, every rule's item by key
// (BatchGetItem, strongly consistent): its cost follows len(ks), not how many alerts are
// open elsewhere, which during an outage is every failing timer's.
func (s *Store) AlertsOf(ctx context.Context, ks []timer.Key) ([]timer.Alert, error) {
	seen := map[string]bool{}
	var keys []map[string]types.AttributeValue
	for _, k := range ks {
		for _, rule := range timer.AlertRuleNames {
			if sk := alertSK(k, rule); !seen[sk] {
				seen[sk] = true
				keys = append(keys, map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: alertsPK},
					"sk": &types.AttributeValueMemberS{Value: sk}})
			}
		}
	}
	var out []timer.Alert
	err := s.batchGetEach(ctx, s.timers, keys, true, func(items []map[string]types.AttributeValue) error {
		for _, item := range items {
			var it alertItem
			if err := attributevalue.UnmarshalMap(item, &it); err != nil {
				return fmt.Errorf("decode alert: %w", err)
			}
			out = append(out, it.alert())
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the alerts of %d instances: %w", len(ks), err)
	}
	return out, nil
}

// Alerts lists the open alerts, of app only unless app is "".
func (s *Store) Alerts(ctx context.Context, app string) ([]timer.Alert, error) {
	var out []timer.Alert
	err := s.AlertsEach(ctx, app, func(a timer.Alert) error {
		out = append(out, a)
		return nil
	})
	return out, err
}

// AlertsEach calls fn with each open alert (of app only unless app is ""), a page of the
// alerts partition at a time, so that a caller that keeps few holds a page, not every alert.
func (s *Store) AlertsEach(ctx context.Context, app string, fn func(timer.Alert) error) error {
	expr, err := expression.NewBuilder().WithKeyCondition(expression.Key("pk").Equal(expression.Value(alertsPK))).Build()
	if err != nil {
		return err
	}
	p := dynamodb.NewQueryPaginator(s.api, &dynamodb.QueryInput{TableName: &s.timers, KeyConditionExpression: expr.KeyCondition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(), ConsistentRead: aws.Bool(true)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("list alerts: %w", err)
		}
		for _, item := range page.Items {
			var it alertItem
			if err := attributevalue.UnmarshalMap(item, &it); err != nil {
				return err
			}
			if a := it.alert(); timer.SelectsApp(app, a.App) {
				if err := fn(a); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// Watch sets the noSuccessWithin deadline of an instance: to `deadline` when reset (a
// success), else only if it has none yet (its first run).
func (s *Store) Watch(ctx context.Context, k timer.Key, deadline time.Time, reset bool) error {
	n := expression.Name
	var val expression.OperandBuilder = expression.Value(ms(deadline))
	if !reset {
		val = expression.IfNotExists(n("deadline"), expression.Value(ms(deadline)))
	}
	upd := expression.Set(n("deadline"), val).Set(n("app"), expression.Value(appAttr(k.App))).Set(n("timer"), expression.Value(k.Timer)).
		Set(n("tenant"), expression.Value(k.Tenant))
	expr, err := expression.NewBuilder().WithUpdate(upd).Build()
	if err != nil {
		return err
	}
	_, err = s.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &s.timers,
		Key:              map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: watchPK}, "sk": &types.AttributeValueMemberS{Value: k.String()}},
		UpdateExpression: expr.Update(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values()})
	if err != nil {
		return fmt.Errorf("watch %s: %w", k, err)
	}
	return nil
}

// Overdue are the watched instances whose deadline is at or before now, with it.
func (s *Store) Overdue(ctx context.Context, now time.Time) (map[timer.Key]time.Time, error) {
	expr, err := expression.NewBuilder().WithKeyCondition(expression.Key("pk").Equal(expression.Value(watchPK))).
		WithFilter(expression.Name("deadline").LessThanEqual(expression.Value(ms(now)))).Build()
	if err != nil {
		return nil, err
	}
	out := map[timer.Key]time.Time{}
	p := dynamodb.NewQueryPaginator(s.api, &dynamodb.QueryInput{TableName: &s.timers, KeyConditionExpression: expr.KeyCondition(),
		FilterExpression: expr.Filter(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values()})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("read the noSuccessWithin deadlines: %w", err)
		}
		for _, item := range page.Items {
			var w struct {
				App      string `dynamodbav:"app"`
				Timer    string `dynamodbav:"timer"`
				Tenant   string `dynamodbav:"tenant"`
				Deadline int64  `dynamodbav:"deadline"`
			}
			if err := attributevalue.UnmarshalMap(item, &w); err != nil {
				return nil, err
			}
			out[keyOf(w.App, w.Timer, w.Tenant)] = fromMs(w.Deadline)
		}
	}
	return out, nil
}

// InstanceFromImage decodes an instance item from a stream record's image.
func InstanceFromImage(img map[string]types.AttributeValue) (timer.Instance, error) {
	var it instanceItem
	if err := attributevalue.UnmarshalMap(img, &it); err != nil {
		return timer.Instance{}, fmt.Errorf("decode instance image: %w", err)
	}
	return it.instance(), nil
}

// Unwatch stops watching an instance (deactivated, or its noSuccessWithin rule removed);
// its next run watches it again.
func (s *Store) Unwatch(ctx context.Context, k timer.Key) error {
	_, err := s.api.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &s.timers,
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: watchPK}, "sk": &types.AttributeValueMemberS{Value: k.String()}}})
	if err != nil {
		return fmt.Errorf("unwatch %s: %w", k, err)
	}
	return nil
}
