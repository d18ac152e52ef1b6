package publish

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/cfn"
)

// MaxResponseBytes bounds a custom resource response: "The total size of the response body
// can't exceed 4096 bytes" (CloudFormation, Custom resource response objects); a longer one
// fails the resource with "Response object is too long". The body counted is the one sent,
// JSON-encoded as encoding/json encodes it (<, > and & escaped as \u003c…, six bytes each).
const MaxResponseBytes = 4096

// Margins of Respond before the invocation's deadline (see DeadlineMargin).
const (
	MinDeadlineMargin = 2 * time.Second
	MaxDeadlineMargin = 30 * time.Second
)

// DeadlineMargin is how long before the function's deadline Respond stops a request still
// running and answers FAILED: a tenth of the time the invocation has, between 2 and 30 s
// (the publish function's 300 s timeout: 30 s). Half of it is for the request to stop, the
// rest to send the answer.
func DeadlineMargin(remaining time.Duration) time.Duration {
	return min(max(remaining/10, MinDeadlineMargin), MaxDeadlineMargin)
}

// Responder answers CloudFormation's custom resource requests at their pre-signed
// ResponseURL, in place of cfn.LambdaWrap, with what LambdaWrap lacks:
//   - an answer whatever the request's work does: work still running a margin before the
//     invocation's deadline (DeadlineMargin) is cancelled — its context ends — and FAILED is
//     answered with the reason, instead of the function timing out without an answer (which
//     CloudFormation waits for until the resource's ServiceTimeout, an hour by default);
//   - one answer: a panic is answered FAILED once (LambdaWrap sends FAILED and panics on,
//     which Lambda counts as an error and retries), and the invocation then succeeds, so
//     that Lambda retries no request that was answered;
//   - the answer fits CloudFormation's 4,096 bytes (FitResponse);
//   - the PUT is bounded by the deadline and tried again after a failure while time remains.
//
// The work is waited for after its context ended (until half the margin is left), so that
// its writes have stopped before CloudFormation reads FAILED and rolls back: every write of a
// publish takes the context, and a cancelled context stops the next one. A write in flight
// at that moment may still land; one stuck past the wait is reported in the log and the
// answer is sent anyway.
type Responder struct {
	// Client sends the answer (nil: http.DefaultClient); every PUT is bound by the deadline.
	Client *http.Client
	Log    *slog.Logger // nil: discard
	// Margin replaces DeadlineMargin (tests).
	Margin time.Duration
}

// Outcome is what Respond answered.
type Outcome struct {
	Response cfn.Response
	Sent     bool // CloudFormation accepted the answer
	TimedOut bool // the work was stopped at the margin
}

type workResult struct {
	id   string
	data map[string]any
	err  error
}

