package cost

import (
	"math"
	"time"
)

// The numbers of the cost model, in one place: the benchmark's per-firing model (PerFiring),
// the steady-load model `sundial plan` and the console use (Month, Idle) and the provisioned
// pricing (BillProvisioned) all read them from here. Each says where it comes from: the
// storage layout (what a request writes), template.yaml (a default), or a measurement of
// `make bench` (bench/out/results.json). Change them here after measuring.

// Write units of a firing, per KB of the item written (rounded up) unless said otherwise.
// The layout: one timers-table item per timer instance, a KEYS_ONLY "due" index keyed
// (dueShard, dueAt), no running index; the log table keyed by instance, with the log
// writer's pages for the all-timers log and the sparse errorsByDay index; the log entry is
// written from the timers table's stream.
const (
	// ClaimWrites: the claim is one conditional UpdateItem of the timer item that changes
	// no index key, so it writes the table only.
	ClaimWrites = 1
	// FinishWrites: the finish is one plain fenced UpdateItem of the timer item.
	FinishWrites = 1
	// DueIndexMoveWrites: a finish whose next run lies beyond what the fetch has already
	// covered (see MoveProbability) moves the instance's due-index key so that the fetch
	// finds it: a delete and a put of a keys-only entry, 1 unit each whatever the item's
	// size (a keys-only entry is far below 1 KB). Otherwise the finisher sends the next
	// firing itself and the key stays.
	DueIndexMoveWrites = 2
	// LogWrites: the log writer, fed by the timers table's stream (DynamoDB Streams read by
	// Lambda cost nothing), puts one log item per execution, per KB of log item. The
	// all-timers log costs no index write: the writer adds one page per batch listing the
	// batch's executions (PageRefBytes each; see PageWriteUnits).
	LogWrites = 1
	// LogErrorsWrites: a failed execution's log item also enters the sparse errorsByDay
	// index (projection ALL), per KB of log item.
	LogErrorsWrites = 1
	// WatermarkWrites: every fetch tick advances the watermark, one UpdateItem of the small
	// meta item.
	WatermarkWrites = 1
)

// PageRefBytes is an execution's line in a log page: the instance's name (about 20
// characters with its tenant and app, 5 in make bench), a tab, the start time (24), "#",
// the execution id (20) and a newline.
const PageRefBytes = 70

// PageWriteUnits is what the log page of one log writer batch of n executions writes: one
// item of n references, per KB. (A batch whose executions started in two minutes or belong
// to two apps writes a page for each; a unit more at most, not modelled.)
func PageWriteUnits(n float64) float64 {
	if n <= 0 {
		return 0
	}
	return math.Ceil(n*PageRefBytes/1024 - 1e-9)
}

// PageWriteUnitsOf is what the pages of executions written in batches log writer batches
// write (batches outside 1..executions: one batch per execution, the least batching).
func PageWriteUnitsOf(executions, batches float64) float64 {
	if batches <= 0 || batches > executions {
		batches = executions
	}
	if batches <= 0 {
		return 0
	}
	return batches * PageWriteUnits(executions/batches)
}

// PageWriteUnitsPerFiring is the page's share of a firing when the log writer's batches
// hold n executions on average: 1 for a lone execution (as an index entry cost), a few
// hundredths for full batches (LogWriterBatch).
func PageWriteUnitsPerFiring(n float64) float64 {
	n = max(1, min(n, LogWriterBatch))
	return PageWriteUnits(n) / n
}

// FiringWriteUnits is what one successful firing writes with items under 1 KB when the log
// writer's batches hold n executions: a frequent timer's (its next run inside the
// look-ahead: 3 and its page share) or a rare one's (2 more).
func FiringWriteUnits(moved bool, n float64) float64 {
	w := float64(ClaimWrites+FinishWrites+LogWrites) + PageWriteUnitsPerFiring(n)
	if moved {
		w += DueIndexMoveWrites
	}
	return w
}

