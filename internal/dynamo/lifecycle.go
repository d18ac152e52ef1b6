package dynamo

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/timer"
)

// The timers table also holds, besides the runtime instances (kind "instance"):
//   - one item per registered tenant (pk "TENANT", sk "N#<name>", kind "tenant");
//   - one item per manifest entry, its definition (pk "T#<entry>", sk "DEF", kind
//     "definition"), so that a tenant added later gets the multi-tenant timers' instances.
//     <entry> is the entry's qualified name, "app:Name" for an app other than the default
//     (timer.Key.Name), and the item's app attribute names its app (absent: the default app).
//
// None of them has the due or running index attributes, so the engine never reads them.
const (
	tenantPK     = "TENANT"
	tenantPrefix = "N#"
	definitionSK = "DEF"
	kindTenant   = "tenant"
	kindDef      = "definition"
)

type tenantItem struct {
	PK      string `dynamodbav:"pk"`
	SK      string `dynamodbav:"sk"`
	Kind    string `dynamodbav:"kind"`
	Name    string `dynamodbav:"name"`
	Source  string `dynamodbav:"source"`
	AddedAt int64  `dynamodbav:"addedAt"`
	// ListedBy is the set of apps whose manifests list the tenant; absent on a tenant the
	// manifest registered before apps existed (the default app's, timer.Tenant.Legacy).
	ListedBy []string `dynamodbav:"listedBy,stringset,omitempty"`
}

// ListTenant implements admin.Store: it registers the tenant as the manifest's if it was not
// registered, and adds app to the apps that list it, in one write.
func (s *Store) ListTenant(ctx context.Context, name, app string, now time.Time) (created bool, err error) {
	if !timer.ValidName(name) {
		return false, fmt.Errorf("%w: tenant name %q must match [A-Za-z0-9_-]{1,128}", errkind.Invalid, name)
	}
	n := expression.Name
	upd := expression.Set(n("kind"), expression.Value(kindTenant)).Set(n("name"), expression.Value(name)).
		Set(n("addedAt"), n("addedAt").IfNotExists(expression.Value(ms(now)))).
		Set(n("source"), n("source").IfNotExists(expression.Value(timer.TenantListed))).
		Add(n("listedBy"), expression.Value(&types.AttributeValueMemberSS{Value: []string{appAttr(app)}}))
	out, err := s.update(ctx, s.timers, tenantKey(name), upd, nil, types.ReturnValueAllOld)
	if err != nil {
		return false, fmt.Errorf("register tenant %s: %w", name, err)
	}
	return len(out.Attributes) == 0, nil
}

// UnlistTenant implements admin.Store: it removes app from the apps that list the tenant,
// then unregisters the tenant if the manifests registered it and no app lists it any more —
// a delete conditional on exactly that, so that an app listing it meanwhile keeps it.
func (s *Store) UnlistTenant(ctx context.Context, name, app string) (removed bool, err error) {
	n := expression.Name
	upd := expression.Delete(n("listedBy"), expression.Value(&types.AttributeValueMemberSS{Value: []string{appAttr(app)}}))
	exists := n("pk").AttributeExists()
	if _, err := s.update(ctx, s.timers, tenantKey(name), upd, &exists, types.ReturnValueNone); err != nil {
		if isConditionFailed(err) {
			return false, nil
		}
		return false, fmt.Errorf("unlist tenant %s: %w", name, err)
	}
	cond := n("source").Equal(expression.Value(timer.TenantListed)).And(n("listedBy").AttributeNotExists())
	expr, err := expression.NewBuilder().WithCondition(cond).Build()
	if err != nil {
		return false, err
	}
	_, err = s.api.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: &s.timers, Key: tenantKey(name), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	})
	if isConditionFailed(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("remove tenant %s: %w", name, err)
	}
	return true, nil
}

