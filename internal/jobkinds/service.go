package jobkinds

import (
	"context"

	"github.com/sundialhq/sundial/internal/audit"
	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/jobs"
	"github.com/sundialhq/sundial/internal/message"
	"github.com/sundialhq/sundial/internal/role"
	"github.com/sundialhq/sundial/internal/timer"
)

// ActivatorStore is what StoreActivator writes and reads (dynamo.Store).
type ActivatorStore interface {
	engine.WatermarkReader
	SetActive(ctx context.Context, key timer.Key, active bool, by string) (timer.Instance, error)
}

// StoreActivator activates an instance as an operator does (admin.Service.SetActive: the
// store's SetActive, which ends a pause, then the firing the fetch already passed), on the
// store and the queues alone: the recovery role works bulk jobs without linking
// internal/admin (functions/deps_test.go).
type StoreActivator struct {
	Store ActivatorStore
	Queue engine.Queue
	Clock timer.Clock
}

// SetActive implements Activator.
func (a StoreActivator) SetActive(ctx context.Context, key timer.Key, active bool) (timer.Instance, error) {
	in, err := a.Store.SetActive(ctx, key, active, timer.ActiveByOperator)
	if err != nil || !active {
		return in, err
	}
	return in, engine.SendFollowUps(ctx, a.Store, a.Queue, a.Clock, []timer.Instance{in}, message.ReasonSchedule)
}

// NewService is the jobs service of a role (the operator's starts jobs, recovery's sweeps
// them), with every kind Sundial runs; trail receives each job's end record.
func NewService(b *role.Base, trail audit.Writer) *jobs.Service {
	return &jobs.Service{Store: b.Store, Clock: b.Clock, Audit: trail, Node: b.Node, Kinds: map[string]jobs.Kind{
		Bulk: BulkKind{Store: b.Store, Active: StoreActivator{Store: b.Store, Queue: b.Queues, Clock: b.Clock}, Clock: b.Clock, Shards: b.Config.DueShards,
			Horizon: role.Lookahead(b.Config) + b.Config.Tick},
		Backfill: BackfillKind{Store: b.Store, Queue: b.Queues, Clock: b.Clock},
		Calendar: CalendarKind{Store: b.Store, Queue: b.Queues, Clock: b.Clock, Horizon: role.Lookahead(b.Config) + b.Config.Tick, Shards: b.Config.DueShards},
	}}
}