// Read units.
const (
	// StrongReadUnits and EventualReadUnits: a read of up to 4 KB.
	StrongReadUnits   = 1.0
	EventualReadUnits = 0.5
	// FetchReadUnits: the fetch reads the items it finds in the keys-only due index with
	// BatchGetItem, strongly consistent (what it sends is decided on them), per item (per 4 KB
	// of it), and twice: it looks at the index again SUNDIAL_INDEX_LAG after its first look
	// (engine.Fetcher.Run).
	FetchReadUnits = 2 * StrongReadUnits
	// FetchLooks: the due index queries of a tick, per shard.
	FetchLooks = 2
	// RecoveryReadUnits: recovery reads the items it finds in the due index with BatchGetItem,
	// eventually consistent (its writes are conditional on what it decided from), per item.
	RecoveryReadUnits = EventualReadUnits
	// WatermarkReadUnits: the processor reads the fetch watermark (a strongly consistent
	// GetItem of the small meta item) once per batch at most (the finisher keeps a read for
	// 5 s, so under load far less: an upper bound).
	WatermarkReadUnits = StrongReadUnits
	// QueryReadUnits: a Query of the due index by the fetch or recovery finds nothing or a
	// few keys-only entries: half a unit (eventually consistent, under 4 KB).
	QueryReadUnits = 0.5
	// RecoveryRereadsPerMinute: recovery sweeps every minute; each sweep reads (BatchGetItem)
	// every instance whose due-index key lies in the past. A frequent timer's key stays in
	// the past (its finishes never move it), so each frequent instance is read this many
	// times a minute: RecoveryReadUnits each.
	RecoveryRereadsPerMinute = 1
	// RecoveryQueriesPerShard: a sweep queries the due index once per shard (engine.Store
	// QueryPast) and takes expired leases and firings never claimed from what it read.
	RecoveryQueriesPerShard = 1
	// OutboxQueries: a sweep also reads the events outbox (a Query of the log table's
	// partition of events the log writer could not put, internal/events), empty when
	// EventBridge took every event: QueryReadUnits.
	OutboxQueries = 1
	// AlertWatchQueries: a sweep also reads the noSuccessWithin deadlines (a Query of their
	// partition of the timers table; a timer without the rule has none): QueryReadUnits.
	AlertWatchQueries = 1
	// LogWriterAlertQueries: each log writer invocation reads the open alerts (a Query of
	// their partition of the timers table, usually empty): QueryReadUnits.
	LogWriterAlertQueries = 1
	// EventsPerFailure: the log writer puts one EventBridge event for every execution that
	// fails (Execution Failed or Timed Out); a success puts none.
	EventsPerFailure = 1
	// ShardCountReads: the fetch and recovery each read the shard count (a strongly
	// consistent GetItem) per run.
	ShardCountReads = 1
)

// Batches and the fetch's look-ahead.
const (
	// LookAheadTicks: each fetch tick covers up to LookAheadTicks × the tick ahead of its
	// instant (template.yaml: SUNDIAL_FETCH_SCHEDULE, twice FetchTickMinutes).
	LookAheadTicks = 2
	// SQSBatch: SendMessageBatch and DeleteMessageBatch carry up to 10 messages.
	SQSBatch = 10
	// ProcessorBatchSize is the SQS event sources' BatchSize (template.yaml): the most
	// records one processor invocation gets.
	ProcessorBatchSize = 10
	// RecordsPerInvocation is how many records a processor invocation gets on average when
	// several firings of a queue fall due in the same second (n of them make
	// ceil(n / RecordsPerInvocation) invocations; a lone firing makes one). Measured by make
	// bench at the loads that kept p99 lateness under 1 s: 4.5 records at 50 firings/s, 3.2
	// at 100/s (7.6 when 1,000 fall due in the same second); BatchSize 10 is the ceiling.
	RecordsPerInvocation = 3.0
	// LogWriterBatch: the log writer's stream event source takes up to 100 records, waiting
	// up to a second (template.yaml BatchSize, MaximumBatchingWindowInSeconds); its filter
	// lets only finishes invoke it.
	LogWriterBatch = 100
	// BatchWriteItems: the log writer writes its records with BatchWriteItem, 25 a request.
	BatchWriteItems = 25
	// BatchGetKeys: the fetch and recovery read the items they find with BatchGetItem, 100
	// keys a request.
	BatchGetKeys = 100
)

// Lambda and CloudWatch Logs.
const (
	// PerFiringMs is the processor time a firing occupies, the lateness model's unit (see
	// Concurrency) and the processor's duration (GB-seconds): processor invocation time ÷
	// firings, measured by make bench with an action that answers at once, at the highest
	// load that kept p99 lateness under 1 s (100 firings/s: 1,317,079 ms ÷ 4,007 firings =
	// 329 ms; at 50/s, 225 ms). Most of it is the invocation holding a message that
	// arrived early (SQS delays are whole seconds) until the firing's instant.
	PerFiringMs = 330
	// LatenessBudgetSeconds is the p99 lateness the concurrency is sized for.
	LatenessBudgetSeconds = 1.0
	// MinConcurrency: an SQS event source's MaximumConcurrency is at least 2.
	MinConcurrency = 2
	// FetchSeconds and RecoverySeconds are a fetch tick's and a recovery sweep's duration
	// with nothing due (make bench, idle runs: 9–11 ms and 17–18 ms).
	FetchSeconds = 0.011
	// FetchLagSeconds: a tick waits SUNDIAL_INDEX_LAG (default 2 s) before its second look
	// at the due index (engine.Fetcher.Run), billed as Lambda duration.
	FetchLagSeconds = 2.0
	RecoverySeconds = 0.018
	// LogWriterSeconds is a log writer invocation's duration: assumed (not measured yet),
	// a few BatchWriteItem requests.
	LogWriterSeconds = 0.05
	// FunctionLogBytesPerFiring is the functions' own JSON log lines per execution (make
	// bench 2026-11-24, 1,000 timers at 200 firings/s: 2,035,351 bytes for 36,000 executions,
	// 57 a firing; 710 before firings' metrics were batched per invocation and successful
	// executions were logged at Debug).
	FunctionLogBytesPerFiring = 57
	// LambdaPlatformLogBytes approximates the START, END and REPORT lines Lambda writes to
	// CloudWatch Logs for every invocation.
	LambdaPlatformLogBytes = 300
	// PollWaitSeconds: an SQS event source's pollers long-poll for up to 20 s, so an idle
	// poller makes 3 empty receives a minute.
	PollWaitSeconds = 20
	// RecoveryInterval is the recovery function's schedule (template.yaml: rate(1 minute)).
	RecoveryInterval = time.Minute
)

