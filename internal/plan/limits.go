package plan

import (
	"fmt"
	"math"

	"github.com/sundialhq/sundial/internal/cost"
)

// AWS limits a stack's busiest second meets first (docs/scale.md cites AWS's documentation
// for each).
const (
	// PartitionWriteUnits is what one DynamoDB partition takes a second: one shard of the
	// due index (its key is the shard), or one app's log pages of a day.
	PartitionWriteUnits = 1000
	// OnDemandInitialWriteUnits is what a new on-demand table serves a second at first; it
	// then serves up to double its previous peak at once.
	OnDemandInitialWriteUnits = 4000
	// TableWriteQuota is the default per-table throughput quota (raised on request).
	TableWriteQuota = 40_000
	// ESMMaxConcurrency is the largest MaximumConcurrency of an SQS event source mapping.
	ESMMaxConcurrency = 1000
	// AccountConcurrency is the default concurrent executions quota of a Region.
	AccountConcurrency = 1000
	// SQSScalePerMinute is how many concurrent invocations Lambda adds to an SQS event
	// source a minute, from the 5 it starts with.
	SQSScalePerMinute, SQSStartConcurrency = 300, 5
	// MaxDueShards is template.yaml's DueShards MaxValue.
	MaxDueShards = 64
	// UnreservedMinimum is the account concurrency Lambda keeps unreserved, for the functions
	// without a reservation: reservations can take the quota less this, no more. The plan
	// also wants the processor's queues to leave this much of the unreserved pool to the
	// stack's other functions (API, publish), Lambda actions and the account's other functions.
	UnreservedMinimum = 100
)

// limitWarnings adds the warnings of the AWS limits the busiest second crosses for the
// stack's parameters, each saying which parameter to raise and to what (or that none does).
func (p *Plan) limitWarnings(in Input, m Month, peak float64) {
	if peak <= 0 || m.Executions <= 0 {
		return
	}
	warn := func(format string, a ...any) { p.Warnings = append(p.Warnings, fmt.Sprintf(format, a...)) }
	// The due index: a finish whose next run lies beyond the fetch's look-ahead moves the
	// instance's key (cost.DueIndexMoveWrites units); its partition key is the shard.
	dueUnits := m.IndexMoves * cost.DueIndexMoveWrites / m.Executions * peak
	if shards := max(in.Stack.DueShards, 1); dueUnits/float64(shards) > PartitionWriteUnits {
		want := int(math.Ceil(dueUnits/PartitionWriteUnits - 1e-9))
		if want <= MaxDueShards {
			warn("the busiest second writes %.0f units to the due index, %.0f per shard with DueShards %d: above a partition's %d a second, so the index throttles the finishes; raise DueShards to %d",
				dueUnits, dueUnits/float64(shards), shards, PartitionWriteUnits, want)
		} else {
			warn("the busiest second writes %.0f units to the due index: above what DueShards' maximum (%d shards of %d units) takes; raise DueShards to %d and spread the timers' instants (or shorten their periods: a next run within the fetch's look-ahead moves no key)",
				dueUnits, MaxDueShards, PartitionWriteUnits, MaxDueShards)
		}
	}
	// The all-timers log: each log writer batch writes one page into its app's partition of
	// the day. A manifest is one app's; stored instances may be several apps' (then this is
	// an upper bound for the busiest app).
	pageUnits := peak * cost.PageWriteUnitsPerFiring(cost.LogWriterBatch)
	if pageUnits > PartitionWriteUnits {
		warn("the busiest second's log pages write %.0f units to one partition (an app's day): above a partition's %d a second; no parameter spreads it: split the timers over apps, at most %.0f firings a second each",
			pageUnits, PartitionWriteUnits, PartitionWriteUnits/cost.PageWriteUnitsPerFiring(cost.LogWriterBatch))
	}
	// The tables' throughput: a new on-demand table, and the default table quota.
	for _, t := range []struct {
		table string
		need  float64
	}{{"timers", m.PeakTimersWriteUnitsPerSecond}, {"log", m.PeakLogWriteUnitsPerSecond}} {
		switch {
		case t.need > TableWriteQuota:
			warn("the busiest second needs %.0f write units on the %s table: above DynamoDB's default table quota (%d); request a quota increase to %.0f",
				t.need, t.table, TableWriteQuota, math.Ceil(t.need))
		case t.need > OnDemandInitialWriteUnits:
			warn("the busiest second needs %.0f write units on the %s table: a new on-demand table serves %d at first and then up to double its previous peak, so a new stack's first peaks are throttled (retried, late); ramp the load up over the first hours, or start with Capacity=Provisioned at that peak",
				t.need, t.table, OnDemandInitialWriteUnits)
		}
	}
	// The processor: each queue's event source (the account: accountWarnings).
	for _, pp := range p.Priorities {
		need := pp.Concurrency
		switch {
		case pp.Instances == 0:
			continue
		case need > ESMMaxConcurrency:
			warn("priority %d's busiest second (%d firings) needs %d processor invocations at once: above an SQS event source's maximum concurrency (%d); spread these timers over priorities (each queue has its event source)",
				pp.Priority, pp.PeakFiringsPerSecond, need, ESMMaxConcurrency)
		case need > pp.TemplateConcurrency:
			warn("priority %d's busiest second (%d firings) needs %d processor invocations at once, above P%dConcurrency (%d): the firings wait for a free one; raise P%dConcurrency to %d",
				pp.Priority, pp.PeakFiringsPerSecond, need, pp.Priority, pp.TemplateConcurrency, pp.Priority, need)
		}
		if need > SQSStartConcurrency+SQSScalePerMinute {
			warn("priority %d needs %d concurrent invocations: Lambda adds at most %d a minute to an SQS event source (from %d), so a burst after a quiet spell reaches them after %.0f minutes and its first firings are late",
				pp.Priority, need, SQSScalePerMinute, SQSStartConcurrency, math.Ceil(float64(need-SQSStartConcurrency)/SQSScalePerMinute))
		}
	}
}

