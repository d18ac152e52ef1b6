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
	App      string `dynamodbav:"app"`
	Owner    string `dynamodbav:"owner"`
	Resource string `dynamodbav:"resource,omitempty"`
	Since    int64  `dynamodbav:"since"`
}

func (it appOwnerItem) owner() timer.AppOwner {
	return timer.AppOwner{App: it.App, Owner: it.Owner, Resource: it.Resource, Since: fromMs(it.Since)}
}

func appOwnerKey(app string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: appOwnerPK},
		"sk": &types.AttributeValueMemberS{Value: app},
	}
}

// ownedBy is the condition that nobody or owner holds the app.
func ownedBy(owner string) expression.ConditionBuilder {
	n := expression.Name("owner")
	return expression.AttributeNotExists(n).Or(n.Equal(expression.Value(owner)))
}

// decodeAppOwner decodes an owner record (zero for none).
func decodeAppOwner(app string, item map[string]types.AttributeValue) (timer.AppOwner, error) {
	if len(item) == 0 {
		return timer.AppOwner{}, nil
	}
	var it appOwnerItem
	if err := attributevalue.UnmarshalMap(item, &it); err != nil {
		return timer.AppOwner{}, fmt.Errorf("decode the owner of app %s: %w", app, err)
	}
	return it.owner(), nil
}

// ClaimApp implements admin.OwnerStore: one UpdateItem on condition that nobody or owner
// holds the app; the record before (ALL_OLD) says whether it is new.
func (s *Store) ClaimApp(ctx context.Context, app, owner, resource string, now time.Time) (timer.AppOwner, bool, error) {
	n := expression.Name
	upd := expression.Set(n("kind"), expression.Value(kindAppOwner)).Set(n("app"), expression.Value(app)).
		Set(n("owner"), expression.Value(owner)).Set(n("resource"), expression.Value(resource)).
		Set(n("since"), n("since").IfNotExists(expression.Value(ms(now))))
	cond := ownedBy(owner)
	out, err := s.update(ctx, s.timers, appOwnerKey(app), upd, &cond, types.ReturnValueAllOld)
	if err != nil {
		held, err := s.heldBy(ctx, app, "claim", err)
		return held, false, err
	}
	before, err := decodeAppOwner(app, out.Attributes)
	if err != nil {
		return before, false, err
	}
	held := timer.AppOwner{App: app, Owner: owner, Resource: resource, Since: before.Since}
	if before.Owner == "" {
		held.Since = fromMs(ms(now))
	}
	return held, before.Owner == "", nil
}

// AppOwner implements admin.OwnerStore (a consistent GetItem).
func (s *Store) AppOwner(ctx context.Context, app string) (timer.AppOwner, bool, error) {
	out, err := s.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.timers, Key: appOwnerKey(app), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return timer.AppOwner{}, false, fmt.Errorf("read the owner of app %s: %w", app, err)
	}
	held, err := decodeAppOwner(app, out.Item)
	return held, held.Owner != "", err
}

// ReleaseApp implements admin.OwnerStore: one DeleteItem, conditional on owner unless owner
// is "".
func (s *Store) ReleaseApp(ctx context.Context, app, owner string) (timer.AppOwner, error) {
	in := &dynamodb.DeleteItemInput{TableName: &s.timers, Key: appOwnerKey(app), ReturnValues: types.ReturnValueAllOld}
	if owner != "" {
		expr, err := expression.NewBuilder().WithCondition(ownedBy(owner)).Build()
		if err != nil {
			return timer.AppOwner{}, err
		}
		in.ConditionExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues = expr.Condition(), expr.Names(), expr.Values()
		in.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
	}
	out, err := s.api.DeleteItem(ctx, in)
	if err != nil {
		return s.heldBy(ctx, app, "release", err)
	}
	return decodeAppOwner(app, out.Attributes)
}

// heldBy turns a failed write into its error: for a failed condition, timer.ErrAppOwned with
// the record it met (the one DynamoDB sent back, else read again: not every emulator sends it).
func (s *Store) heldBy(ctx context.Context, app, op string, err error) (timer.AppOwner, error) {
	if !isConditionFailed(err) {
		return timer.AppOwner{}, fmt.Errorf("%s app %s: %w", op, app, err)
	}
	var (
		held timer.AppOwner
		derr error
	)
	if item, ok := conditionOld(err); ok {
		held, derr = decodeAppOwner(app, item)
	} else {
		held, _, derr = s.AppOwner(ctx, app)
	}
	switch {
	case derr != nil:
		return held, derr
	case held.Owner == "":
		// Released between the write and the read: the caller may try again.
		return held, fmt.Errorf("%w: the owner of app %s changed meanwhile", timer.ErrChanged, app)
	}
	return held, fmt.Errorf("%w: app %s is owned by %s", timer.ErrAppOwned, app, held.Owner)
}

// AppOwners implements admin.OwnerStore (one Query).
func (s *Store) AppOwners(ctx context.Context) ([]timer.AppOwner, error) {
	items, err := queryPartition[appOwnerItem](ctx, s, appOwnerPK, "app owners")
	if err != nil {
		return nil, err
	}
	out := make([]timer.AppOwner, 0, len(items))
	for _, it := range items {
		out = append(out, it.owner())
	}
	slices.SortFunc(out, func(a, b timer.AppOwner) int { return cmp.Compare(a.App, b.App) })
	return out, nil
}