// Respond runs fn for ev and answers ev's ResponseURL once. The error is the answer's: nil
// once it was sent (a request fn failed was answered FAILED: for Lambda the invocation
// succeeded), else why it could not be.
func (r *Responder) Respond(ctx context.Context, ev cfn.Event, fn cfn.CustomResourceFunction) (Outcome, error) {
	log := r.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("request_type", ev.RequestType, "request_id", ev.RequestID, "logical_id", ev.LogicalResourceID)
	deadline, hasDeadline := ctx.Deadline()
	margin := r.Margin
	if margin <= 0 && hasDeadline {
		margin = DeadlineMargin(time.Until(deadline))
	}
	workCtx, cancel := context.WithCancel(ctx)
	if hasDeadline {
		workCtx, cancel = context.WithDeadline(ctx, deadline.Add(-margin))
	}
	defer cancel()

	results := make(chan workResult, 1)
	go func() {
		defer func() {
			if v := recover(); v != nil {
				log.Error("custom resource: the handler panicked", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				results <- workResult{err: fmt.Errorf("sundial publish: the function panicked (%v); nothing more was done, see its log", v)}
			}
		}()
		id, data, err := fn(workCtx, ev)
		results <- workResult{id, data, err}
	}()

	var out Outcome
	var res workResult
	select {
	case res = <-results:
	case <-workCtx.Done():
		cancel()
		out.TimedOut = true
		stopBy := time.Now().Add(time.Second)
		if hasDeadline {
			stopBy = deadline.Add(-margin / 2)
		}
		late := fmt.Errorf("sundial publish: not finished %s before the function's timeout; stopped, and this request failed (the function's log says how far it got)", margin)
		select {
		case res = <-results:
			if res.err != nil {
				res.err = fmt.Errorf("%w: %w", late, res.err)
			} else {
				out.TimedOut = false // it finished in the meantime: its answer stands
			}
		case <-time.After(time.Until(stopBy)):
			log.Error("custom resource: the request's work has not stopped after its context ended; answering FAILED anyway")
			res = workResult{err: late}
		}
	}

	resp := cfn.NewResponse(&ev)
	resp.PhysicalResourceID, resp.Data = res.id, res.data
	if resp.PhysicalResourceID == "" {
		resp.PhysicalResourceID = ev.PhysicalResourceID
		if ev.RequestType == cfn.RequestCreate {
			resp.PhysicalResourceID = ev.RequestID // as cfn.LambdaWrap: a Create's fallback
		}
	}
	resp.Status = cfn.StatusSuccess
	if res.err != nil {
		resp.Status, resp.Reason = cfn.StatusFailed, res.err.Error()
	}
	body, err := FitResponse(resp)
	if err != nil {
		return out, err
	}
	out.Response = *resp

	sendCtx, stop := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	if hasDeadline {
		stop()
		sendCtx, stop = context.WithDeadline(context.WithoutCancel(ctx), deadline.Add(-margin/10))
	}
	defer stop()
	if err := r.put(sendCtx, ev.ResponseURL, body); err != nil {
		log.Error("custom resource: the answer could not be sent; CloudFormation fails the resource at its ServiceTimeout", "status", resp.Status, "error", err)
		return out, fmt.Errorf("sundial publish: answering %s at the ResponseURL: %w", resp.Status, err)
	}
	out.Sent = true
	log.Info("custom resource: answered", "status", resp.Status, "physical_id", resp.PhysicalResourceID, "bytes", len(body), "timed_out", out.TimedOut)
	return out, nil
}

// put sends body to the pre-signed URL, again after a failure while ctx lasts.
func (r *Responder) put(ctx context.Context, url string, body []byte) error {
	client := r.Client
	if client == nil {
		client = http.DefaultClient
	}
	var errs []error
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPut, url, bytes.NewReader(body))
		if err != nil {
			return err
		}
		// The pre-signed URL is signed without a content type (as cfn.Response.Send sends).
		res, err := client.Do(req)
		if err == nil {
			msg, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
			_ = res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("HTTP %d: %s", res.StatusCode, bytes.TrimSpace(msg))
			if res.StatusCode < 500 {
				return err // the URL refuses it: sending it again changes nothing
			}
		}
		errs = append(errs, err)
		select {
		case <-ctx.Done():
			return errors.Join(errs...)
		case <-time.After(min(time.Duration(attempt+1)*200*time.Millisecond, 2*time.Second)):
		}
	}
}

// truncated ends a Reason cut to fit.
const truncated = " … (truncated: the publish function's log has the whole message)"

// FitResponse encodes r as it is sent, within MaxResponseBytes: a Reason too long is cut (at
// a character, marked as cut), measured as encoded, escapes included. Should the response
// still not fit (Data too large), it becomes FAILED without Data, saying so.
func FitResponse(r *cfn.Response) ([]byte, error) {
	body, err := json.Marshal(r)
	if err != nil || len(body) <= MaxResponseBytes {
		return body, err
	}
	if r.Data != nil {
		over := len(body) - MaxResponseBytes
		r.Data = nil
		if r.Status == cfn.StatusSuccess {
			r.Status = cfn.StatusFailed
			r.Reason = fmt.Sprintf("sundial publish: the answer's Data is %d bytes over CloudFormation's %d-byte response limit", over, MaxResponseBytes)
		}
		if body, err = json.Marshal(r); err != nil || len(body) <= MaxResponseBytes {
			return body, err
		}
	}
	reason := r.Reason
	// The longest prefix whose encoding fits: the encoded size grows with the prefix.
	lo, hi := 0, len(reason)
	for lo < hi {
		mid := (lo + hi + 1) / 2
		r.Reason = cutAt(reason, mid) + truncated
		b, err := json.Marshal(r)
		if err != nil {
			return nil, err
		}
		if len(b) <= MaxResponseBytes {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	r.Reason = cutAt(reason, lo) + truncated
	body, err = json.Marshal(r)
	if err == nil && len(body) > MaxResponseBytes {
		return nil, fmt.Errorf("sundial publish: the response is %d bytes without its reason, over CloudFormation's %d", len(body), MaxResponseBytes)
	}
	return body, err
}

// cutAt is s's first n bytes, shortened to a whole character.
func cutAt(s string, n int) string {
	for n > 0 && n < len(s) && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
