package console

import (
	"fmt"
	"time"

	"github.com/sundialhq/sundial/internal/cost"
	"github.com/sundialhq/sundial/internal/plan"
	"github.com/sundialhq/sundial/internal/schedule"
	"github.com/sundialhq/sundial/internal/timer"
)

// Estimate is the stack's cost per month as `sundial plan` computes it from the stored
// timers (their effective schedules, operators' edits included) over the next 24 hours,
// next to the executions the log measured in the last 24 hours.
type Estimate struct {
	// Instances are the active timer instances counted; FiringsPerDay their scheduled
	// firings in the next 24 hours.
	Instances     int     `json:"instances"`
	FiringsPerDay float64 `json:"firingsPerDay"`
	// OnDemandUSD and ProvisionedUSD are a month's (cost.MonthDays) dollars with DynamoDB
	// on-demand and provisioned (auto scaling at 70%), idle cost included; IdleUSD is the
	// on-demand cost of the stack with nothing due.
	OnDemandUSD    float64 `json:"onDemandUsdPerMonth"`
	ProvisionedUSD float64 `json:"provisionedUsdPerMonth"`
	IdleUSD        float64 `json:"idleUsdPerMonth"`
	Region         string  `json:"region"`
	PricesAsOf     string  `json:"pricesAsOf"`
	// Error says why there is no estimate (a stored schedule that does not parse).
	Error string `json:"error,omitempty"`
	// Measured24h are the executions the log holds that started in the last 24 hours.
	// Truncated: the entries Health reads (the latest recentForHealth) do not reach back 24
	// hours, so Measured24h is a lower bound and MeasuredPerDay extrapolates the rate of
	// the entries read to a day (otherwise it is Measured24h).
	Measured24h    int     `json:"measured24h"`
	Truncated      bool    `json:"measured24hTruncated"`
	MeasuredPerDay float64 `json:"measuredPerDay"`
}

// estimator gathers the stored instances a page at a time for the estimate: the active ones
// merged into one plan.Instance per schedule (its settings, and its key when it spreads),
// priority, retries and item size in DynamoDB's units, standing for as many as it counts
// (plan.Instance.Count), so that it holds what distinct schedules there are, not the instances.
type estimator struct {
	merged map[string]int // a merge key → its index in instances
	list   []plan.Instance
}

func newEstimator() *estimator { return &estimator{merged: map[string]int{}} }

// add counts an instance; an inactive one is not priced.
func (e *estimator) add(in timer.Instance) {
	if !in.Active {
		return
	}
	pi := plan.FromStored([]timer.Instance{in})[0]
	k := fmt.Sprintf("%s|%d|%d|%v|%v", scheduleKeyOf(pi, in), pi.Priority, pi.MaxRetries, cost.WriteKB(pi.ItemBytes), cost.ReadKB(pi.ItemBytes))
	if i, ok := e.merged[k]; ok {
		e.list[i].Count = e.list[i].Count + 1
		return
	}
	pi.Count = 1
	e.merged[k] = len(e.list)
	e.list = append(e.list, pi)
}

// scheduleKeyOf is what makes instances fire together (plan's grouping): the settings', and
// the instance's key for a schedule that spreads its start (H is resolved per instance).
func scheduleKeyOf(pi plan.Instance, in timer.Instance) string {
	k := in.Settings.ScheduleKey()
	if schedule.MaySpread(pi.Schedule) {
		k += " " + in.Key.String()
	}
	return k
}

// estimate prices the instances added with the plan's model; recent is the log's latest
// entries (newest first), limit how many the read could return.
func (e *estimator) estimate(now time.Time, stack cost.Stack, recent []timer.Execution, limit int) *Estimate {
	return estimatePlanned(now, stack, e.list, recent, limit)
}

// estimatePlanned prices the instances with the plan's model; recent is the log's latest
// entries (newest first), limit how many the read could return.
func estimatePlanned(now time.Time, stack cost.Stack, instances []plan.Instance, recent []timer.Execution, limit int) *Estimate {
	e := &Estimate{}
	since := now.Add(-24 * time.Hour)
	for _, x := range recent {
		if !x.StartedAt.Before(since) {
			e.Measured24h++
		}
	}
	e.MeasuredPerDay = float64(e.Measured24h)
	if n := len(recent); n >= limit && e.Measured24h == n && n > 0 {
		e.Truncated = true
		if span := now.Sub(recent[n-1].StartedAt); span > 0 {
			e.MeasuredPerDay = float64(n) / span.Hours() * 24
		}
	}
	p, err := plan.Compute(plan.Input{Instances: instances, Stack: stack, From: now, Days: 1, Summary: true})
	if err != nil {
		e.Error = err.Error()
		return e
	}
	for _, pp := range p.Priorities {
		e.Instances += pp.Instances
		e.FiringsPerDay += pp.FiringsPerDay
	}
	e.OnDemandUSD, e.ProvisionedUSD, e.IdleUSD = p.Month.OnDemand.USD, p.Month.Provisioned.USD, p.Month.OnDemand.IdleUSD
	e.Region, e.PricesAsOf = p.Assumptions.Region, p.Assumptions.PricesAsOf
	return e
}
