package cost

import (
	"errors"
	"math"

	"github.com/sundialhq/sundial/internal/metrics"
)

// Window is what one benchmark window measured on the emulator.
type Window struct {
	// Firings are the executions recorded in the window: claim won, fenced finish written,
	// log entry put. Failed counts those whose outcome was a failure (their log item also
	// enters the sparse errorsByDay index).
	Firings, Failed int64
	// IndexMoves are the firings whose finish moved the due-index key, because their next
	// run lay beyond what the fetch had covered (see MoveProbability): the fetch finds them
	// again with a BatchGetItem. Zero for timers due more often than every look-ahead.
	IndexMoves float64
	// StaleKeyMinutes are instance-minutes in the window during which an instance's due
	// key lay in the past (a frequent timer's always does): recovery reads each such
	// instance RecoveryRereadsPerMinute times a minute.
	StaleKeyMinutes float64
	// Calls are the SDK requests counted by internal/metrics.
	Calls metrics.Snapshot
	// EmptyReceives are the ReceiveMessage calls (among Calls) that returned no message. They
	// are left out of the per-firing usage: pollers make them at a rate per poller whatever
	// fires (on AWS, Lambda's pollers long-poll for up to 20 s), so they are a cost per hour,
	// priced with the idle cost, not a cost of firing.
	EmptyReceives int64
	// Lambda invocations by function ("processor", "fetch", "recovery", "logwriter").
	Lambda map[string]Invocations
	// LogBytes is the functions' own log output (JSON lines) in the window.
	LogBytes int64
	// Items are the stored sizes of a timer item and of a log item, as DynamoDB sizes them.
	Items ItemSizes
	// MemoryMB is the functions' configured memory (template.yaml: 128).
	MemoryMB int
	// LogRetentionDays is how long log items are kept (template.yaml LogRetentionDays).
	LogRetentionDays int
}

// Invocations of one function.
type Invocations struct {
	Count int64 `json:"count"`
	// BilledMs is the sum of the invocations' durations, each rounded up to the millisecond
	// as Lambda bills them.
	BilledMs int64 `json:"billedMs"`
}

// ItemSizes are sizes in bytes (see ItemSize).
type ItemSizes struct {
	Timer int `json:"timer"`
	Log   int `json:"log"`
}

// DefaultItems are the measured sizes the model assumes when it has none (TimerItemBytes,
// LogItemBytes).
func DefaultItems() ItemSizes { return ItemSizes{Timer: TimerItemBytes, Log: LogItemBytes} }

// Usage is AWS usage: per firing (PerFiring, Naive) or over a period (Steady, Idle).
type Usage struct {
	// Requests are the billable API requests (DynamoDB and SQS), the report's "requests per
	// firing"; Lambda invocations are counted apart in LambdaRequests.
	Requests       float64 `json:"requests"`
	DynamoRequests float64 `json:"dynamodbRequests"`
	SQSRequests    float64 `json:"sqsRequests"`
	// WriteUnits and ReadUnits are DynamoDB request units, index writes included.
	WriteUnits float64 `json:"writeUnits"`
	ReadUnits  float64 `json:"readUnits"`
	// LambdaRequests are invocations of Sundial's functions; LambdaGBSeconds their duration
	// at the configured memory.
	LambdaRequests  float64 `json:"lambdaRequests"`
	LambdaGBSeconds float64 `json:"lambdaGBSeconds"`
	// LogIngestBytes go to CloudWatch Logs: the functions' lines plus Lambda's own.
	LogIngestBytes float64 `json:"logIngestBytes"`
	// StorageGBMonths is DynamoDB storage: the log items kept for the retention period
	// (table and indexes) and, in a period's usage (Steady), the timer items.
	StorageGBMonths float64 `json:"storageGBMonths"`
	// Events are the EventBridge events put (internal/events): one per failed execution.
	Events float64 `json:"events"`
}

// Add returns the sum of two usages.
func (u Usage) Add(o Usage) Usage {
	return Usage{
		Requests: u.Requests + o.Requests, DynamoRequests: u.DynamoRequests + o.DynamoRequests, SQSRequests: u.SQSRequests + o.SQSRequests,
		WriteUnits: u.WriteUnits + o.WriteUnits, ReadUnits: u.ReadUnits + o.ReadUnits,
		LambdaRequests: u.LambdaRequests + o.LambdaRequests, LambdaGBSeconds: u.LambdaGBSeconds + o.LambdaGBSeconds,
		LogIngestBytes: u.LogIngestBytes + o.LogIngestBytes, StorageGBMonths: u.StorageGBMonths + o.StorageGBMonths,
		Events: u.Events + o.Events,
	}
}

