package chaos

import (
	"context"
	"fmt"
	"hash/fnv"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// Fault kinds, as counted and logged.
const (
	FaultThrottle    = "throttle"
	FaultServer      = "5xx"
	FaultServerAfter = "5xx_after"
	FaultDup         = "dup"
)

// Injector draws the faults of one process from its own seeded stream; safe for concurrent use.
type Injector struct {
	cfg  Config
	node string
	log  *slog.Logger

	mu  sync.Mutex
	rng *rand.Rand

	counts sync.Map // "service operation fault" -> *atomic.Int64
}

// NewInjector returns the injector of the process named node (its isRunningBy); log receives
// one record per injected fault.
func NewInjector(cfg Config, node string, log *slog.Logger) *Injector {
	return &Injector{cfg: cfg, node: node, log: log, rng: rand.New(rand.NewPCG(cfg.Seed, nodeHash(node)))}
}

func nodeHash(node string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(node))
	return h.Sum64()
}

// Skew is the clock offset of the process named node: uniform in [-max, +max], whole
// milliseconds, derived from the seed and the name alone, so that a checker that knows both
// can undo it.
func Skew(seed uint64, node string, max time.Duration) time.Duration {
	if max <= 0 {
		return 0
	}
	r := rand.New(rand.NewPCG(seed^0x5d1a1c, nodeHash(node)))
	ms := max.Milliseconds()
	return time.Duration(r.Int64N(2*ms+1)-ms) * time.Millisecond
}

// Config is what the injector injects.
func (in *Injector) Config() Config { return in.cfg }

// Counts returns the faults injected so far, keyed "service operation fault".
func (in *Injector) Counts() map[string]int64 {
	out := map[string]int64{}
	in.counts.Range(func(k, v any) bool {
		out[k.(string)] = v.(*atomic.Int64).Load()
		return true
	})
	return out
}

func (in *Injector) float() float64 {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.rng.Float64()
}

func (in *Injector) draw(f Faults) string {
	if f.total() == 0 {
		return ""
	}
	switch r := in.float(); {
	case r < f.Throttle:
		return FaultThrottle
	case r < f.Throttle+f.Server:
		return FaultServer
	case r < f.total():
		return FaultServerAfter
	}
	return ""
}

func (in *Injector) note(service, op, fault string) {
	key := service + " " + op + " " + fault
	v, _ := in.counts.LoadOrStore(key, new(atomic.Int64))
	v.(*atomic.Int64).Add(1)
	in.log.Info("chaos: injected fault", "service", service, "operation", op, "fault", fault)
}

// apiOption adds, to one call's middleware stack, a step right after the SDK's retry step:
// it runs once per attempt, so retries draw again and back off as they would for real faults.
func (in *Injector) apiOption(service string, f Faults) func(*middleware.Stack) error {
	return func(st *middleware.Stack) error {
		return st.Finalize.Insert(middleware.FinalizeMiddlewareFunc("SundialChaosFaults",
			func(ctx context.Context, fin middleware.FinalizeInput, next middleware.FinalizeHandler) (middleware.FinalizeOutput, middleware.Metadata, error) {
				op := middleware.GetOperationName(ctx)
				fault := in.draw(f)
				switch fault {
				case FaultThrottle, FaultServer:
					in.note(service, op, fault)
					return middleware.FinalizeOutput{}, middleware.Metadata{}, injectedError(service, op, fault)
				case FaultServerAfter:
					// The SDK will retry, rewinding the request body; net/http may still be
					// reading that body (its final EOF probe) after the response came back
					// (golang/go#51907). Wait until the request is fully written first.
					wrote := make(chan struct{})
					var once sync.Once
					tctx := httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
						WroteRequest: func(httptrace.WroteRequestInfo) { once.Do(func() { close(wrote) }) },
					})
					out, md, err := next.HandleFinalize(tctx, fin)
					if err != nil {
						return out, md, err // it failed by itself: nothing to add
					}
					select {
					case <-wrote:
					case <-time.After(5 * time.Second):
					}
					in.note(service, op, fault)
					return middleware.FinalizeOutput{}, md, injectedError(service, op, fault)
				}
				return next.HandleFinalize(ctx, fin)
			}), "Retry", middleware.After)
	}
}

// injectedError is the error the service would return, wrapped as the SDK wraps a real
// response error (so that retry.IsErrorRetryable and errors.As see the same things).
func injectedError(service, op, fault string) error {
	msg := aws.String(fmt.Sprintf("chaos: injected %s on %s.%s", fault, service, op))
	status := http.StatusInternalServerError
	var apiErr smithy.APIError
	switch {
	case fault == FaultThrottle && service == "DynamoDB":
		status, apiErr = http.StatusBadRequest, &ddbtypes.ProvisionedThroughputExceededException{Message: msg}
	case fault == FaultThrottle:
		status, apiErr = http.StatusBadRequest, &sqstypes.RequestThrottled{Message: msg}
	case service == "DynamoDB":
		apiErr = &ddbtypes.InternalServerError{Message: msg}
	default:
		apiErr = &smithy.GenericAPIError{Code: "InternalFailure", Message: *msg, Fault: smithy.FaultServer}
	}
	return &awshttp.ResponseError{
		ResponseError: &smithyhttp.ResponseError{
			Response: &smithyhttp.Response{Response: &http.Response{StatusCode: status, Header: http.Header{}}},
			Err:      apiErr,
		},
		RequestID: fmt.Sprintf("chaos-%d", time.Now().UnixNano()),
	}
}
