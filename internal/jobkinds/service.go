package jobkinds

import (
	"github.com/sundialhq/sundial/internal/audit"
	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/jobs"
	"github.com/sundialhq/sundial/internal/role"
	"github.com/sundialhq/sundial/internal/role/queued"
)

// NewService is the jobs service of a role (the operator's starts jobs, recovery's sweeps
// them), with every kind Sundial runs; trail receives each job's end record.
func NewService(b *queued.Base, trail audit.Writer) *jobs.Service {
	return &jobs.Service{Store: b.Store, Clock: b.Clock, Audit: trail, Node: b.Node, Kinds: map[string]jobs.Kind{
		Bulk: BulkKind{Store: b.Store, Active: engine.Activator{Store: b.Store, Queue: b.Queues, Clock: b.Clock}, Clock: b.Clock, Shards: b.Config.DueShards,
			Horizon: role.Lookahead(b.Config) + b.Config.Tick},
		Backfill: BackfillKind{Store: b.Store, Queue: b.Queues, Clock: b.Clock},
		Calendar: CalendarKind{Store: b.Store, Queue: b.Queues, Clock: b.Clock, Horizon: role.Lookahead(b.Config) + b.Config.Tick, Shards: b.Config.DueShards},
	}}
}
