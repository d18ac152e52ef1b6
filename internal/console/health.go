package console

import (
	"cmp"
	"slices"
	"time"

	"github.com/sundialhq/sundial/internal/cost"
	"github.com/sundialhq/sundial/internal/queue"
	"github.com/sundialhq/sundial/internal/timer"
)

// Fetcher status values.
const (
	FetcherHealthy  = "healthy"
	FetcherLate     = "late"
	FetcherNeverRan = "never-ran"
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

// buildHealth computes Environment Health; it does no I/O.
func buildHealth(in healthInputs) Health {
	h := Health{Now: in.now, Queues: in.queues, Running: []Running{}, Order: []HealthRow{}}
	h.Processors.Nodes = []NodeStatus{}
	if h.Queues == nil {
		h.Queues = []queue.Depth{}
	}
	if in.queuesErr != nil {
		h.QueuesError = in.queuesErr.Error()
	}
	h.Fetcher = fetcherHealth(in.now, in.tick, in.fetch)
	h.LastHour = lastHour(in.now, in.recent, recentForHealth)
	if in.stack.FetchTick > 0 {
		h.Estimate = estimate(in.now, in.stack, in.instances, in.recent, recentForHealth)
	}
	h.Processors.Capacity = in.capacity

	last := map[timer.Key]timer.Execution{}
	for _, e := range in.recent {
		if _, seen := last[e.Key]; !seen {
			last[e.Key] = e
		}
	}
	nodes := map[string]int{}
	var scheduled []timer.Instance
	for _, t := range in.instances {
		h.Counts.Timers++
		if t.Active {
			h.Counts.Active++
		} else {
			h.Counts.Inactive++
		}
		if t.LastOutcome != "" && t.LastOutcome.Failed() {
			h.Counts.Failing++
		}
		if t.Running() {
			h.Counts.Running++
			h.Running = append(h.Running, Running{
				Key: t.Key.String(), Since: t.IsRunningSince, By: t.IsRunningBy,
				ScheduledAt: t.RunScheduledAt, Attempt: max(t.RunAttempt, 1),
				LeaseExpiresAt: t.LeaseExpiresAt, Overdue: !t.LeaseExpiresAt.IsZero() && in.now.After(t.LeaseExpiresAt),
			})
			if p := t.Priority; p >= 1 && p <= 4 {
				h.Processors.Busy[p-1]++
			}
			nodes[t.IsRunningBy]++
			continue
		}
		if t.Active && !t.NextRun.IsZero() {
			scheduled = append(scheduled, t)
		}
	}
	timer.Sort(scheduled, in.now)
	for i, t := range scheduled {
		row := HealthRow{
			Position: i + 1, Key: t.Key.String(), Priority: t.Priority, NextRun: ptr(t.NextRun),
			Due: !t.NextRun.After(in.now), LastDurationMs: t.LastDuration.Milliseconds(),
		}
		if row.Due {
			row.WaitingMs = in.now.Sub(t.NextRun).Milliseconds()
		} else {
			row.InMs = t.NextRun.Sub(in.now).Milliseconds()
		}
		if e, ok := last[t.Key]; ok {
			le := entryOf(e)
			row.Last = &le
		}
		h.Order = append(h.Order, row)
	}
	slices.SortFunc(h.Running, func(a, b Running) int { return a.Since.Compare(b.Since) })
	for by, n := range nodes {
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
	}
	return f
}