// Scale multiplies every quantity by k.
func (u Usage) Scale(k float64) Usage {
	return Usage{
		Requests: u.Requests * k, DynamoRequests: u.DynamoRequests * k, SQSRequests: u.SQSRequests * k,
		WriteUnits: u.WriteUnits * k, ReadUnits: u.ReadUnits * k,
		LambdaRequests: u.LambdaRequests * k, LambdaGBSeconds: u.LambdaGBSeconds * k,
		LogIngestBytes: u.LogIngestBytes * k, StorageGBMonths: u.StorageGBMonths * k,
		Events: u.Events * k,
	}
}

// ErrNoFirings is returned for a window in which nothing fired.
var ErrNoFirings = errors.New("cost: no firings in the window")

// PerFiring is Sundial's usage per firing in the window, as the layout's model (layout.go)
// prices the requests counted.
//
// DynamoDB write units, per KB of the item written: every firing's claim and finish are one
// UpdateItem each (ClaimWrites, FinishWrites per KB of timer item); the window's IndexMoves
// cost DueIndexMoveWrites each; every firing's log entry is put by the log writer into the
// log table (LogWrites per KB of log item), and a failed one's into errorsByDay too, and
// each log writer invocation writes a page of its batch (PageWriteUnitsOf), whatever
// requests wrote them (BatchWriteItem calls are taken as the log writer's and not charged
// again). Every other write — UpdateItems beyond two per firing (the fetch watermark, lost
// claims, finishes retried after a concurrent change, recovery marks), PutItem, DeleteItem,
// TransactWriteItems — is charged one unit per KB of timer item. Reads: GetItem reads a small meta item (the watermark, the shard count),
// strongly consistent; the BatchGetItem reads are the model's (the fetch reads each moved
// instance once, FetchReadUnits, recovery each stale key RecoveryRereadsPerMinute times a
// minute, RecoveryReadUnits, per 4 KB of timer item); Query and Scan QueryReadUnits each.
func PerFiring(w Window) (Usage, error) {
	if w.Firings <= 0 {
		return Usage{}, ErrNoFirings
	}
	f := float64(w.Firings)
	timerKB, logKB, timer4KB := kb(w.Items.Timer, 1024), kb(w.Items.Log, 1024), kb(w.Items.Timer, 4096)
	calls := func(op string) float64 { return float64(w.Calls.Calls("DynamoDB", op)) }
	var u Usage

	// The firings' own writes, then whatever else was written.
	updates := calls("UpdateItem")
	claims := min(updates, f)
	finishes := min(updates-claims, f)
	u.WriteUnits += claims*ClaimWrites*timerKB + finishes*FinishWrites*timerKB
	u.WriteUnits += w.IndexMoves * DueIndexMoveWrites
	u.WriteUnits += f*LogWrites*logKB + float64(w.Failed)*LogErrorsWrites*logKB
	u.WriteUnits += PageWriteUnitsOf(f, float64(w.Lambda["logwriter"].Count))
	u.WriteUnits += (updates - claims - finishes + calls("PutItem") + calls("DeleteItem") + calls("TransactWriteItems")) * timerKB
	u.ReadUnits += (w.IndexMoves*FetchReadUnits + w.StaleKeyMinutes*RecoveryRereadsPerMinute*RecoveryReadUnits) * timer4KB

	for op, st := range w.Calls {
		n := float64(st.Calls)
		switch op.Service {
		case "DynamoDB":
			u.DynamoRequests += n
			switch op.Operation {
			case "GetItem":
				u.ReadUnits += n * StrongReadUnits
			case "Query", "Scan":
				u.ReadUnits += n * QueryReadUnits
			}
		case "SQS":
			u.SQSRequests += n
		}
	}
	u.SQSRequests -= float64(w.EmptyReceives)
	u.Requests = u.DynamoRequests + u.SQSRequests
	var inv Invocations
	for _, i := range w.Lambda {
		inv.Count += i.Count
		inv.BilledMs += i.BilledMs
	}
	u.LambdaRequests = float64(inv.Count)
	u.LambdaGBSeconds = float64(inv.BilledMs) / 1000 * float64(w.MemoryMB) / 1024
	u.LogIngestBytes = float64(w.LogBytes) + float64(inv.Count)*LambdaPlatformLogBytes
	u.StorageGBMonths = logStorage(f, float64(w.Failed), w.Items.Log, w.LogRetentionDays)
	u.Events = float64(w.Failed) * EventsPerFailure
	return u.Scale(1 / f), nil
}

