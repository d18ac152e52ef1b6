package dynamo

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/timer"
)

var _ engine.Pools = (*Store)(nil)

// A shared resource's pool is an item of the timers table (pk "POOL#<pool>", sk "POOL",
// kind "pool") holding its holders and a version: a slot is taken and released by a
// conditional write on the version read (optimistic, the processor's GetItem and
// UpdateItem on the timers table), never in a transaction with the claim (the instance
// and the pool may live in different partitions). Like the owner records it has no index
// attribute and no execId, so neither the fetch nor the log stream sees it.
const (
	poolPKPrefix = "POOL#"
	poolSK       = "POOL"
	kindPool     = "pool"
	// poolTries bounds the retries of a write that lost a race with another taker.
	poolTries = 8
	// poolNewWaiter is the attribute naming the timer whose wait the item's last write
	// started (writePool).
	poolNewWaiter = "newWaiter"
)

type poolItem struct {
	timer.Pool
	Ver int64 `dynamodbav:"ver"`
	// Slots is the slot count its declaring app's last publish wrote (0: none written; the
	// firing's own count applies): a publish that changes it is in force at once for every
	// timer using the pool, another app's too (SetPoolSlots).
	Slots int `dynamodbav:"slots,omitempty"`
}

func poolKey(pool string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: poolPKPrefix + pool},
		"sk": &types.AttributeValueMemberS{Value: poolSK},
	}
}

// readPool reads a pool strongly consistent (zero: none written yet).
func (s *Store) readPool(ctx context.Context, pool string) (poolItem, error) {
	out, err := s.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.timers, Key: poolKey(pool), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return poolItem{}, fmt.Errorf("read pool %s: %w", pool, err)
	}
	var it poolItem
	if err := attributevalue.UnmarshalMap(out.Item, &it); err != nil {
		return poolItem{}, fmt.Errorf("decode pool %s: %w", pool, err)
	}
	return it, nil
}

// writePool replaces the pool's holders if its version is still it.Ver; false: another
// writer came first. newWaiter names the timer whose wait this write starts ("": none): it
// is kept in the item's newWaiter attribute until the next write, so that the stream
// record of this write, and of no other pool write, passes the log writer's event filter
// (template.yaml), which puts a Slot Wait Started event (SlotWaitFromImage).
func (s *Store) writePool(ctx context.Context, pool string, it poolItem, next timer.Pool, newWaiter string) (bool, error) {
	n := expression.Name
	if next.Holders == nil {
		next.Holders = []timer.SlotHolder{}
	}
	if next.Waiters == nil {
		next.Waiters = []timer.SlotWaiter{}
	}
	holders, err := attributevalue.Marshal(next.Holders)
	if err != nil {
		return false, fmt.Errorf("encode pool %s: %w", pool, err)
	}
	waiters, err := attributevalue.Marshal(next.Waiters)
	if err != nil {
		return false, fmt.Errorf("encode pool %s: %w", pool, err)
	}
	upd := expression.Set(n("kind"), expression.Value(kindPool)).Set(n("holders"), expression.Value(holders)).
		Set(n("waiters"), expression.Value(waiters)).Set(n("ver"), expression.Value(it.Ver+1))
	if newWaiter != "" {
		upd = upd.Set(n(poolNewWaiter), expression.Value(newWaiter))
	} else {
		upd = upd.Remove(n(poolNewWaiter))
	}
	cond := expression.AttributeNotExists(n("pk"))
	if it.Ver > 0 {
		cond = expression.Equal(n("ver"), expression.Value(it.Ver))
	}
	_, err = s.update(ctx, s.timers, poolKey(pool), upd, &cond, types.ReturnValueNone)
	if isConditionFailed(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("write pool %s: %w", pool, err)
	}
	return true, nil
}

