package cost

// Load is a period of firings counted from the timers' schedules rather than measured: what
// `sundial plan` and the console's estimate price. Counts are over Seconds; the ones that
// depend on how firings bunch up (invocations, batches) are the caller's, who knows when
// each firing falls due.
type Load struct {
	// Seconds is the period the counts cover.
	Seconds float64
	// Instances are the timer instances whose items are stored.
	Instances int
	// Executions are the scheduled firings plus their retries; Failed those that fail.
	Executions, Failed float64
	// IndexMoves are the finishes that move the due-index key (MoveProbability): the fetch
	// finds, reads (BatchGetItem) and sends as many firings; the others are sent by the
	// finisher.
	IndexMoves float64
	// StaleKeyMinutes are instance-minutes with the due key in the past (frequent timers):
	// recovery rereads each RecoveryRereadsPerMinute times a minute.
	StaleKeyMinutes float64
	// ProcessorInvocations: about ceil(n / RecordsPerInvocation) for the n firings of a queue
	// due in the same second.
	ProcessorInvocations float64
	// FetchSends are the fetch's SendMessageBatch requests: per tick and queue, its firings
	// in batches of SQSBatch.
	FetchSends float64
	// LogWriterInvocations and LogWriterRequests (BatchWriteItem): per second, its finishes
	// in batches of LogWriterBatch and BatchWriteItems.
	LogWriterInvocations, LogWriterRequests float64
	// Items are the item sizes (DefaultItems when zero); Items.Timer is the mean timer item,
	// stored once per instance.
	Items ItemSizes
	// TimerKB and TimerReadKB are the executions' mean timer-item size in write units (1 KB)
	// and read units (4 KB), each instance's rounded up (zero: Items.Timer's).
	TimerKB, TimerReadKB float64
	// PerFiringMs is the processor time a firing occupies (PerFiringMs when zero).
	PerFiringMs float64
	Stack       Stack
}

// Steady is the usage of a Load over its period, firings only (Idle adds the ticks):
//
//   - write units: per execution ClaimWrites + FinishWrites per KB of timer item and
//     LogWrites per KB of log item, LogErrorsWrites more for a failure, a log page per log
//     writer invocation (PageWriteUnits of its share of the executions),
//     DueIndexMoveWrites per index move;
//   - read units per 4 KB of timer item: FetchReadUnits for every moved firing the fetch
//     reads, RecoveryReadUnits for every recovery reread of a stale key; WatermarkReadUnits
//     per processor invocation; a Query (the open alerts) per log writer invocation;
//   - SQS: the fetch's sends; per processor invocation one receive, one delete and, for the
//     share of firings the finisher sends, one send of their follow-ups;
//   - Lambda: processor invocations of RecordsPerInvocation × PerFiringMs each (the hold
//     until the due instant dominates, so a lone firing's invocation is as long as a batch's),
//     log writer invocations of LogWriterSeconds;
//   - CloudWatch Logs: FunctionLogBytesPerFiring per execution, LambdaPlatformLogBytes per
//     invocation;
//   - storage: the log as it stands once the retention is full, and the timer items;
//   - EventBridge: EventsPerFailure events per failed execution.
func Steady(l Load) Usage {
	items := l.Items
	if items == (ItemSizes{}) {
		items = DefaultItems()
	}
	perFiring := l.PerFiringMs
	if perFiring <= 0 {
		perFiring = PerFiringMs
	}
	timerKB, logKB, timer4KB := kb(items.Timer, 1024), kb(items.Log, 1024), kb(items.Timer, 4096)
	if l.TimerKB > 0 {
		timerKB = l.TimerKB
	}
	if l.TimerReadKB > 0 {
		timer4KB = l.TimerReadKB
	}
	var u Usage
	u.WriteUnits = l.Executions*(ClaimWrites+FinishWrites)*timerKB + l.IndexMoves*DueIndexMoveWrites +
		l.Executions*LogWrites*logKB + l.Failed*LogErrorsWrites*logKB + PageWriteUnitsOf(l.Executions, l.LogWriterInvocations)
	rereads := l.StaleKeyMinutes * RecoveryRereadsPerMinute
	u.ReadUnits = (l.IndexMoves*FetchReadUnits+rereads*RecoveryReadUnits)*timer4KB + l.ProcessorInvocations*WatermarkReadUnits +
		l.LogWriterInvocations*LogWriterAlertQueries*QueryReadUnits

	followed := 0.0 // the share of firings the finisher sends
	if l.Executions > 0 {
		followed = max(0, 1-l.IndexMoves/l.Executions)
	}
	u.SQSRequests = l.FetchSends + l.ProcessorInvocations*(2+followed)
	// Claims and finishes, the watermark reads, the log writer's writes, and the
	// BatchGetItems of the fetch and recovery (BatchGetKeys each: at least this many).
	u.DynamoRequests = 2*l.Executions + l.ProcessorInvocations + l.LogWriterRequests + l.LogWriterInvocations*LogWriterAlertQueries +
		ceilEps((l.IndexMoves+rereads)/BatchGetKeys)
	u.Requests = u.DynamoRequests + u.SQSRequests

	mem := float64(memoryMB(l.Stack)) / 1024
	u.LambdaRequests = l.ProcessorInvocations + l.LogWriterInvocations
	u.LambdaGBSeconds = (l.ProcessorInvocations*RecordsPerInvocation*perFiring/1000 + l.LogWriterInvocations*LogWriterSeconds) * mem
	u.LogIngestBytes = l.Executions*FunctionLogBytesPerFiring + u.LambdaRequests*LambdaPlatformLogBytes
	u.Events = l.Failed * EventsPerFailure

	if l.Seconds > 0 {
		months := l.Seconds / MonthSeconds
		// The log items stored once the retention is full: a month's worth × retention/month.
		perMonth := 1 / months
		u.StorageGBMonths = logStorage(l.Executions*perMonth, l.Failed*perMonth, items.Log, l.Stack.LogRetentionDays) * months
		u.StorageGBMonths += float64(l.Instances) * float64(items.Timer+StorageOverheadBytes) / (1 << 30) * months
	}
	return u
}

