package dynamo

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/timer"
)

// indexByApp is keyed byApp (S, the app's name) + byAppKey (S, "<timer>#<tenant>") and
// projects the keys only. Only instance items carry the two attributes (the index is sparse),
// so a read of one app's instances reads that app's entries and then those items
// (BatchGetItem, strongly consistent), never the other apps'. The attributes never change
// after the instance's first write, so the engine's writes do not write to the index.
const (
	indexByApp   = "byApp"
	attrByApp    = "byApp"
	attrByAppKey = "byAppKey"
)

// byAppKey is an instance's sort key in the byApp index: by timer name, then tenant ('#' sorts
// before every character a name may have, so "a#…" comes before "ab#…").
func byAppKey(k timer.Key) string { return k.Timer + "#" + k.Tenant }

// Instances implements admin.InstanceStore: one page of instances. One timer's is a Query of
// its partition; one app's a Query of the byApp index and a read of the items it names; every
// app's (App "") walks the registered apps (LogApps: the default app, then by name) the same
// way, so it too is by app, name and tenant, and reads instances only.
func (s *Store) Instances(ctx context.Context, q timer.InstanceQuery) (timer.InstancePage, error) {
	if err := q.Validate(); err != nil {
		return timer.InstancePage{}, err
	}
	limit, _ := timer.PageSize(q.Limit)
	app, _ := timer.SelectedApp(q.App)
	scope := "s"
	switch {
	case q.Timer != "":
		scope = "t:" + timer.Key{App: app, Timer: q.Timer}.Name()
	case q.App != "":
		scope = "a:" + q.App
	}
	start, err := decodeCursor(q.Cursor, scope)
	if err != nil {
		return timer.InstancePage{}, err
	}
	var apps []string // every app's listing: the apps still to read, the current one first
	if q.Timer == "" {
		if q.App != "" {
			apps = []string{q.App}
		} else if apps, err = s.LogApps(ctx); err != nil {
			return timer.InstancePage{}, err
		}
		if from, ok := start[attrByApp].(*types.AttributeValueMemberS); ok {
			i := slices.Index(apps, from.Value)
			if i < 0 {
				return timer.InstancePage{}, fmt.Errorf("%w: cursor %q names an app that is not registered", errkind.Invalid, q.Cursor)
			}
			apps = apps[i:]
			if _, ok := start["pk"]; !ok {
				start = nil // the start of that app
			}
		}
	}
	var page timer.InstancePage
	for len(page.Items) < limit {
		var items []instanceItem
		var last map[string]types.AttributeValue
		if q.Timer != "" {
			items, last, err = s.timerPage(ctx, timer.Key{App: app, Timer: q.Timer}, start, int32(limit-len(page.Items)))
		} else {
			items, last, err = s.appPage(ctx, apps[0], start, int32(limit-len(page.Items)))
		}
		if err != nil {
			return timer.InstancePage{}, err
		}
		for _, it := range items {
			in := it.instance()
			page.Items = append(page.Items, in)
			if it.Defaults != nil {
				if page.Edited == nil {
					page.Edited = map[timer.Key]bool{}
				}
				page.Edited[in.Key] = true
			}
		}
		start = last
		if len(last) == 0 {
			if len(apps) <= 1 {
				return page, nil // the last app's (or timer's) last page
			}
			apps = apps[1:] // the next app, from its start
			start = map[string]types.AttributeValue{attrByApp: &types.AttributeValueMemberS{Value: apps[0]}}
			if len(page.Items) < limit {
				start = nil
			}
		}
	}
	if page.Next, err = encodeCursor(start, scope); err != nil {
		return timer.InstancePage{}, err
	}
	return page, nil
}

