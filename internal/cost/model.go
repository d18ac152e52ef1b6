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
	// Calls are the SDK requests counted by internal/metrics.
	Calls metrics.Snapshot
	// EmptyReceives are the ReceiveMessage calls (among Calls) that returned no message. They
	// are left out of the per-firing usage: pollers make them at a rate per poller whatever
	// fires (on AWS, Lambda's pollers long-poll for up to 20 s), so they are a cost per hour,
	// priced with the idle cost, not a cost of firing.
	EmptyReceives int64
	// Lambda invocations by function ("processor", "fetch", "recovery").
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

// Usage is AWS usage per firing.
type Usage struct {
	// Requests are the billable API requests (DynamoDB and SQS), the issue's "requests per
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
	// StorageGBMonths is the log item kept for the retention period (table and byDay index).
	StorageGBMonths float64 `json:"storageGBMonths"`
}

// Model constants; each is an assumption the report repeats.
const (
	// Write units per call, in units of the item's size rounded up to 1 KB. A claim writes
	// the item and moves it from the sparse due index to the running index (a delete there,
	// a put here): 3 writes.
	ClaimWrites = 3
	// The finish and the log item are one TransactWriteItems: DynamoDB bills each of its two
	// item writes at twice the units of a plain write (TxFactor), and the index changes they
	// cause — the timer item back from the running to the due index (2), the log item into
	// the byDay index (1), and errorsByDay for a failed run (1) — as plain writes, since
	// DynamoDB propagates a transaction to its indexes after it completes.
	TxFactor           = 2
	TxTimerIndexWrites = 2
	TxLogIndexWrites   = 1
	FailedLogWrites    = 1
	// Before finishes were transactional they were an UpdateItem (3 writes: table and both
	// indexes) and a PutItem (2: table and byDay); the model still prices that path, so a
	// window measured with either engine is priced right.
	FinishWrites = 3
	LogWrites    = 2
	// LambdaPlatformLogBytes approximates the START, END and REPORT lines Lambda writes to
	// CloudWatch Logs for every invocation.
	LambdaPlatformLogBytes = 300
	// StorageOverheadBytes is what DynamoDB adds to each stored item (table and index) for
	// storage billing.
	StorageOverheadBytes = 100
	// QueryReadUnits is charged per Query: the fetch and recovery queries of a steady window
	// return nothing or a few small items; an eventually consistent read of up to 4 KB is half
	// a unit.
	QueryReadUnits = 0.5
)

// ErrNoFirings is returned for a window in which nothing fired.
var ErrNoFirings = errors.New("cost: no firings in the window")

// PerFiring is Sundial's usage per firing in the window.
//
// DynamoDB write units: per firing, one UpdateItem is its claim (ClaimWrites per KB of timer
// item) and one TransactWriteItems its finish and log entry (see TxFactor); a window measured
// before finishes were transactional has instead a second UpdateItem (FinishWrites) and a
// PutItem (LogWrites per KB of log item). Every other write — the fetch watermark, lost
// claims, finishes retried after a concurrent change, recovery marks — is charged one unit
// per KB of timer item (two for a transaction). Reads: GetItem is strongly consistent (1 unit
// per 4 KB); Query and Scan QueryReadUnits each.
func PerFiring(w Window) (Usage, error) {
	if w.Firings <= 0 {
		return Usage{}, ErrNoFirings
	}
	f := float64(w.Firings)
	timerKB, logKB := kb(w.Items.Timer, 1024), kb(w.Items.Log, 1024)
	failed := float64(w.Failed)
	calls := func(op string) float64 { return float64(w.Calls.Calls("DynamoDB", op)) }
	var u Usage

	// The firings' own writes, then whatever else was written.
	updates, puts, txs := calls("UpdateItem"), calls("PutItem"), calls("TransactWriteItems")
	claims := math.Min(updates, f)
	txFinishes := math.Min(txs, f)
	plainFinishes := math.Min(updates-claims, f-txFinishes)
	plainLogs := math.Min(puts, f-txFinishes)
	u.WriteUnits += claims * ClaimWrites * timerKB
	u.WriteUnits += txFinishes * (TxFactor*(timerKB+logKB) + TxTimerIndexWrites*timerKB + TxLogIndexWrites*logKB)
	u.WriteUnits += plainFinishes*FinishWrites*timerKB + plainLogs*LogWrites*logKB
	u.WriteUnits += failed * FailedLogWrites * logKB
	u.WriteUnits += (updates-claims-plainFinishes)*timerKB + (puts-plainLogs)*timerKB + (txs-txFinishes)*TxFactor*timerKB

	for op, st := range w.Calls {
		n := float64(st.Calls)
		switch op.Service {
		case "DynamoDB":
			u.DynamoRequests += n
			switch op.Operation {
			case "DeleteItem", "BatchWriteItem":
				u.WriteUnits += n
			case "GetItem", "BatchGetItem":
				u.ReadUnits += n * kb(w.Items.Timer, 4096)
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
	u.StorageGBMonths = logStorage(w) * f
	return u.div(f), nil
}

// Naive is the same engine with every batch of one: each firing is its own SQS message, sent,
// received and deleted alone, and its own processor invocation, which does the processor's
// per-batch reads (the watermark GetItem) for that one firing. The per-firing writes and the
// fetch and recovery ticks are Sundial's as measured; empty polls are left out, as in PerFiring. An invocation of one
// firing is assumed to last as long as Sundial's average invocation of a batch (the firings of
// a batch run concurrently, so a batch takes about as long as its slowest firing).
func Naive(w Window) (Usage, error) {
	u, err := PerFiring(w)
	if err != nil {
		return Usage{}, err
	}
	f := float64(w.Firings)
	proc := w.Lambda["processor"]
	gets := float64(w.Calls.Calls("DynamoDB", "GetItem")) / f
	u.DynamoRequests += 1 - gets
	u.ReadUnits += (1 - gets) * kb(w.Items.Timer, 4096)
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

func logStorage(w Window) float64 {
	bytes := 2 * float64(w.Items.Log+StorageOverheadBytes) // table and byDay index
	months := float64(w.LogRetentionDays) / (365.25 / 12)
	return bytes / (1 << 30) * months
}

// kb is the size in units of `unit` bytes, rounded up, at least 1 (DynamoDB's rounding).
func kb(size, unit int) float64 {
	return math.Max(1, math.Ceil(float64(size)/float64(unit)))
}

func (u Usage) div(f float64) Usage {
	return Usage{
		Requests: u.Requests / f, DynamoRequests: u.DynamoRequests / f, SQSRequests: u.SQSRequests / f,
		WriteUnits: u.WriteUnits / f, ReadUnits: u.ReadUnits / f,
		LambdaRequests: u.LambdaRequests / f, LambdaGBSeconds: u.LambdaGBSeconds / f,
		LogIngestBytes: u.LogIngestBytes / f, StorageGBMonths: u.StorageGBMonths / f,
	}
}

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
		{"DynamoDB storage of the log item", u.StorageGBMonths, "GB-month", u.StorageGBMonths * p.DynamoStorageGBMonth},
	}
	b := Bill{Lines: lines}
	for _, l := range lines {
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
