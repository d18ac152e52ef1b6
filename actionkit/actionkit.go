// Package actionkit is for the authors of a timer's action: the payload Sundial sends when a
// timer fires, the answer it reads back, and handlers that decode the one and write the other,
// for an action that is a Lambda function and for one that is an HTTP endpoint.
//
// A Lambda action (with github.com/aws/aws-lambda-go):
//
//	func run(ctx context.Context, p actionkit.Payload) (Summary, error) { … }
//
//	func main() { lambda.Start(actionkit.Lambda(run)) }
//
// An HTTP action:
//
//	http.Handle("POST /digest", actionkit.HTTP(run))
//
// The answer is any value that encodes as a JSON object; Sundial keeps its first
// OutputMaxBytes in the execution's log (the execution's "output"). To choose the timer's next
// run (OutSystems' dynamic Next_Run), embed Result in it and set NextRun:
//
//	type Summary struct {
//		actionkit.Result
//		Sent int `json:"sent"`
//	}
//
// An error fails the execution (its text, up to 512 bytes, is the log's error) and the timer's
// retry policy applies.
//
// An async action (a timer with async: true) gets Payload.Async and a Token: it starts the
// work, answers at once, and reports the outcome later with the token through the public
// client package (github.com/sundialhq/sundial/client: Heartbeat, Complete, Fail). With the
// handlers here, the function checks p.Async, starts the work and returns; the HTTP handler
// then answers 202 Accepted, as Sundial expects of an async start.
//
// This package has no dependency outside the standard library: Lambda returns a value with
// aws-lambda-go's Handler method (Invoke), so lambda.Start takes it as it is.
package actionkit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/sundialhq/sundial/internal/actionspec"
)

// Payload is what a timer's action receives, as JSON: the body of the POST to an HTTP action,
// the event of a Lambda action. Its fields (their JSON names are a public contract):
//
//	App          string            "app"          the timer's app ("default" when none is named)
//	Timer        string            "timer"
//	Tenant       string            "tenant"
//	ScheduledAt  time.Time         "scheduledAt"  the firing's scheduled instant (UTC), the same for its retries
//	Attempt      int               "attempt"      1, then 2… for retries
//	ExecutionID  string            "executionId"  unique per attempt
//	Properties   map[string]string "properties"   the timer's properties, never nil
//	Async        bool              "async"        start the work and report later with Token
//	Token        string            "token"        an async execution's token (client.Complete…)
//	Backfill     bool              "backfill"     an instant of `sundial backfill`, re-run after the fact
//	Window       *Window           "window"       {from, to}: the span this run covers (below)
//	LastSuccessAt *time.Time       "lastSuccessAt" when the last successful run ended (nil before the first)
//	Trigger      string            "trigger"      why it runs: schedule, run-now, backfill, retry or wake
//	State        json.RawMessage   "state"        what the last successful run returned as its state (nil: none)
//	Parameters   map[string]any    "parameters"   the timer's declared parameters: defaults, a Run Now's overrides (ReadParams)
//
// Window.To is the run's scheduled instant; Window.From is the instant the last successful run
// was scheduled for, so a run after failures covers what they missed, or, on the first run
// and for a backfill run, the schedule's previous instant (its business calendar applied: a
// weekday timer's Monday run covers Friday to Monday). Read the state with ReadState; return
// the next one in Result.State. A payload from a Sundial before these fields has none of
// them (Window nil, Trigger ""), and an action that ignores them works unchanged.
//
// It is the very type Sundial's processor encodes (defined in Sundial's core, which must not
// import net/http, and named here for action authors).
type Payload = actionspec.Payload

// Window is the span of time a run covers (Payload.Window).
type Window = actionspec.Window

// StateMaxBytes bounds the state an answer hands on (compact JSON); a larger one fails the run.
const StateMaxBytes = 4096

// ReadState decodes the payload's state into v (a pointer) and reports whether there was
// one: false on the first run, after an operator's reset, or when no run returned a state.
func ReadState(p Payload, v any) (bool, error) {
	if len(p.State) == 0 || string(p.State) == "null" {
		return false, nil
	}
	if err := json.Unmarshal(p.State, v); err != nil {
		return false, fmt.Errorf("actionkit: decode the state of %s: %w", p.Timer, err)
	}
	return true, nil
}

