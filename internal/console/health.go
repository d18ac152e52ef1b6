package console

import (
	"cmp"
	"errors"
	"maps"
	"net"
	"slices"
	"strconv"
	"time"

	"github.com/aws/smithy-go"

	"github.com/sundialhq/sundial/internal/cost"
	"github.com/sundialhq/sundial/internal/queue"
	"github.com/sundialhq/sundial/internal/timer"
)

// Fetcher status values.
const (
	FetcherHealthy  = "healthy"
	FetcherLate     = "late"
	FetcherNeverRan = "never-ran"
	// FetcherStalled: the ticks run but enqueue nothing (each fails and gives its window
	// back), so the watermark falls behind: e.g. the queues' engine is unreachable.
	FetcherStalled = "stalled"
)

// fetcherGrace is how late a tick may be before the fetcher counts as late: EventBridge
// schedules are not exact, and the fetch looks ahead two ticks anyway.
const fetcherGrace = 30 * time.Second

// healthInputs are the reads Environment Health is computed from.
type healthInputs struct {
	now       time.Time
	tick      time.Duration
	capacity  [4]int
	instances []timer.Instance
	fetch     timer.FetchState
	queues    []queue.Depth
	queuesErr error
	recent    []timer.Execution // newest first
	// stack are the template parameters the cost estimate uses (zero FetchTick: no estimate).
	stack cost.Stack
}

// orderForHealth orders the scheduled instances as they will execute: those due now first,
// in timer.Sort's order (priority, shorter previous duration, longer waiting), then the
// others by next run, soonest first (timer.Sort's order among those due at the same instant).
// timer.Sort alone would put a priority-1 timer due in 3 h ahead of one due in 10 s.
func orderForHealth(ins []timer.Instance, now time.Time) {
	slices.SortStableFunc(ins, func(a, b timer.Instance) int {
		aDue, bDue := !a.NextRun.After(now), !b.NextRun.After(now)
		switch {
		case aDue != bDue && aDue:
			return -1
		case aDue != bDue:
			return 1
		case !aDue && !a.NextRun.Equal(b.NextRun):
			return a.NextRun.Compare(b.NextRun)
		case timer.Less(a, b, now):
			return -1
		case timer.Less(b, a, now):
			return 1
		}
		return 0
	})
}

// buildHealth computes Environment Health from in.instances all at once; it does no I/O.
func buildHealth(in healthInputs) Health {
	b := newHealthBuilder(in)
	b.add(in.instances)
	return b.finish()
}

// healthBuilder computes Environment Health from the instances a page at a time, so that what
// it holds is bounded by a page and Health's lists, not by the table: counts per app and state,
// the first HealthShown scheduled and running entries (re-sorted and cut as pages come), the
// processors' nodes, and the cost estimate's instances merged by schedule (estimator).
type healthBuilder struct {
	in        healthInputs
	last      map[timer.Key]timer.Execution
	counts    Counts
	byApp     map[string]*Counts
	nodes     map[string]int
	busy      [4]int
	scheduled []timer.Instance // at most HealthShown after each page (keep)
	running   []Running
	orderN    int
	runningN  int
	est       *estimator // nil: no estimate
}

func newHealthBuilder(in healthInputs) *healthBuilder {
	b := &healthBuilder{in: in, last: map[timer.Key]timer.Execution{}, byApp: map[string]*Counts{}, nodes: map[string]int{}}
	for _, e := range in.recent {
		if _, seen := b.last[e.Key]; !seen {
			b.last[e.Key] = e
		}
	}
	if in.stack.FetchTick > 0 {
		b.est = newEstimator()
	}
	return b
}

