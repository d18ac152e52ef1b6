package dynamo

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/sundialhq/sundial/internal/timer"
)

// Each app an app stack publishes has an owner record in the timers table (pk "APPOWNER", sk
// the app, kind "appowner"): the stack whose Custom::SundialTimers resource claimed it. It has
// no index attribute, so the engine never reads it.
const (
	appOwnerPK   = "APPOWNER"
	kindAppOwner = "appowner"
)

type appOwnerItem struct {
	App   string `dynamodbav:"app"`
	Owner string `dynamodbav:"owner"`
	Since int64  `dynamodbav:"since"`
}

func (it appOwnerItem) owner() timer.AppOwner {
	return timer.AppOwner{App: it.App, Owner: it.Owner, Since: fromMs(it.Since)}
}

func appOwnerKey(app string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: appOwnerPK},
		"sk": &types.AttributeValueMemberS{Value: app},
	}
}

// ClaimApp implements admin.OwnerStore: one UpdateItem on condition that nobody or owner
// holds the app.
func (s *Store) ClaimApp(ctx context.Context, app, owner string, now time.Time) (timer.AppOwner, error) {
	n := expression.Name
	upd := expression.Set(n("kind"), expression.Value(kindAppOwner)).Set(n("app"), expression.Value(app)).
		Set(n("owner"), expression.Value(owner)).Set(n("since"), n("since").IfNotExists(expression.Value(ms(now))))
	cond := expression.AttributeNotExists(n("owner")).Or(n("owner").Equal(expression.Value(owner)))
	out, err := s.update(ctx, s.timers, appOwnerKey(app), upd, &cond, types.ReturnValueAllNew)
	if isConditionFailed(err) {
		held, rerr := s.appOwner(ctx, app, err)
		if rerr != nil {
			return timer.AppOwner{}, rerr
		}
		return held, fmt.Errorf("%w: app %s is owned by %s", timer.ErrAppOwned, app, held.Owner)
	}
	if err != nil {
		return timer.AppOwner{}, fmt.Errorf("claim app %s: %w", app, err)
	}
	var it appOwnerItem
	if err := attributevalue.UnmarshalMap(out.Attributes, &it); err != nil {
		return timer.AppOwner{}, fmt.Errorf("decode the owner of app %s: %w", app, err)
	}
	return it.owner(), nil
}

// ReleaseApp implements admin.OwnerStore: one DeleteItem, conditional on owner unless owner
// is "".
func (s *Store) ReleaseApp(ctx context.Context, app, owner string) (timer.AppOwner, error) {
	in := &dynamodb.DeleteItemInput{TableName: &s.timers, Key: appOwnerKey(app), ReturnValues: types.ReturnValueAllOld}
	if owner != "" {
		cond := expression.AttributeNotExists(expression.Name("owner")).Or(expression.Name("owner").Equal(expression.Value(owner)))
		expr, err := expression.NewBuilder().WithCondition(cond).Build()
		if err != nil {
			return timer.AppOwner{}, err
		}
		in.ConditionExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues = expr.Condition(), expr.Names(), expr.Values()
		in.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	}
	out, err := s.api.DeleteItem(ctx, in)
	if isConditionFailed(err) {
		held, rerr := s.appOwner(ctx, app, err)
		if rerr != nil {
			return timer.AppOwner{}, rerr
		}
		return held, fmt.Errorf("%w: app %s is owned by %s", timer.ErrAppOwned, app, held.Owner)
	}
	if err != nil {
		return timer.AppOwner{}, fmt.Errorf("release app %s: %w", app, err)
	}
	if len(out.Attributes) == 0 {
		return timer.AppOwner{}, nil
	}
	var it appOwnerItem
	if err := attributevalue.UnmarshalMap(out.Attributes, &it); err != nil {
		return timer.AppOwner{}, fmt.Errorf("decode the owner of app %s: %w", app, err)
	}
	return it.owner(), nil
}

// appOwner is the record a failed condition met: the one DynamoDB sent back with the failure,
// else read again (not every emulator sends it).
func (s *Store) appOwner(ctx context.Context, app string, condErr error) (timer.AppOwner, error) {
	item, ok := conditionOld(condErr)
	if !ok {
		out, err := s.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.timers, Key: appOwnerKey(app), ConsistentRead: aws.Bool(true)})
		if err != nil {
			return timer.AppOwner{}, fmt.Errorf("read the owner of app %s: %w", app, err)
		}
		item = out.Item
	}
	if len(item) == 0 {
		// Released between the write and the read: the caller may try again.
		return timer.AppOwner{}, fmt.Errorf("%w: the owner of app %s changed meanwhile", timer.ErrChanged, app)
	}
	var it appOwnerItem
	if err := attributevalue.UnmarshalMap(item, &it); err != nil {
		return timer.AppOwner{}, fmt.Errorf("decode the owner of app %s: %w", app, err)
	}
	return it.owner(), nil
}

// AppOwners implements admin.OwnerStore (one Query).
func (s *Store) AppOwners(ctx context.Context) ([]timer.AppOwner, error) {
	kc := expression.Key("pk").Equal(expression.Value(appOwnerPK))
	expr, err := expression.NewBuilder().WithKeyCondition(kc).Build()
	if err != nil {
		return nil, err
	}
	p := dynamodb.NewQueryPaginator(s.api, &dynamodb.QueryInput{
		TableName: &s.timers, KeyConditionExpression: expr.KeyCondition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(), ConsistentRead: aws.Bool(true),
	})
	var out []timer.AppOwner
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("list app owners: %w", err)
		}
		var items []appOwnerItem
		if err := attributevalue.UnmarshalListOfMaps(page.Items, &items); err != nil {
			return nil, fmt.Errorf("decode app owners: %w", err)
		}
		for _, it := range items {
			out = append(out, it.owner())
		}
	}
	slices.SortFunc(out, func(a, b timer.AppOwner) int { return cmp.Compare(a.App, b.App) })
	return out, nil
}