// Items and storage.
const (
	// TimerItemBytes and LogItemBytes are a timer item's and a log item's sizes as DynamoDB
	// bills them (ItemSize), measured by make bench (500 and 295 bytes) for its timers: name
	// "L0000", no tenant, schedule "every 5s", no time zone, HTTP action
	// "http://127.0.0.1:9/bench", no properties. Both are under 1 KB, so each write is one
	// unit. `sundial plan` sizes each instance's item from this one and what it stores beyond
	// it (plan.ItemBytes); a failing timer's item also holds its last error (up to ~600 bytes).
	TimerItemBytes = 500
	LogItemBytes   = 295
	// StorageOverheadBytes is what DynamoDB adds to each stored item (table and index) for
	// storage billing.
	StorageOverheadBytes = 100
	// MonthDays is the month every "per month" figure means.
	MonthDays = 30
	// MonthSeconds is MonthDays in seconds.
	MonthSeconds = MonthDays * 24 * 60 * 60
)

// BurstSeconds: DynamoDB keeps up to 300 s of unused provisioned capacity for bursts.
const BurstSeconds = 300

// Stack are the template parameters the model depends on.
type Stack struct {
	// FetchTick is the fetch's interval (FetchTickMinutes).
	FetchTick time.Duration
	// DueShards (DueShards): the fetch and recovery query each shard every run.
	DueShards int
	// LogRetentionDays (LogRetentionDays): how long log items are stored.
	LogRetentionDays int
	// MemoryMB is every function's memory (Globals.Function.MemorySize).
	MemoryMB int
	// Concurrency is P1Concurrency..P4Concurrency: the pollers of each queue, whose empty
	// receives are part of the idle cost.
	Concurrency [4]int
	// TimersWriteMax and LogWriteMax are TimersWriteCapacityMax and LogWriteCapacityMax: the
	// write units auto scaling gives the timers and log tables at most (Capacity=Provisioned).
	TimersWriteMax, LogWriteMax int
	// ReservedConcurrency is FetchReservedConcurrency + RecoveryReservedConcurrency +
	// LogWriterReservedConcurrency: the account's concurrency set aside for the control plane.
	ReservedConcurrency int
}

// LookAhead is how far ahead of its instant a fetch tick covers.
func (s Stack) LookAhead() time.Duration { return LookAheadTicks * s.FetchTick }

// MoveProbability is the chance that a finish moves the instance's due-index key, given the
// gap to its next run (zero: it has none, and the finish takes it out of the index).
//
// The finisher sends the next firing itself when it is at or before the fetch's watermark,
// which the last tick set to its instant + LookAheadTicks ticks. Between ticks the watermark
// therefore lies between (LookAheadTicks−1) ticks and LookAheadTicks ticks ahead of now,
// uniformly: a gap of at most LookAheadTicks−1 ticks never moves the key, one beyond
// LookAheadTicks ticks always does, and one in between with the probability that the
// watermark falls short of it.
func MoveProbability(gap, tick time.Duration) float64 {
	if gap <= 0 || tick <= 0 {
		return 1
	}
	lo := float64((LookAheadTicks - 1) * tick)
	p := (float64(gap) - lo) / float64(tick)
	return min(max(p, 0), 1)
}

// Concurrency is the processor concurrency a queue needs so that the firings due in its
// busiest second start within LatenessBudgetSeconds: Little's law, the slots busy at once =
// the work arriving (peak firings × the processor time each occupies) ÷ the time it may
// take (the budget), at least MinConcurrency.
func Concurrency(peakPerSecond, perFiringMs float64) int {
	c := int(ceilEps(peakPerSecond * perFiringMs / 1000 / LatenessBudgetSeconds))
	return max(c, MinConcurrency)
}