// add counts a page of instances; it keeps none of them beyond Health's lists.
func (b *healthBuilder) add(page []timer.Instance) {
	for _, t := range page {
		app := b.byApp[t.AppName()]
		if app == nil {
			app = &Counts{}
			b.byApp[t.AppName()] = app
		}
		for _, c := range []*Counts{&b.counts, app} {
			c.Timers++
			if t.Active {
				c.Active++
			} else {
				c.Inactive++
			}
			if t.LastOutcome != "" && t.LastOutcome.Failed() {
				c.Failing++
			}
			if t.Running() {
				c.Running++
			}
		}
		if b.est != nil {
			b.est.add(t)
		}
		if t.Running() {
			b.runningN++
			b.running = append(b.running, Running{
				Key: t.Key.String(), Since: t.IsRunningSince, By: t.IsRunningBy,
				ScheduledAt: t.RunScheduledAt, Attempt: max(t.RunAttempt, 1),
				LeaseExpiresAt: t.LeaseExpiresAt, Overdue: !t.LeaseExpiresAt.IsZero() && b.in.now.After(t.LeaseExpiresAt),
			})
			if p := t.Priority; p >= 1 && p <= 4 {
				b.busy[p-1]++
			}
			b.nodes[t.IsRunningBy]++
			continue
		}
		if t.Active && !t.NextRun.IsZero() {
			b.orderN++
			b.scheduled = append(b.scheduled, t)
		}
	}
	b.keep()
}

// keep cuts the lists to their first HealthShown. The sorts are stable and what was kept came
// before the page's, so the first HealthShown are those a sort of every instance would give.
func (b *healthBuilder) keep() {
	orderForHealth(b.scheduled, b.in.now)
	b.scheduled = slices.Clip(b.scheduled[:min(len(b.scheduled), HealthShown)])
	slices.SortStableFunc(b.running, func(a, c Running) int { return a.Since.Compare(c.Since) })
	b.running = slices.Clip(b.running[:min(len(b.running), HealthShown)])
}

// finish is the Health of the instances added.
func (b *healthBuilder) finish() Health {
	in := b.in
	h := Health{Now: in.now, Queues: in.queues, Running: []Running{}, Order: []HealthRow{}, Problems: []string{}}
	h.Processors.Nodes = []NodeStatus{}
	if h.Queues == nil || in.queuesErr != nil {
		// Depths that could not be read are unknown, not zero (or a dead engine would
		// show as "0 ready").
		h.Queues = []queue.Depth{}
	}
	h.Fetcher = fetcherHealth(in.now, in.tick, in.fetch)
	if !h.Fetcher.Healthy {
		h.Problems = append(h.Problems, "fetcher "+h.Fetcher.Status)
	}
	if in.queuesErr != nil {
		h.QueuesError = "queues unreadable: " + in.queuesErr.Error()
		if unreachable(in.queuesErr) {
			h.QueuesError = "queues unreachable: " + in.queuesErr.Error()
		}
		h.Problems = append(h.Problems, h.QueuesError)
	}
	h.Healthy = len(h.Problems) == 0
	h.LastHour = lastHour(in.now, in.recent, recentForHealth)
	if b.est != nil {
		h.Estimate = b.est.estimate(in.now, in.stack, in.recent, recentForHealth)
	}
	h.Processors.Capacity = in.capacity
	h.Processors.Busy = b.busy
	h.Counts = b.counts
	for _, a := range slices.Sorted(maps.Keys(b.byApp)) {
		h.Apps = append(h.Apps, AppCounts{App: a, Counts: *b.byApp[a]})
	}
	h.OrderTotal = b.orderN
	for i, t := range b.scheduled {
		row := HealthRow{
			Position: i + 1, Key: t.Key.String(), Priority: t.Priority, NextRun: ptr(t.NextRun),
			Due: !t.NextRun.After(in.now), LastDurationMs: t.LastDuration.Milliseconds(),
		}
		if row.Due {
			row.WaitingMs = in.now.Sub(t.NextRun).Milliseconds()
		} else {
			row.InMs = t.NextRun.Sub(in.now).Milliseconds()
		}
		if e, ok := b.last[t.Key]; ok {
			le := entryOf(e)
			row.Last = &le
		}
		h.Order = append(h.Order, row)
	}
	h.Running = append(h.Running, b.running...)
	h.RunningTotal = b.runningN
	for by, n := range b.nodes {
		h.Processors.Nodes = append(h.Processors.Nodes, NodeStatus{By: by, Running: n})
	}
	slices.SortFunc(h.Processors.Nodes, func(a, b NodeStatus) int { return cmp.Compare(a.By, b.By) })
	return h
}