// TakeSlot implements engine.Pools: a consistent read of the pool and a write conditional on
// its version, also when the firing must wait (it records the waiter, so that it is served
// before later comers).
func (s *Store) TakeSlot(ctx context.Context, use timer.ResourceUse, h timer.SlotHolder, priority int, now time.Time) error {
	var waiting error
	for range poolTries {
		it, err := s.readPool(ctx, use.Pool)
		if err != nil {
			return err
		}
		slots := use.Slots
		if it.Slots > 0 {
			slots = it.Slots // as declared by the pool's app's last publish
		}
		next, taken := timer.TakeSlot(use.Pool, it.Pool, slots, h, priority, now)
		if taken == nil && slices.Equal(next.Holders, it.Holders) && slices.Equal(next.Waiters, it.Waiters) {
			return nil // a retried take
		}
		newWaiter := ""
		if no := (*timer.ErrNoSlot)(nil); errors.As(taken, &no) && no.First {
			newWaiter = h.Timer
		}
		if ok, err := s.writePool(ctx, use.Pool, it, next, newWaiter); err != nil {
			return err
		} else if ok {
			return taken
		}
		waiting = taken
	}
	if waiting != nil {
		return waiting // it waits, unrecorded this time: it asks again after its wait
	}
	return fmt.Errorf("take a slot of pool %s: %w", use.Pool, errPoolContended)
}

// ReleaseSlot implements engine.Pools (a read, and a write only if execution holds a slot).
func (s *Store) ReleaseSlot(ctx context.Context, pool, execution string) error {
	for range poolTries {
		it, err := s.readPool(ctx, pool)
		if err != nil {
			return err
		}
		next, held := timer.ReleaseSlot(it.Holders, execution)
		if !held {
			return nil
		}
		if ok, err := s.writePool(ctx, pool, it, timer.Pool{Holders: next, Waiters: it.Waiters}, ""); ok || err != nil {
			return err
		}
	}
	return fmt.Errorf("release a slot of pool %s: %w", pool, errPoolContended)
}

// SlotHolders implements engine.Pools.
func (s *Store) SlotHolders(ctx context.Context, pool string) ([]timer.SlotHolder, error) {
	it, err := s.readPool(ctx, pool)
	return it.Holders, err
}

// SlotPool reads a pool's holders and waiters as stored (expired ones included).
func (s *Store) SlotPool(ctx context.Context, pool string) (timer.Pool, error) {
	it, err := s.readPool(ctx, pool)
	return it.Pool, err
}

var errPoolContended = errors.New("the pool changed under every try; the message is redelivered")

// setResources writes a timer's resources (uses:) with its settings, or removes them.
func setResources(upd expression.UpdateBuilder, uses []timer.ResourceUse) expression.UpdateBuilder {
	if len(uses) == 0 {
		return upd.Remove(expression.Name("resources"))
	}
	return upd.Set(expression.Name("resources"), expression.Value(uses))
}

// SlotPools reads the pools named (BatchGetItem, 100 a request, eventually consistent: for
// display), by name; a pool never written is left out.
func (s *Store) SlotPools(ctx context.Context, pools []string) (map[string]timer.Pool, error) {
	out := map[string]timer.Pool{}
	if len(pools) == 0 {
		return out, nil
	}
	keys := make([]map[string]types.AttributeValue, 0, len(pools))
	for _, p := range slices.Compact(slices.Sorted(slices.Values(pools))) {
		keys = append(keys, poolKey(p))
	}
	items, err := s.batchGet(ctx, s.timers, keys, false)
	if err != nil {
		return nil, err
	}
	for _, item := range items {
		var it struct {
			PK string `dynamodbav:"pk"`
			timer.Pool
		}
		if err := attributevalue.UnmarshalMap(item, &it); err != nil {
			return nil, fmt.Errorf("decode pool %s: %w", it.PK, err)
		}
		out[strings.TrimPrefix(it.PK, poolPKPrefix)] = it.Pool
	}
	return out, nil
}

