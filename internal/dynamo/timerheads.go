package dynamo

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/sundialhq/sundial/internal/timer"
)

// TimerHeads implements admin.TimerHeadStore: the first instance (by tenant) of each timer
// of the apps sel selects (timer.SelectsApp: "" every registered app's). It skips from one
// timer to the next on the byApp index (one Query of one key, and one read of that
// instance, per timer), so it costs what the apps' timers number, not their tenants'
// instances.
func (s *Store) TimerHeads(ctx context.Context, sel string) ([]timer.Instance, error) {
	apps := []string{sel}
	if sel == "" {
		var err error
		if apps, err = s.LogApps(ctx); err != nil {
			return nil, err
		}
	}
	var out []timer.Instance
	for _, app := range apps {
		after := ""
		for {
			cond := expression.Key(attrByApp).Equal(expression.Value(app))
			if after != "" {
				// byAppKey is "<timer>#<tenant>": past every tenant of the timer read last.
				cond = cond.And(expression.Key(attrByAppKey).GreaterThan(expression.Value(after + "#\U0010FFFF")))
			}
			expr, err := expression.NewBuilder().WithKeyCondition(cond).Build()
			if err != nil {
				return nil, fmt.Errorf("build query: %w", err)
			}
			q, err := s.api.Query(ctx, &dynamodb.QueryInput{
				TableName: &s.timers, IndexName: aws.String(indexByApp), KeyConditionExpression: expr.KeyCondition(),
				ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(), Limit: aws.Int32(1),
			})
			if err != nil {
				return nil, fmt.Errorf("list the timers of app %s: %w", app, err)
			}
			if len(q.Items) == 0 {
				break
			}
			k, ok := q.Items[0][attrByAppKey].(*types.AttributeValueMemberS)
			if !ok {
				return nil, fmt.Errorf("list the timers of app %s: an index entry without %s", app, attrByAppKey)
			}
			after, _, _ = strings.Cut(k.Value, "#")
			got, err := s.batchGet(ctx, s.timers, []map[string]types.AttributeValue{{"pk": q.Items[0]["pk"], "sk": q.Items[0]["sk"]}}, true)
			if err != nil {
				return nil, err
			}
			for _, g := range got { // none: deleted since the index named it
				var it instanceItem
				if err := attributevalue.UnmarshalMap(g, &it); err != nil {
					return nil, fmt.Errorf("decode an instance of app %s: %w", app, err)
				}
				out = append(out, it.instance())
			}
		}
	}
	return out, nil
}