// Result is the part of an action's answer Sundial acts on. Embed it in your own answer type
// (its fields join the answer's JSON object) or return it as it is.
type Result struct {
	// NextRun, when set, is the timer's next run instead of the one its schedule gives
	// (ignored for an async start and for a failed run). It is sent as RFC 3339.
	NextRun *time.Time `json:"nextRun,omitempty"`
	// State, when set, is handed to the timer's next run (its Payload.State): any value
	// that encodes as JSON within StateMaxBytes (a cursor, a watermark, a few ids). Unset,
	// the timer keeps the state it had; ClearState removes it. Only the run that owns the
	// timer sets it (a run that lost its lease is discarded), and a backfill run's is ignored.
	State any `json:"state,omitempty"`
	// Summary (at most 1 KB), Counters (name → number, e.g. "rows": 1200; names match
	// [A-Za-z][A-Za-z0-9_.-]{0,63}, at most 20) and Warnings say what the run did: they go
	// into its log entry, its event, the console's execution view and `sundial logs`, and an
	// alert rule may test a counter. Warnings make the outcome "success-with-warnings".
	Summary  string             `json:"summary,omitempty"`
	Counters map[string]float64 `json:"counters,omitempty"`
	Warnings []string           `json:"warnings,omitempty"`
}

// ClearState, as Result.State, removes the timer's state: the next run receives none.
var ClearState = json.RawMessage("null")

// OutputMaxBytes is how much of a successful action's answer Sundial keeps in the execution's
// log, as its "output": a longer answer is cut to fit and ends with OutputTruncated. The
// answer's headers are not kept.
const OutputMaxBytes = 1024

// OutputTruncated ends an output that was cut to OutputMaxBytes.
const OutputTruncated = "…[truncated]"

// PayloadMaxBytes bounds the payload the handlers read; Sundial's payloads are far smaller
// (the timer's properties are the bulk).
const PayloadMaxBytes = 1 << 20

// Func is an action: it runs one execution of a timer and returns its answer. T must encode as
// a JSON object (a struct, a map) for Sundial to read NextRun from it.
type Func[T any] func(ctx context.Context, p Payload) (T, error)

// Decode reads a payload, refusing anything that is not one: not JSON, not an object, trailing
// data, or a payload without its timer or execution id.
func Decode(b []byte) (Payload, error) {
	var p Payload
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&p); err != nil {
		return Payload{}, fmt.Errorf("actionkit: the payload is not Sundial's JSON object: %w", err)
	}
	if dec.More() {
		return Payload{}, errors.New("actionkit: the payload has data after its JSON object")
	}
	switch {
	case p.Timer == "":
		return Payload{}, errors.New(`actionkit: the payload has no "timer": it was not sent by Sundial`)
	case p.ExecutionID == "":
		return Payload{}, errors.New(`actionkit: the payload has no "executionId": it was not sent by Sundial`)
	case p.Async && p.Token == "":
		return Payload{}, errors.New(`actionkit: the payload is async but has no "token" to report with`)
	}
	if p.Properties == nil {
		p.Properties = map[string]string{}
	}
	return p, nil
}

// LambdaHandler runs a Func as a Lambda function; it implements aws-lambda-go's
// lambda.Handler, so lambda.Start(actionkit.Lambda(fn)) runs it.
type LambdaHandler[T any] struct{ fn Func[T] }

// Lambda wraps fn as a Lambda function handler.
func Lambda[T any](fn Func[T]) LambdaHandler[T] { return LambdaHandler[T]{fn: fn} }

// Invoke decodes the event, runs the action and encodes its answer. An error (a bad payload,
// the action's own) is the function's error: Sundial records the run as failed with its text.
func (h LambdaHandler[T]) Invoke(ctx context.Context, event []byte) ([]byte, error) {
	p, err := Decode(event)
	if err != nil {
		return nil, err
	}
	out, err := h.fn(ctx, p)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("actionkit: encode the answer of %s: %w", p.Timer, err)
	}
	return b, nil
}

// HTTPHandler runs a Func as an HTTP action.
type HTTPHandler[T any] struct{ fn Func[T] }

// HTTP wraps fn as an HTTP action: it takes POST requests whose body is the payload.
func HTTP[T any](fn Func[T]) HTTPHandler[T] { return HTTPHandler[T]{fn: fn} }

// ServeHTTP answers 405 to a method other than POST and 400 to a body that is not a payload;
// otherwise it runs the action with the request's context (cancelled when Sundial gives up on
// the call, at the timer's timeout). The action's error is a 500 with its text (Sundial keeps
// its first 512 bytes as the run's error); its answer is a 200 (202 for an async start) with
// the answer as JSON.
func (h HTTPHandler[T]) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "actionkit: a timer's action takes POST, not "+r.Method, http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, PayloadMaxBytes+1))
	if err != nil {
		http.Error(w, "actionkit: reading the payload: "+err.Error(), http.StatusBadRequest)
		return
	}
	if len(body) > PayloadMaxBytes {
		http.Error(w, fmt.Sprintf("actionkit: the payload is over %d bytes", PayloadMaxBytes), http.StatusRequestEntityTooLarge)
		return
	}
	p, err := Decode(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	out, err := h.fn(r.Context(), p)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	b, err := json.Marshal(out)
	if err != nil {
		http.Error(w, fmt.Sprintf("actionkit: encode the answer of %s: %v", p.Timer, err), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if p.Async {
		w.WriteHeader(http.StatusAccepted)
	}
	_, _ = w.Write(append(b, '\n'))
}