// timerPage reads up to limit of one timer's instances (its partition's "I#" items).
func (s *Store) timerPage(ctx context.Context, key timer.Key, start map[string]types.AttributeValue, limit int32) ([]instanceItem, map[string]types.AttributeValue, error) {
	kc := expression.Key("pk").Equal(expression.Value(pk(key))).And(expression.Key("sk").BeginsWith(instancePrefix))
	expr, err := expression.NewBuilder().WithKeyCondition(kc).Build()
	if err != nil {
		return nil, nil, fmt.Errorf("build query: %w", err)
	}
	out, err := s.api.Query(ctx, &dynamodb.QueryInput{
		TableName: &s.timers, KeyConditionExpression: expr.KeyCondition(), ExpressionAttributeNames: expr.Names(),
		ExpressionAttributeValues: expr.Values(), ConsistentRead: aws.Bool(true), Limit: &limit, ExclusiveStartKey: start,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("list the instances of %s: %w", key.Name(), err)
	}
	var items []instanceItem
	if err := attributevalue.UnmarshalListOfMaps(out.Items, &items); err != nil {
		return nil, nil, fmt.Errorf("decode the instances of %s: %w", key.Name(), err)
	}
	return items, out.LastEvaluatedKey, nil
}

// appPage reads up to limit of one app's index entries and then their items, consistently;
// an entry whose item is gone meanwhile is left out.
func (s *Store) appPage(ctx context.Context, app string, start map[string]types.AttributeValue, limit int32) ([]instanceItem, map[string]types.AttributeValue, error) {
	expr, err := expression.NewBuilder().WithKeyCondition(expression.Key(attrByApp).Equal(expression.Value(app))).Build()
	if err != nil {
		return nil, nil, fmt.Errorf("build query: %w", err)
	}
	out, err := s.api.Query(ctx, &dynamodb.QueryInput{
		TableName: &s.timers, IndexName: aws.String(indexByApp), KeyConditionExpression: expr.KeyCondition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(), Limit: &limit, ExclusiveStartKey: start,
	})
	if err != nil {
		return nil, nil, fmt.Errorf("list the instances of app %s: %w", app, err)
	}
	keys := make([]map[string]types.AttributeValue, 0, len(out.Items))
	order := make(map[string]int, len(out.Items))
	for i, it := range out.Items {
		keys = append(keys, map[string]types.AttributeValue{"pk": it["pk"], "sk": it["sk"]})
		order[keyString(it)] = i
	}
	got, err := s.batchGet(ctx, s.timers, keys, true)
	if err != nil {
		return nil, nil, err
	}
	items := make([]instanceItem, len(out.Items))
	found := make([]bool, len(out.Items))
	for _, g := range got {
		i, ok := order[keyString(g)]
		if !ok {
			continue
		}
		if err := attributevalue.UnmarshalMap(g, &items[i]); err != nil {
			return nil, nil, fmt.Errorf("decode an instance of app %s: %w", app, err)
		}
		found[i] = true
	}
	kept := items[:0]
	for i, it := range items {
		if found[i] {
			kept = append(kept, it)
		}
	}
	return kept, out.LastEvaluatedKey, nil
}

// keyString is an item's table key as one string.
func keyString(item map[string]types.AttributeValue) string {
	var p, k string
	if v, ok := item["pk"].(*types.AttributeValueMemberS); ok {
		p = v.Value
	}
	if v, ok := item["sk"].(*types.AttributeValueMemberS); ok {
		k = v.Value
	}
	return p + "\x00" + k
}

// cursor is a page's position: the read's scope (so that a cursor is refused on another
// read) and DynamoDB's LastEvaluatedKey, whose attributes are all strings here.
type cursor struct {
	Scope string            `json:"s"`
	Key   map[string]string `json:"k"`
}

func encodeCursor(last map[string]types.AttributeValue, scope string) (string, error) {
	c := cursor{Scope: scope, Key: map[string]string{}}
	for name, v := range last {
		sv, ok := v.(*types.AttributeValueMemberS)
		if !ok {
			return "", fmt.Errorf("page position: attribute %s is not a string", name)
		}
		c.Key[name] = sv.Value
	}
	b, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// decodeCursor reads a cursor of scope (nil for ""): a clear error for one that is not a
// cursor of this read.
func decodeCursor(s, scope string) (map[string]types.AttributeValue, error) {
	if s == "" {
		return nil, nil
	}
	bad := fmt.Errorf("%w: cursor %q is not one this listing gave", errkind.Invalid, s)
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, bad
	}
	var c cursor
	if err := json.Unmarshal(b, &c); err != nil || c.Scope != scope || len(c.Key) == 0 {
		return nil, bad
	}
	out := make(map[string]types.AttributeValue, len(c.Key))
	for name, v := range c.Key {
		switch name {
		case "pk", "sk", attrByApp, attrByAppKey:
			out[name] = &types.AttributeValueMemberS{Value: v}
		default:
			return nil, bad
		}
	}
	return out, nil
}