func fetcherHealth(now time.Time, tick time.Duration, fs timer.FetchState) FetcherHealth {
	f := FetcherHealth{Tick: tick.String(), LastTick: ptr(fs.LastTick), Watermark: ptr(fs.Watermark)}
	if fs.LastTick.IsZero() {
		f.Status = FetcherNeverRan
		return f
	}
	age := now.Sub(fs.LastTick)
	f.AgeMs = age.Milliseconds()
	f.Healthy = age <= 2*tick+fetcherGrace
	f.Status = FetcherLate
	if f.Healthy {
		f.Status = FetcherHealthy
		// A tick that could not enqueue its window gives it back: the watermark (a tick's
		// look-ahead past it when ticks succeed) stays behind while the ticks go on.
		if fs.Watermark.Before(now.Add(-2*tick - fetcherGrace)) {
			f.Healthy, f.Status = false, FetcherStalled
		}
	}
	return f
}

// unreachable tells an engine that did not answer (the connection failed, or the local
// endpoint answered that its engine did not) from a refusal.
func unreachable(err error) bool {
	var netErr net.Error
	var apiErr smithy.APIError
	return errors.As(err, &netErr) || (errors.As(err, &apiErr) && apiErr.ErrorCode() == "ServiceUnavailable")
}

// MergeHealth adds the next answer of a paged Environment Health (its Next followed) to h,
// the first answer's or the answers' so far: the counts, per app, totals and processors add
// up; Order and Running are re-sorted and cut to HealthShown as healthBuilder does, so that
// they are those of every instance counted (Order's ties by previous duration are to the
// millisecond the rows give). The fetcher, queues, last hour, figures and alerts are the
// first answer's; next's Next is the cursor left.
func MergeHealth(h *Health, next Health) {
	add := func(c *Counts, o Counts) {
		c.Timers += o.Timers
		c.Active += o.Active
		c.Inactive += o.Inactive
		c.Failing += o.Failing
		c.Running += o.Running
	}
	add(&h.Counts, next.Counts)
	byApp := map[string]int{}
	for i, a := range h.Apps {
		byApp[a.App] = i
	}
	for _, a := range next.Apps {
		if i, ok := byApp[a.App]; ok {
			add(&h.Apps[i].Counts, a.Counts)
			continue
		}
		byApp[a.App] = len(h.Apps)
		h.Apps = append(h.Apps, a)
	}
	slices.SortFunc(h.Apps, func(a, b AppCounts) int { return cmp.Compare(a.App, b.App) })
	h.OrderTotal += next.OrderTotal
	h.RunningTotal += next.RunningTotal
	for p := range h.Processors.Busy {
		h.Processors.Busy[p] += next.Processors.Busy[p]
	}
	nodes := map[string]int{}
	for _, n := range append(h.Processors.Nodes, next.Processors.Nodes...) {
		nodes[n.By] += n.Running
	}
	h.Processors.Nodes = []NodeStatus{}
	for _, by := range slices.Sorted(maps.Keys(nodes)) {
		h.Processors.Nodes = append(h.Processors.Nodes, NodeStatus{By: by, Running: nodes[by]})
	}
	// Order: the rows as the instances they stand for, ordered as orderForHealth does.
	rows := append(slices.Clone(h.Order), next.Order...)
	idx := make([]timer.Instance, len(rows))
	for i, r := range rows {
		idx[i] = timer.Instance{LastDuration: time.Duration(r.LastDurationMs) * time.Millisecond, Key: timer.Key{App: strconv.Itoa(i)}}
		idx[i].Priority = r.Priority
		if r.NextRun != nil {
			idx[i].NextRun = *r.NextRun
		}
	}
	orderForHealth(idx, h.Now)
	h.Order = make([]HealthRow, 0, min(len(idx), HealthShown))
	for _, in := range idx[:min(len(idx), HealthShown)] {
		i, _ := strconv.Atoi(in.Key.App)
		r := rows[i]
		r.Position = len(h.Order) + 1
		h.Order = append(h.Order, r)
	}
	h.Running = append(h.Running, next.Running...)
	slices.SortStableFunc(h.Running, func(a, c Running) int { return a.Since.Compare(c.Since) })
	h.Running = slices.Clip(h.Running[:min(len(h.Running), HealthShown)])
	h.Estimate = nil // priced per part it would be wrong: only a whole answer has it
	h.Next = next.Next
}