// PutTenant registers a tenant; a tenant already registered keeps its first source unless
// the new one is an operator's (timer.ByOperator: their registration outlives the manifest's list).
// created reports whether it was new.
func (s *Store) PutTenant(ctx context.Context, name, source string, now time.Time) (created bool, err error) {
	if !timer.ValidName(name) {
		return false, fmt.Errorf("%w: tenant name %q must match [A-Za-z0-9_-]{1,128}", errkind.Invalid, name)
	}
	n := expression.Name
	upd := expression.Set(n("kind"), expression.Value(kindTenant)).Set(n("name"), expression.Value(name)).
		Set(n("addedAt"), n("addedAt").IfNotExists(expression.Value(ms(now))))
	if timer.ByOperator(source) {
		upd = upd.Set(n("source"), expression.Value(source))
	} else {
		upd = upd.Set(n("source"), n("source").IfNotExists(expression.Value(source)))
	}
	out, err := s.update(ctx, s.timers, tenantKey(name), upd, nil, types.ReturnValueAllOld)
	if err != nil {
		return false, fmt.Errorf("register tenant %s: %w", name, err)
	}
	return len(out.Attributes) == 0, nil // ALL_OLD is empty when there was no item
}

// DeleteTenant unregisters a tenant (timer.ErrNotFound if it was not registered).
func (s *Store) DeleteTenant(ctx context.Context, name string) error {
	_, err := s.api.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: &s.timers, Key: tenantKey(name), ConditionExpression: aws.String("attribute_exists(pk)"),
	})
	if isConditionFailed(err) {
		return fmt.Errorf("%w: tenant %s is not registered", timer.ErrNotFound, name)
	}
	if err != nil {
		return fmt.Errorf("remove tenant %s: %w", name, err)
	}
	return nil
}

// Tenants lists the registered tenants by name (one Query).
func (s *Store) Tenants(ctx context.Context) ([]timer.Tenant, error) {
	items, err := queryPartition[tenantItem](ctx, s, tenantPK, "tenants")
	if err != nil {
		return nil, err
	}
	var out []timer.Tenant
	for _, it := range items {
		ls := slices.Clone(it.ListedBy)
		slices.Sort(ls)
		out = append(out, timer.Tenant{Name: it.Name, Source: it.Source, AddedAt: fromMs(it.AddedAt), ListedBy: ls})
	}
	slices.SortFunc(out, func(a, b timer.Tenant) int { return cmp.Compare(a.Name, b.Name) })
	return out, nil
}

func tenantKey(name string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: tenantPK},
		"sk": &types.AttributeValueMemberS{Value: tenantPrefix + name},
	}
}

type definitionItem struct {
	PK        string `dynamodbav:"pk"`
	SK        string `dynamodbav:"sk"`
	Kind      string `dynamodbav:"kind"`
	Entry     string `dynamodbav:"entry"` // qualified: "Name" or "app:Name"
	App       string `dynamodbav:"app,omitempty"`
	Spec      string `dynamodbav:"spec"` // the manifest entry, as JSON
	UpdatedAt int64  `dynamodbav:"updatedAt"`
}

// PutDefinitions stores manifest entries' definitions (qualified entry name -> JSON spec), one
// PutItem each (a sync writes a few dozen at most).
func (s *Store) PutDefinitions(ctx context.Context, defs map[string]string, now time.Time) error {
	// The apps first: an app's log is listed among every app's once it is registered.
	var apps []string
	for entry := range defs {
		apps = append(apps, appOfEntry(entry))
	}
	if err := s.RegisterApps(ctx, apps); err != nil {
		return err
	}
	for _, entry := range slices.Sorted(maps.Keys(defs)) {
		item, err := attributevalue.MarshalMap(definitionItem{PK: "T#" + entry, SK: definitionSK, Kind: kindDef, Entry: entry, App: appAttr(appOfEntry(entry)), Spec: defs[entry], UpdatedAt: ms(now)})
		if err != nil {
			return fmt.Errorf("encode definition %s: %w", entry, err)
		}
		if _, err := s.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.timers, Item: item}); err != nil {
			return fmt.Errorf("store definition %s: %w", entry, err)
		}
	}
	return nil
}