// accountWarnings checks the stack's concurrency against the account's quota, whatever the
// load: the reservations (fetch, recovery, log writer) must leave Lambda's unreserved minimum,
// and the processor's queues at their maximum concurrency draw on what is unreserved. At
// their maximums they could take all of it, throttling every function without a reservation
// (the API, the publish, Lambda actions, the account's other functions) exactly under load.
// A queue's maximum is its PnConcurrency, or what its busiest second needs where that is more
// (the plan says to raise it, or to spread the timers over the queues: the need stays).
func (p *Plan) accountWarnings(in Input) {
	warn := func(format string, a ...any) { p.Warnings = append(p.Warnings, fmt.Sprintf(format, a...)) }
	quota, reserved := in.AccountConcurrency, in.Stack.ReservedConcurrency
	if reserved > 0 && reserved > quota-UnreservedMinimum {
		warn("the reserved concurrency (%d: FetchReservedConcurrency + RecoveryReservedConcurrency + LogWriterReservedConcurrency) leaves less than the %d of the account's %d concurrent executions that Lambda keeps unreserved: the deploy fails; set the reservations to 0 or request a quota of at least %d",
			reserved, UnreservedMinimum, quota, reserved+UnreservedMinimum)
	}
	queues := 0
	for i, c := range in.Stack.Concurrency {
		for _, pp := range p.Priorities {
			if pp.Priority == i+1 && pp.Instances > 0 {
				c = max(c, pp.Concurrency)
			}
		}
		queues += c
	}
	if total := queues + reserved; total+UnreservedMinimum > quota {
		control := "the fetch, recovery and the log writer keep their reservations"
		if reserved == 0 {
			control = "and the fetch, recovery and the log writer, which have no reservation"
		}
		warn("the processor's queues at their maximum concurrency (%d over P1..P4Concurrency, as given or as the busiest second needs) and the reserved concurrency (%d) come to %d of the account's %d concurrent executions, leaving less than %d for everything else: under load the processor throttles the API, the publish, Lambda actions and the account's other functions (%s); lower P1..P4Concurrency or request a quota of at least %d (sundial plan --account-concurrency)",
			queues, reserved, total, quota, UnreservedMinimum, control, total+UnreservedMinimum)
	}
}
