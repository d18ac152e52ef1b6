// Package action calls a timer's action when it fires: an HTTP endpoint (POST) or a Lambda
// function (synchronous invoke). Both receive the same JSON Payload and may answer with a JSON
// object carrying "nextRun" to set their own next run (OutSystems' dynamic Next_Run).
//
// Errors: an invalid Spec or a missing invoker is a plain error (configuration, not a run);
// everything that went wrong with the call itself is a *Failure.
package action

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sundialhq/sundial/internal/timer"
)

// Result of a successful call.
type Result struct {
	Status  int        // HTTP status, or 200 for Lambda
	NextRun *time.Time // set when the response is a JSON object with an RFC3339 "nextRun" (UTC)
	// Accepted: an async start was accepted (HTTP 202, or a Lambda function's successful
	// answer to an async payload); the action reports its outcome later with the payload's token.
	Accepted bool
	// Output is the start of the action's answer (the HTTP response body or the Lambda
	// function's result), at most actionkit.OutputMaxBytes of valid UTF-8; a longer answer ends
	// with actionkit.OutputTruncated. Headers are not kept. Empty for an async start.
	Output string
	// State is the answer's "state", validated and compacted (nil: none; "": null).
	State *string
	// Report is the answer's "summary", "counters" and "warnings" (timer.Report).
	Report timer.Report
}

// Failure is the error returned for a failed call.
type Failure struct {
	Timeout bool   // the context deadline (the timer's timeout) expired
	Status  int    // HTTP status when there was one
	Excerpt string // first 512 bytes of the response body / Lambda error payload, valid UTF-8
	Err     error  // underlying cause if any

	head  string        // what failed, e.g. "http 500" or "lambda function error Unhandled"
	after time.Duration // the deadline's budget when the call started, for "timeout after 2s"
}

func (f *Failure) Error() string {
	if f == nil {
		return "action: <nil failure>"
	}
	var b strings.Builder
	switch {
	case f.Timeout:
		b.WriteString("timeout")
		if f.after > 0 {
			b.WriteString(" after " + f.after.String())
		}
	case f.head != "":
		b.WriteString(f.head)
	case f.Status != 0:
		fmt.Fprintf(&b, "http %d", f.Status)
	default:
		b.WriteString("action failed")
	}
	// A timeout's cause is always "context deadline exceeded": saying it twice adds nothing.
	if f.Err != nil && !f.Timeout {
		b.WriteString(": " + f.Err.Error())
	}
	if f.Excerpt != "" {
		b.WriteString(": " + f.Excerpt)
	}
	return b.String()
}

// Failed is the failure of a call, head saying what failed (e.g. "lambda invoke failed"); the
// adapters set Status and Excerpt when they have them, and Classify marks a timeout.
func Failed(head string, err error) *Failure { return &Failure{head: head, Err: err} }

func (f *Failure) Unwrap() error {
	if f == nil {
		return nil
	}
	return f.Err
}

// Invoker calls an action.
type Invoker interface {
	Invoke(ctx context.Context, spec Spec, p Payload) (Result, error)
}

// Dispatcher routes on the Spec to its HTTP or Lambda invoker. The Lambda invoker is
// internal/action/lambdainvoke's, in its own package so that only the roles that invoke
// Lambda functions link the Lambda client.
type Dispatcher struct {
	HTTP   *HTTPInvoker
	Lambda Invoker
}

var (
	_ Invoker = Dispatcher{}
	_ Invoker = (*HTTPInvoker)(nil)
)

func (d Dispatcher) Invoke(ctx context.Context, spec Spec, p Payload) (Result, error) {
	if err := spec.Validate(); err != nil {
		return Result{}, err
	}
	if spec.HTTP != nil {
		if d.HTTP == nil {
			return Result{}, fmt.Errorf("action: no HTTP invoker configured to call %s", spec)
		}
		return d.HTTP.Invoke(ctx, spec, p)
	}
	if d.Lambda == nil {
		return Result{}, fmt.Errorf("action: no Lambda invoker configured to call %s", spec)
	}
	return d.Lambda.Invoke(ctx, spec, p)
}

// EncodePayload is shared by both adapters (HTTP here, Lambda in lambdainvoke) so HTTP and
// Lambda actions see identical bytes.
func EncodePayload(p Payload) ([]byte, error) {
	if p.Properties == nil {
		p.Properties = map[string]string{} // the contract says an object, never null
	}
	p.ScheduledAt = p.ScheduledAt.UTC() // one zone on the wire, whatever the caller's Location
	b, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("action: encode payload: %w", err)
	}
	return b, nil
}

// Fence keeps a call from reaching the action after its deadline. The processor's context
// deadline ends the action within its lease; but a process that stalls (a host frozen, a
// long GC pause) between building the request and writing it would, on waking, write it
// before the runtime's timers have cancelled the context — and the action would start
// after recovery took the lease back and another execution began. So the deadline is
// checked against the wall clock just before the call, and set as the connection's write
// deadline while the request is written (the network poller refuses a write after it,
// whenever the process woke), then cleared so that a pooled connection carries no stale
// deadline to its next request.
func Fence(ctx context.Context) (context.Context, error) {
	dl, ok := ctx.Deadline()
	if !ok {
		return ctx, nil
	}
	if !time.Now().Before(dl) {
		return ctx, context.DeadlineExceeded
	}
	var conn atomic.Pointer[net.Conn]
	return httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) {
			if info.Conn != nil {
				_ = info.Conn.SetWriteDeadline(dl)
				conn.Store(&info.Conn)
			}
		},
		WroteRequest: func(httptrace.WroteRequestInfo) {
			if c := conn.Load(); c != nil {
				_ = (*c).SetWriteDeadline(time.Time{})
			}
		},
	}), nil
}

// Budget is how long the call may take; measured up front so a timeout can report it.
func Budget(ctx context.Context) time.Duration {
	d, ok := ctx.Deadline()
	if !ok {
		return 0
	}
	return time.Until(d).Round(time.Millisecond)
}

// Classify turns a call error into a Timeout failure when the deadline is what ended the call.
// The ctx is asked rather than the error, because transports wrap the deadline in many ways.
func Classify(ctx context.Context, limit time.Duration, f *Failure) *Failure {
	// The wall clock too: after a stall the deadline may have passed (and the fence refused
	// the write) before the runtime cancelled the context.
	dl, ok := ctx.Deadline()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || (ok && !time.Now().Before(dl)) {
		f.Timeout = true
		f.after = limit
		if f.Err == nil {
			f.Err = context.DeadlineExceeded
		}
	}
	return f
}
