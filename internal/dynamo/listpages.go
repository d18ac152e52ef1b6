package dynamo

import (
	"context"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/sundialhq/sundial/internal/timer"
)

// TenantsAfter lists up to limit registered tenants by name, those after the name after
// ("": from the first): one Query of the tenants' partition, Limit items from the key
// after; more says the partition may hold more.
func (s *Store) TenantsAfter(ctx context.Context, after string, limit int) ([]timer.Tenant, bool, error) {
	kc := expression.Key("pk").Equal(expression.Value(tenantPK))
	if after == "" {
		kc = kc.And(expression.Key("sk").BeginsWith(tenantPrefix))
	} else {
		// "N#"+after < every later tenant's key, and the prefix's last character + 1 bounds it.
		kc = kc.And(expression.Key("sk").Between(expression.Value(tenantPrefix+after+"\x00"), expression.Value(tenantPrefix[:1]+"$")))
	}
	expr, err := expression.NewBuilder().WithKeyCondition(kc).Build()
	if err != nil {
		return nil, false, fmt.Errorf("build query: %w", err)
	}
	out, err := s.api.Query(ctx, &dynamodb.QueryInput{
		TableName: &s.timers, KeyConditionExpression: expr.KeyCondition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
		ConsistentRead: aws.Bool(true), Limit: aws.Int32(int32(limit)),
	})
	if err != nil {
		return nil, false, fmt.Errorf("list tenants: %w", err)
	}
	var items []tenantItem
	if err := attributevalue.UnmarshalListOfMaps(out.Items, &items); err != nil {
		return nil, false, fmt.Errorf("decode tenants: %w", err)
	}
	ts := make([]timer.Tenant, 0, len(items))
	for _, it := range items {
		ls := slices.Clone(it.ListedBy)
		slices.Sort(ls)
		ts = append(ts, timer.Tenant{Name: it.Name, Source: it.Source, AddedAt: fromMs(it.AddedAt), ListedBy: ls})
	}
	return ts, len(out.LastEvaluatedKey) > 0, nil
}

// AlertsAfter lists up to limit open alerts of app ("": every app's) by instance and rule,
// those after the alert whose key (instance|rule, as console.alertKey) is after ("": from the first): Queries of
// the alerts partition, which holds open alerts only, from that key. A named app's are read
// by its key prefix ("app:"); the default app's, whose keys have no prefix, are filtered by
// their app attribute. more says there may be more.
func (s *Store) AlertsAfter(ctx context.Context, app, after string, limit int) ([]timer.Alert, bool, error) {
	kc := expression.Key("pk").Equal(expression.Value(alertsPK))
	b := expression.NewBuilder()
	if one, ok := timer.SelectedApp(app); ok {
		if one != "" {
			kc = kc.And(expression.Key("sk").BeginsWith(one + ":"))
		} else {
			b = b.WithFilter(expression.Name("app").Equal(expression.Value(timer.AppName(one))))
		}
	}
	expr, err := b.WithKeyCondition(kc).Build()
	if err != nil {
		return nil, false, fmt.Errorf("build query: %w", err)
	}
	in := &dynamodb.QueryInput{TableName: &s.timers, KeyConditionExpression: expr.KeyCondition(), FilterExpression: expr.Filter(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(), ConsistentRead: aws.Bool(true),
		Limit: aws.Int32(int32(limit))}
	if after != "" {
		in.ExclusiveStartKey = map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: alertsPK}, "sk": &types.AttributeValueMemberS{Value: after}}
	}
	var out []timer.Alert
	for {
		page, err := s.api.Query(ctx, in)
		if err != nil {
			return nil, false, fmt.Errorf("list alerts: %w", err)
		}
		for _, item := range page.Items {
			var it alertItem
			if err := attributevalue.UnmarshalMap(item, &it); err != nil {
				return nil, false, fmt.Errorf("decode alert: %w", err)
			}
			out = append(out, it.alert())
			if len(out) == limit {
				return out, true, nil
			}
		}
		if len(page.LastEvaluatedKey) == 0 {
			return out, false, nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}

// BackfillsAfter lists up to limit timers' latest backfills of app ("": every app's) by app
// and timer, those after the key after ("<app>#<timer>", "": from the first): a Query of the
// backfills' partition from that key, one app's by its key prefix. more says there may be
// more.
func (s *Store) BackfillsAfter(ctx context.Context, app, after string, limit int) ([]timer.Backfill, bool, error) {
	kc := expression.Key("pk").Equal(expression.Value(backfillPK))
	if app != "" {
		kc = kc.And(expression.Key("sk").BeginsWith(timer.AppName(app) + "#"))
	}
	expr, err := expression.NewBuilder().WithKeyCondition(kc).Build()
	if err != nil {
		return nil, false, fmt.Errorf("build query: %w", err)
	}
	in := &dynamodb.QueryInput{TableName: &s.timers, KeyConditionExpression: expr.KeyCondition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(), ConsistentRead: aws.Bool(true),
		Limit: aws.Int32(int32(limit))}
	if after != "" {
		in.ExclusiveStartKey = map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: backfillPK}, "sk": &types.AttributeValueMemberS{Value: after}}
	}
	out, err := s.api.Query(ctx, in)
	if err != nil {
		return nil, false, fmt.Errorf("list backfills: %w", err)
	}
	var recs []backfillRecord
	if err := attributevalue.UnmarshalListOfMaps(out.Items, &recs); err != nil {
		return nil, false, fmt.Errorf("decode backfills: %w", err)
	}
	bs := make([]timer.Backfill, 0, len(recs))
	for _, r := range recs {
		bs = append(bs, r.backfill())
	}
	return bs, len(out.LastEvaluatedKey) > 0, nil
}