// Naive is the same engine with every batch of one: each firing is its own SQS message, sent,
// received and deleted alone, and its own processor invocation, which does the processor's
// per-batch read (the watermark GetItem) for that one firing. The per-firing writes and the
// fetch and recovery ticks are Sundial's as measured; empty polls are left out, as in
// PerFiring. An invocation of one firing is assumed to last as long as Sundial's average
// invocation of a batch (the firings of a batch run concurrently, so a batch takes about as
// long as its slowest firing).
func Naive(w Window) (Usage, error) {
	u, err := PerFiring(w)
	if err != nil {
		return Usage{}, err
	}
	f := float64(w.Firings)
	proc := w.Lambda["processor"]
	gets := float64(w.Calls.Calls("DynamoDB", "GetItem")) / f
	u.DynamoRequests += 1 - gets
	u.ReadUnits += (1 - gets) * WatermarkReadUnits
	u.SQSRequests = 3
	u.Requests = u.DynamoRequests + u.SQSRequests
	perInv := 0.0
	if proc.Count > 0 {
		perInv = float64(proc.BilledMs) / float64(proc.Count)
	}
	others := float64(0)
	othersMs := float64(0)
	for name, i := range w.Lambda {
		if name != "processor" {
			others += float64(i.Count)
			othersMs += float64(i.BilledMs)
		}
	}
	u.LambdaRequests = 1 + others/f
	u.LambdaGBSeconds = (perInv + othersMs/f) / 1000 * float64(w.MemoryMB) / 1024
	u.LogIngestBytes = float64(w.LogBytes)/f + u.LambdaRequests*LambdaPlatformLogBytes
	return u, nil
}

// logStorage is the GB-months of DynamoDB storage that `executions` log items (`failed` of
// them failures) occupy over the retention: each in the log table and its line in a log page
// (PageRefBytes), a failure's also in errorsByDay. (The pages' own overhead, one item per
// log writer batch, is left out: at full batches it is 1 % of the lines.)
func logStorage(executions, failed float64, logBytes, retentionDays int) float64 {
	item := float64(logBytes + StorageOverheadBytes)
	bytes := (executions+failed)*item + executions*PageRefBytes
	return bytes / (1 << 30) * float64(retentionDays) / MonthDays
}

// WriteKB and ReadKB are the units a write or a strongly consistent read of an item of that
// many bytes costs: per KB and per 4 KB, rounded up, at least 1.
func WriteKB(bytes int) float64 { return kb(bytes, 1024) }
func ReadKB(bytes int) float64  { return kb(bytes, 4096) }

// kb is the size in units of `unit` bytes, rounded up, at least 1 (DynamoDB's rounding).
func kb(size, unit int) float64 {
	return math.Max(1, math.Ceil(float64(size)/float64(unit)))
}

// ceilEps rounds up, forgiving float error (33.000000000000004 is 33).
func ceilEps(x float64) float64 { return math.Ceil(x - 1e-9) }

// Line is one item of a bill.
type Line struct {
	Item     string  `json:"item"`
	Quantity float64 `json:"quantity"`
	Unit     string  `json:"unit"`
	USD      float64 `json:"usd"`
}

// Bill prices a usage; Total is the sum of the lines.
type Bill struct {
	Lines []Line  `json:"lines"`
	Total float64 `json:"total"`
}