// SlotWaitFromImage reads a stream record's new image of a pool item whose write started
// a wait (its newWaiter attribute): the waiting timer and its wait (the pool, its first
// wait, the holders live then). ok is false for any other image.
func SlotWaitFromImage(img map[string]types.AttributeValue) (key timer.Key, w timer.PoolWait, ok bool, err error) {
	if kind, _ := img["kind"].(*types.AttributeValueMemberS); kind == nil || kind.Value != kindPool {
		return timer.Key{}, timer.PoolWait{}, false, nil
	}
	if _, has := img[poolNewWaiter]; !has {
		return timer.Key{}, timer.PoolWait{}, false, nil
	}
	var it struct {
		PK        string `dynamodbav:"pk"`
		NewWaiter string `dynamodbav:"newWaiter"`
		timer.Pool
	}
	if err := attributevalue.UnmarshalMap(img, &it); err != nil {
		return timer.Key{}, timer.PoolWait{}, false, fmt.Errorf("decode pool image: %w", err)
	}
	if key, err = timer.ParseKey(it.NewWaiter); err != nil {
		return timer.Key{}, timer.PoolWait{}, false, fmt.Errorf("pool image %s: waiter: %w", it.PK, err)
	}
	w = timer.PoolWait{Pool: strings.TrimPrefix(it.PK, poolPKPrefix)}
	for _, x := range it.Waiters {
		if x.Timer == it.NewWaiter {
			w.Since = x.Since
		}
	}
	if w.Since.IsZero() {
		return timer.Key{}, timer.PoolWait{}, false, fmt.Errorf("pool image %s: waiter %s has no waiter record", it.PK, it.NewWaiter)
	}
	w.Holders = timer.LiveHolders(it.Holders, w.Since)
	return key, w, true, nil
}

// What each app's last publish declared about shared resources (timer.AppResources) is an
// item of the timers table per app (pk "RESOURCES", sk the app's name), written by its
// publish (one UpdateItem) and read by one Query of the partition: the default app's
// publish checks the others' uses, another app's resolves the default app's, and
// `sundial resources list` lists every pool. Like the pools, no index sees it.
const appResourcesPK = "RESOURCES"

type appResourcesItem struct {
	App        string         `dynamodbav:"app"`
	Resources  map[string]int `dynamodbav:"resources"`
	SharedUses []string       `dynamodbav:"sharedUses,omitempty"`
}

// AppResources implements admin.ResourceStore.
func (s *Store) AppResources(ctx context.Context) ([]timer.AppResources, error) {
	items, err := queryPartition[appResourcesItem](ctx, s, appResourcesPK, "the apps' resources")
	if err != nil {
		return nil, err
	}
	out := make([]timer.AppResources, 0, len(items))
	for _, it := range items {
		out = append(out, timer.AppResources{App: appOf(it.App), Resources: it.Resources, SharedUses: it.SharedUses})
	}
	slices.SortFunc(out, func(a, b timer.AppResources) int { return strings.Compare(a.App, b.App) })
	return out, nil
}

// PutAppResources implements admin.ResourceStore.
func (s *Store) PutAppResources(ctx context.Context, r timer.AppResources) error {
	n := expression.Name
	app := appAttr(r.App)
	res := r.Resources
	if res == nil {
		res = map[string]int{}
	}
	upd := expression.Set(n("kind"), expression.Value("app-resources")).Set(n("app"), expression.Value(app)).
		Set(n("resources"), expression.Value(res))
	if len(r.SharedUses) > 0 {
		upd = upd.Set(n("sharedUses"), expression.Value(r.SharedUses))
	} else {
		upd = upd.Remove(n("sharedUses"))
	}
	key := map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: appResourcesPK},
		"sk": &types.AttributeValueMemberS{Value: app},
	}
	if _, err := s.update(ctx, s.timers, key, upd, nil, types.ReturnValueNone); err != nil {
		return fmt.Errorf("save app %s's resources: %w", app, err)
	}
	for _, name := range slices.Sorted(maps.Keys(r.Resources)) {
		if err := s.setPoolSlots(ctx, timer.PoolName(r.App, name), r.Resources[name]); err != nil {
			return err
		}
	}
	return nil
}

// setPoolSlots writes a pool's declared slot count into its item, bumping its version so
// that a taker that read the old count writes nothing and reads again; a count already
// written writes nothing.
func (s *Store) setPoolSlots(ctx context.Context, pool string, slots int) error {
	n := expression.Name
	upd := expression.Set(n("kind"), expression.Value(kindPool)).Set(n("slots"), expression.Value(slots)).
		Add(n("ver"), expression.Value(1))
	cond := n("slots").AttributeNotExists().Or(n("slots").NotEqual(expression.Value(slots)))
	_, err := s.update(ctx, s.timers, poolKey(pool), upd, &cond, types.ReturnValueNone)
	if err != nil && !isConditionFailed(err) {
		return fmt.Errorf("write pool %s's slots: %w", pool, err)
	}
	return nil
}