// DeleteDefinitions removes definitions of entries that left the manifest (their instances
// and history stay).
func (s *Store) DeleteDefinitions(ctx context.Context, entries []string) error {
	for _, entry := range entries {
		_, err := s.api.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &s.timers, Key: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: "T#" + entry}, "sk": &types.AttributeValueMemberS{Value: definitionSK},
		}})
		if err != nil {
			return fmt.Errorf("delete definition %s: %w", entry, err)
		}
	}
	return nil
}

func appOfEntry(entry string) string {
	app, _ := timer.ParseName(entry)
	return app
}

// Definitions returns every stored definition of every app (qualified entry name -> JSON spec). It scans: an
// operator's operation (sync, tenants add), never on the firing path.
func (s *Store) Definitions(ctx context.Context) (map[string]string, error) {
	items, err := scanTimers[definitionItem](ctx, s, expression.Name("kind").Equal(expression.Value(kindDef)), "definitions")
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(items))
	for _, it := range items {
		out[it.Entry] = it.Spec
	}
	return out, nil
}

// WakeForDeploy sets an active instance's next run to now, once per deploy: the write is
// conditional on the instance not having been woken for this deploy already, so a retried
// publish (CloudFormation resends a custom resource request it got no answer to) does not run
// a When Published timer twice. woken is false when the instance is inactive or was already
// woken for deploy. A running instance runs again when its execution ends (a next run set
// during a run stands).
func (s *Store) WakeForDeploy(ctx context.Context, key timer.Key, deploy string, now time.Time) (in timer.Instance, woken bool, err error) {
	n := expression.Name
	upd := expression.Set(n("nextRun"), expression.Value(ms(now))).Set(n("wokenFor"), expression.Value(deploy)).
		Remove(n("pendingScheduledAt")).Remove(n("pendingAttempt")).Remove(n("requeuedAt")).Remove(n("waiting"))
	cond := n("active").Equal(expression.Value(true)).
		And(n("wokenFor").AttributeNotExists().Or(n("wokenFor").NotEqual(expression.Value(deploy))))
	out, err := s.update(ctx, s.timers, instanceKey(key), upd, &cond, types.ReturnValueAllNew)
	if isConditionFailed(err) {
		return timer.Instance{}, false, nil
	}
	if err != nil {
		return timer.Instance{}, false, fmt.Errorf("wake %s: %w", key, err)
	}
	if in, err = decodeInstance(out.Attributes); err != nil {
		return in, false, err
	}
	in, err = s.syncDueIndex(ctx, in)
	return in, err == nil, err
}

// Deploys the publish function completed are recorded (pk "PUBLISH", sk the deploy key, kind
// "publish"), so that a request for a deploy already published — CloudFormation rolling a
// failed update back to the previous deploy's properties, or a retried request — changes
// nothing and runs no When Published timer again.
const publishPK = "PUBLISH"

func publishKey(deploy string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: publishPK},
		"sk": &types.AttributeValueMemberS{Value: deploy},
	}
}

// Published reports whether deploy was published before.
func (s *Store) Published(ctx context.Context, deploy string) (bool, error) {
	out, err := s.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.timers, Key: publishKey(deploy), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return false, fmt.Errorf("read publish record %s: %w", deploy, err)
	}
	return len(out.Item) > 0, nil
}

// MarkPublished records that deploy was published.
func (s *Store) MarkPublished(ctx context.Context, deploy string, now time.Time) error {
	n := expression.Name
	upd := expression.Set(n("kind"), expression.Value("publish")).Set(n("publishedAt"), expression.Value(ms(now)))
	if _, err := s.update(ctx, s.timers, publishKey(deploy), upd, nil, types.ReturnValueNone); err != nil {
		return fmt.Errorf("record publish %s: %w", deploy, err)
	}
	return nil
}