// Bill prices usage (of one firing, or of anything else: the arithmetic is linear).
func (p Prices) Bill(u Usage) Bill {
	lines := []Line{
		{"DynamoDB write request units", u.WriteUnits, "WRU", u.WriteUnits * p.DynamoWriteRequestUnit},
		{"DynamoDB read request units", u.ReadUnits, "RRU", u.ReadUnits * p.DynamoReadRequestUnit},
		{"SQS requests", u.SQSRequests, "requests", u.SQSRequests * p.SQSRequest},
		{"Lambda requests", u.LambdaRequests, "invocations", u.LambdaRequests * p.LambdaRequest},
		{"Lambda duration (arm64)", u.LambdaGBSeconds, "GB-s", u.LambdaGBSeconds * p.LambdaGBSecondARM64},
		{"CloudWatch Logs ingestion", u.LogIngestBytes / (1 << 30), "GB", u.LogIngestBytes / (1 << 30) * p.CloudWatchLogsIngestGB},
		{"DynamoDB storage", u.StorageGBMonths, "GB-month", u.StorageGBMonths * p.DynamoStorageGBMonth},
		{"EventBridge events", u.Events, "events", u.Events * p.EventBridgeEvent},
	}
	b := Bill{Lines: lines}
	for _, l := range lines {
		b.Total += l.USD
	}
	return b
}

// Provisioned is DynamoDB capacity provisioned for a steady usage, with auto scaling
// keeping utilization at a target.
type Provisioned struct {
	// WCU and RCU are the capacity units provisioned on average (all tables and indexes).
	WCU float64 `json:"wcu"`
	RCU float64 `json:"rcu"`
	// WCUHours and RCUHours are what is billed.
	WCUHours float64 `json:"wcuHours"`
	RCUHours float64 `json:"rcuHours"`
}

// ProvisionedFor sizes provisioned capacity for usage spread evenly over `seconds`, auto
// scaling holding utilization at `target` (DefaultTargetUtilization when out of (0, 1]):
// units a second ÷ target, rounded up, at least MinWCU and MinRCU. Auto scaling works per
// table and index, each between its own minimum and maximum; the model sums them, so with a
// busy table next to an idle index at its minimum it can fall short by that minimum. With seconds = 0 (usage per firing) there is no period, hence no minimum: the
// capacity-hours are the units ÷ 3,600 ÷ target, linear in the usage.
//
// Auto scaling follows a load over minutes, not seconds: a second above the provisioned
// rate draws on burst capacity (up to BurstSeconds of unused capacity), and beyond it is
// throttled.
func ProvisionedFor(u Usage, seconds, target float64) Provisioned {
	if target <= 0 || target > 1 {
		target = DefaultTargetUtilization
	}
	p := Provisioned{WCUHours: u.WriteUnits / 3600 / target, RCUHours: u.ReadUnits / 3600 / target}
	if seconds > 0 {
		hours := seconds / 3600
		p.WCU = max(ceilEps(u.WriteUnits/seconds/target), float64(MinWCU))
		p.RCU = max(ceilEps(u.ReadUnits/seconds/target), float64(MinRCU))
		p.WCUHours, p.RCUHours = p.WCU*hours, p.RCU*hours
	}
	return p
}

// BillProvisioned prices usage with DynamoDB on provisioned capacity (ProvisionedFor): the
// same lines as Bill, the request units' two replaced by capacity-hours.
func (p Prices) BillProvisioned(u Usage, seconds, target float64) Bill {
	c := ProvisionedFor(u, seconds, target)
	b := p.Bill(u)
	b.Lines[0] = Line{"DynamoDB provisioned write capacity", c.WCUHours, "WCU-hours", c.WCUHours * p.DynamoWCUHour}
	b.Lines[1] = Line{"DynamoDB provisioned read capacity", c.RCUHours, "RCU-hours", c.RCUHours * p.DynamoRCUHour}
	b.Total = 0
	for _, l := range b.Lines {
		b.Total += l.USD
	}
	return b
}

// Scale multiplies every line, e.g. by 1e6 for "per million firings".
func (b Bill) Scale(k float64) Bill {
	out := Bill{Lines: make([]Line, len(b.Lines)), Total: b.Total * k}
	for i, l := range b.Lines {
		out.Lines[i] = Line{Item: l.Item, Quantity: l.Quantity * k, Unit: l.Unit, USD: l.USD * k}
	}
	return out
}

// Line returns the bill's line for item (zero if absent).
func (b Bill) Line(item string) Line {
	for _, l := range b.Lines {
		if l.Item == item {
			return l
		}
	}
	return Line{}
}

// Scheduler is EventBridge Scheduler's bill for one scheduled invocation.
func (p Prices) Scheduler() Bill {
	return Bill{Lines: []Line{{"EventBridge Scheduler invocations", 1, "invocations", p.SchedulerInvocation}}, Total: p.SchedulerInvocation}
}