func memoryMB(s Stack) int {
	if s.MemoryMB > 0 {
		return s.MemoryMB
	}
	return DefaultStack().MemoryMB
}

// Sweep is one fetch tick or recovery sweep with nothing due: its DynamoDB requests and its
// duration.
type Sweep struct {
	Writes  float64 `json:"writes"`  // UpdateItem: the watermark
	Gets    float64 `json:"gets"`    // strongly consistent GetItem of meta items
	Queries float64 `json:"queries"` // Query of the due index
	Seconds float64 `json:"seconds"` // the function's duration
}

// IdleWork is what a stack does when nothing is due.
type IdleWork struct {
	Fetch    Sweep `json:"fetch"`
	Recovery Sweep `json:"recovery"`
}

// ModelIdle is the model's idle work: a fetch tick advances the watermark, reads the shard
// count and queries every shard FetchLooks times, FetchLagSeconds apart; a recovery sweep
// reads the shard count and queries every shard RecoveryQueriesPerShard times, the events
// outbox OutboxQueries times and the alert deadlines AlertWatchQueries times. (The benchmark
// measures the same thing.)
func ModelIdle(s Stack) IdleWork {
	shards := float64(max(s.DueShards, 1))
	return IdleWork{
		Fetch:    Sweep{Writes: WatermarkWrites, Gets: ShardCountReads, Queries: shards * FetchLooks, Seconds: FetchSeconds + FetchLagSeconds},
		Recovery: Sweep{Gets: ShardCountReads, Queries: shards*RecoveryQueriesPerShard + OutboxQueries + AlertWatchQueries, Seconds: RecoverySeconds},
	}
}

// Idle is the usage over `seconds` of a stack with nothing due: a fetch tick every
// s.FetchTick and a recovery sweep every RecoveryInterval (their requests and durations from
// w), and the SQS event sources' empty receives: every queue's pollers (s.Concurrency)
// long-polling PollWaitSeconds each. The watermark is a small item: one write unit a write.
func Idle(w IdleWork, s Stack, seconds float64) Usage {
	tick := s.FetchTick
	if tick <= 0 {
		tick = DefaultStack().FetchTick
	}
	fetches := seconds / tick.Seconds()
	sweeps := seconds / RecoveryInterval.Seconds()
	pollers := 0
	for _, c := range s.Concurrency {
		pollers += c
	}
	var u Usage
	u.WriteUnits = fetches*w.Fetch.Writes + sweeps*w.Recovery.Writes
	u.ReadUnits = (fetches*w.Fetch.Gets+sweeps*w.Recovery.Gets)*StrongReadUnits + (fetches*w.Fetch.Queries+sweeps*w.Recovery.Queries)*QueryReadUnits
	u.DynamoRequests = fetches*(w.Fetch.Writes+w.Fetch.Gets+w.Fetch.Queries) + sweeps*(w.Recovery.Writes+w.Recovery.Gets+w.Recovery.Queries)
	u.SQSRequests = float64(pollers) * seconds / PollWaitSeconds
	u.Requests = u.DynamoRequests + u.SQSRequests
	u.LambdaRequests = fetches + sweeps
	u.LambdaGBSeconds = (fetches*w.Fetch.Seconds + sweeps*w.Recovery.Seconds) * float64(memoryMB(s)) / 1024
	u.LogIngestBytes = u.LambdaRequests * LambdaPlatformLogBytes
	return u
}
