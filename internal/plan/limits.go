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
	// otherConcurrency: fetch, recovery, the log writer (a stream shard each, a few), the
	// API: what the stack runs besides the processor.
	otherConcurrency = 10
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
	// The processor: each queue's event source, and the account.
	total := otherConcurrency
	for _, pp := range p.Priorities {
		need := pp.Concurrency
		total += max(need, pp.TemplateConcurrency)
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
	if total > AccountConcurrency {
		warn("the processor's concurrency (%d with the stack's other functions) is above the account's default concurrent executions (%d a Region, shared by every function); request a quota increase to %d",
			total, AccountConcurrency, total)
	}
}
