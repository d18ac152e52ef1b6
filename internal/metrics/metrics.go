// Package metrics counts the AWS requests that SDK clients send, by service and operation,
// with an aws-sdk-go-v2 middleware. AWS bills per request, so a count taken where requests
// leave the SDK is the exact, noise-free basis of a cost model: no sampling, no timing.
//
//	c := metrics.New()
//	c.Attach(&awsCfg)                  // every client built from awsCfg is counted
//	before := c.Snapshot()
//	… work …
//	used := c.Snapshot().Sub(before)   // calls per operation during the work
package metrics

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// Op names one API operation of one service, as the SDK names them: {"DynamoDB",
// "UpdateItem"}, {"SQS", "SendMessageBatch"}.
type Op struct {
	Service   string `json:"service"`
	Operation string `json:"operation"`
}

func (o Op) String() string { return o.Service + "." + o.Operation }

// Stat is what was counted for one operation.
type Stat struct {
	// Calls is the number of requests sent. Every attempt counts, retries included: AWS bills
	// each request it receives, and a retry is a request.
	Calls int64 `json:"calls"`
	// Errors is how many of them ended in an error (a DynamoDB conditional write that fails
	// its condition is one, and is still billed).
	Errors int64 `json:"errors"`
	// Bytes is the total size of the request bodies (SQS bills per 64 KB chunk of payload).
	Bytes int64 `json:"bytes"`
	// MaxBytes is the largest request body.
	MaxBytes int64 `json:"maxBytes"`
	// Time is the total time from sending a request to having its answer.
	Time time.Duration `json:"timeNs"`
	// WriteUnits and ReadUnits are the capacity DynamoDB reported consumed (MeasureCapacity),
	// table and indexes; CapacityUnits what it reported without the split.
	WriteUnits    float64 `json:"writeUnits,omitempty"`
	ReadUnits     float64 `json:"readUnits,omitempty"`
	CapacityUnits float64 `json:"capacityUnits,omitempty"`
}

func (s Stat) add(o Stat) Stat {
	return Stat{Calls: s.Calls + o.Calls, Errors: s.Errors + o.Errors, Bytes: s.Bytes + o.Bytes,
		MaxBytes: max(s.MaxBytes, o.MaxBytes), Time: s.Time + o.Time,
		WriteUnits: s.WriteUnits + o.WriteUnits, ReadUnits: s.ReadUnits + o.ReadUnits, CapacityUnits: s.CapacityUnits + o.CapacityUnits}
}

// Counter counts requests; safe for concurrent use. The zero value is not usable: use New.
type Counter struct {
	mu sync.Mutex
	m  map[Op]Stat
}

// New returns an empty counter.
func New() *Counter { return &Counter{m: map[Op]Stat{}} }

// middlewareID names the middleware in the SDK's stack.
const middlewareID = "SundialMetricsCountRequests"

// Attach makes every client later built from cfg count its requests here.
func (c *Counter) Attach(cfg *aws.Config) {
	cfg.APIOptions = append(cfg.APIOptions, c.APIOption)
}

// APIOption adds the counting middleware to a client's stack (aws.Config.APIOptions, or a
// client's Options.APIOptions). It sits in the finalize step after the retry middleware, so
// each attempt is counted once, as AWS would bill it.
func (c *Counter) APIOption(stack *middleware.Stack) error {
	mw := middleware.FinalizeMiddlewareFunc(middlewareID, c.handle)
	if _, ok := stack.Finalize.Get("Retry"); ok {
		return stack.Finalize.Insert(mw, "Retry", middleware.After)
	}
	return stack.Finalize.Add(mw, middleware.After)
}

func (c *Counter) handle(ctx context.Context, in middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
	var size int64
	if req, ok := in.Request.(*smithyhttp.Request); ok && req.ContentLength > 0 {
		size = req.ContentLength
	}
	start := time.Now()
	out, md, err := next.HandleFinalize(ctx, in)
	st := Stat{Calls: 1, Bytes: size, MaxBytes: size, Time: time.Since(start)}
	if err != nil {
		st.Errors = 1
	}
	c.Record(Op{Service: middleware.GetServiceID(ctx), Operation: middleware.GetOperationName(ctx)}, st)
	return out, md, err
}

// Record adds st to op's totals (the middleware's own path; also for requests made outside
// the SDK that should be counted alike).
func (c *Counter) Record(op Op, st Stat) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[op] = c.m[op].add(st)
}

// Snapshot returns a copy of the counts so far.
func (c *Counter) Snapshot() Snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := make(Snapshot, len(c.m))
	for k, v := range c.m {
		s[k] = v
	}
	return s
}

// Reset forgets every count.
func (c *Counter) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.m)
}

// Snapshot is the counts at one moment, by operation.
type Snapshot map[Op]Stat

// Sub returns what was counted since prev (a snapshot taken earlier from the same counter).
// MaxBytes keeps the later snapshot's value: a maximum cannot be subtracted.
func (s Snapshot) Sub(prev Snapshot) Snapshot {
	out := make(Snapshot, len(s))
	for op, st := range s {
		p := prev[op]
		d := Stat{Calls: st.Calls - p.Calls, Errors: st.Errors - p.Errors, Bytes: st.Bytes - p.Bytes,
			MaxBytes: st.MaxBytes, Time: st.Time - p.Time,
			WriteUnits: st.WriteUnits - p.WriteUnits, ReadUnits: st.ReadUnits - p.ReadUnits, CapacityUnits: st.CapacityUnits - p.CapacityUnits}
		if d.Calls != 0 || d.WriteUnits != 0 || d.ReadUnits != 0 {
			out[op] = d
		}
	}
	return out
}

// Calls is the number of calls of one operation.
func (s Snapshot) Calls(service, operation string) int64 {
	return s[Op{Service: service, Operation: operation}].Calls
}

// Total is the number of calls to one service, or to all services when service is "".
func (s Snapshot) Total(service string) int64 {
	var n int64
	for op, st := range s {
		if service == "" || op.Service == service {
			n += st.Calls
		}
	}
	return n
}

// Units returns the DynamoDB write and read units reported consumed (MeasureCapacity).
func (s Snapshot) Units() (write, read float64) {
	for _, st := range s {
		write += st.WriteUnits
		read += st.ReadUnits
	}
	return write, read
}

// Ops lists the operations counted, by service then operation.
func (s Snapshot) Ops() []Op {
	ops := make([]Op, 0, len(s))
	for op := range s {
		ops = append(ops, op)
	}
	slices.SortFunc(ops, func(a, b Op) int {
		return cmp.Or(cmp.Compare(a.Service, b.Service), cmp.Compare(a.Operation, b.Operation))
	})
	return ops
}
