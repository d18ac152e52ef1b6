package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sundialhq/sundial/internal/schedule"
	"github.com/sundialhq/sundial/internal/timer"
)

// InstanceReader is the one read the dependency gate makes of each upstream (Store has it).
type InstanceReader interface {
	Get(ctx context.Context, key timer.Key) (timer.Instance, error)
}

// Upstreams reads the gate's view of each of in's upstreams (in.Deps.After, in its order):
// one consistent item read per upstream when the firing is decided — never a poll. A tenant's
// instance waits for the same tenant's instance of a multi-tenant upstream and, when the
// upstream has none, for its shared instance (a second read). An upstream with no instance
// is Missing: the gate waits for it as for one that has not succeeded.
func Upstreams(ctx context.Context, r InstanceReader, in timer.Instance) ([]timer.UpstreamState, error) {
	out := make([]timer.UpstreamState, 0, len(in.Deps.After))
	for _, u := range in.Deps.After {
		candidates := []timer.Key{u}
		if in.Tenant != "" {
			candidates = []timer.Key{{App: u.App, Timer: u.Timer, Tenant: in.Tenant}, u}
		}
		st := timer.UpstreamState{Key: u, Missing: true}
		for _, k := range candidates {
			up, err := r.Get(ctx, k)
			if errors.Is(err, timer.ErrNotFound) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("read upstream %s of %s: %w", k, in.Key, err)
			}
			st = timer.Upstream(k, up)
			break
		}
		out = append(out, st)
	}
	return out, nil
}

// GateOf decides the dependency gate of in's firing scheduled at instant, at now, with next
// the schedule's instant after it (zero: none): open at once for a timer without upstreams.
func GateOf(ctx context.Context, r InstanceReader, in timer.Instance, instant, now, next time.Time) (timer.Gate, error) {
	if len(in.Deps.After) == 0 {
		return timer.Gate{Verdict: timer.GateOpen}, nil
	}
	loc, err := schedule.LoadLocation(in.Timezone)
	if err != nil {
		return timer.Gate{}, fmt.Errorf("gate of %s: %w", in.Key, err)
	}
	ups, err := Upstreams(ctx, r, in)
	if err != nil {
		return timer.Gate{}, err
	}
	return in.Deps.Decide(instant, now, loc, next, ups), nil
}
