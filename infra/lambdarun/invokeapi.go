package lambdarun

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Invoke API limits and headers (https://docs.aws.amazon.com/lambda/latest/api/API_Invoke.html).
const (
	invokePath           = "/2015-03-31/functions/{name}/invocations"
	hdrInvocationType    = "X-Amz-Invocation-Type"
	hdrFunctionError     = "X-Amz-Function-Error"
	hdrExecutedVersion   = "X-Amz-Executed-Version"
	hdrAmznRequestID     = "X-Amzn-Requestid"
	hdrAmznErrorType     = "X-Amzn-Errortype"
	maxSyncPayloadBytes  = 6 * 1024 * 1024 // RequestResponse request and response
	maxAsyncPayloadBytes = 1024 * 1024     // Event
	latest               = "$LATEST"
)

// InvokeAPI emulates Lambda's Invoke REST API (POST /2015-03-31/functions/{FunctionName}/invocations)
// for registered functions, so that a Lambda client pointed at it (BaseEndpoint) invokes them
// as it would on AWS; the AWS emulators cannot run functions. Any Invoker can be registered:
// an in-process Function or a ProcessFunction.
//
// As on Lambda:
//   - RequestResponse (the default) answers 200 with the function's response; a function error
//     answers 200 too, with X-Amz-Function-Error: Unhandled and an {"errorMessage",
//     "errorType"} payload.
//   - Event answers 202 at once and runs the function in the background; DryRun answers 204.
//   - An unknown function (or a qualifier other than $LATEST) answers 404
//     ResourceNotFoundException; a payload that is not JSON 400 InvalidRequestContentException;
//     a payload over 6 MB (Event: 1 MB) 413 RequestTooLargeException.
//   - A function name can be a name, a partial ARN (123456789012:function:NAME) or a full ARN,
//     with or without a :qualifier.
//   - An invocation runs to its end (or the function's timeout) even if the caller hangs up.
//
// Event invocations are handled as Lambda's asynchronous invocation queue handles them
// (https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-error-handling.html): after
// a function error the event is retried twice, 1 and then 2 minutes later (EventRetryDelays);
// an event older than its maximum age (6 hours, MaxEventAge) is dropped instead of run; and,
// the queue being at-least-once, an event is sometimes delivered twice
// (DuplicateProbability). A function's own AWS::Lambda::EventInvokeConfig (SetEventConfig)
// sets its retries and maximum age. EventStats counts what it did.
//
// Not emulated: request signing is not checked, asynchronous invocations have no
// destinations and are never throttled (so never kept back for hours: concurrency is not
// limited), and X-Amz-Log-Type: Tail returns no log.
type InvokeAPI struct {
	// Region and Account appear in ARNs of error messages (default us-east-1, 000000000000).
	Region, Account string
	Log             *slog.Logger // default: discard

	// EventRetryDelays are the waits before each retry of an Event invocation whose
	// function failed. nil: Lambda's, two retries 1 and 2 minutes apart
	// (DefaultEventRetryDelays); an empty slice: none (MaximumRetryAttempts 0). Tests shrink them.
	EventRetryDelays []time.Duration
	// MaxEventAge: an event not yet run this long after it was accepted is dropped, with a
	// warning (0: Lambda's default and maximum, 6 hours).
	MaxEventAge time.Duration
	// DuplicateProbability is the chance, 0..1, that an Event invocation is delivered a
	// second time, at once, as Lambda's queue occasionally does (0: never).
	DuplicateProbability float64

	// Fallback serves the invocations of functions not registered here (e.g. a reverse proxy
	// to `sam local start-lambda`); nil: they are answered 404 ResourceNotFoundException.
	Fallback http.Handler

	events EventStats

	mu     sync.RWMutex
	fns    map[string]Invoker
	async  map[string]EventConfig
	closed bool

	running sync.WaitGroup
	baseCtx context.Context
	cancel  context.CancelFunc

	mux *http.ServeMux
	srv *http.Server
	url string
}

// NewInvokeAPI returns an API with no function registered; Register adds them, Start serves
// (or use it as an http.Handler).
func NewInvokeAPI() *InvokeAPI {
	ctx, cancel := context.WithCancel(context.Background())
	a := &InvokeAPI{fns: map[string]Invoker{}, async: map[string]EventConfig{}, baseCtx: ctx, cancel: cancel, mux: http.NewServeMux()}
	a.mux.HandleFunc("POST "+invokePath, a.invoke)
	a.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		invokeAPIError(w, http.StatusNotFound, "UnknownOperationException", fmt.Sprintf("%s %s is not emulated: only Invoke is", r.Method, r.URL.Path))
	})
	return a
}

// functionNameRE is Lambda's rule for a function name.
var functionNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// Register serves fn under name (a plain function name, as Lambda's FunctionName).
func (a *InvokeAPI) Register(name string, fn Invoker) error {
	if !functionNameRE.MatchString(name) {
		return fmt.Errorf("lambdarun: invalid function name %q: want 1-64 letters, digits, - or _", name)
	}
	if fn == nil {
		return fmt.Errorf("lambdarun: function %q: nil invoker", name)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, dup := a.fns[name]; dup {
		return fmt.Errorf("lambdarun: function %q is already registered", name)
	}
	a.fns[name] = fn
	return nil
}

// EventConfig is a function's asynchronous invocation configuration, as its
// AWS::Lambda::EventInvokeConfig sets it
// (https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-configuring.html).
type EventConfig struct {
	// MaximumRetryAttempts: retries after a function error, 0..2 (the first of
	// EventRetryDelays are waited).
	MaximumRetryAttempts int
	// MaximumEventAge: an event not run this long after it was accepted is dropped
	// (0: MaxEventAge).
	MaximumEventAge time.Duration
}

// SetEventConfig applies c to the Event invocations of the function registered as name.
func (a *InvokeAPI) SetEventConfig(name string, c EventConfig) error {
	if c.MaximumRetryAttempts < 0 || c.MaximumRetryAttempts > 2 {
		return fmt.Errorf("lambdarun: function %q: MaximumRetryAttempts %d: want 0..2", name, c.MaximumRetryAttempts)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.fns[name]; !ok {
		return fmt.Errorf("lambdarun: function %q is not registered", name)
	}
	a.async[name] = c
	return nil
}

// Start serves the API on addr ("127.0.0.1:0" for any free port) and returns its base URL,
// the Lambda client's BaseEndpoint.
func (a *InvokeAPI) Start(addr string) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("lambdarun: invoke API: %w", err)
	}
	a.srv = &http.Server{Handler: a, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = a.srv.Serve(ln) }()
	a.url = "http://" + ln.Addr().String()
	return a.url, nil
}

// URL is the base URL Start serves on ("" before Start).
func (a *InvokeAPI) URL() string { return a.url }

// Close stops accepting invocations and waits until those in flight, asynchronous ones
// included, have ended; past ctx's deadline their contexts are cancelled and Close returns
// once they returned.
func (a *InvokeAPI) Close(ctx context.Context) error {
	a.mu.Lock()
	a.closed = true
	a.mu.Unlock()
	var err error
	if a.srv != nil {
		err = a.srv.Shutdown(ctx) // waits for synchronous invocations
	}
	done := make(chan struct{})
	go func() {
		a.running.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		a.cancel()
		if a.srv != nil {
			_ = a.srv.Close()
		}
		<-done
	}
	a.cancel()
	return err
}

// ServeHTTP serves the Invoke operation; any other request is answered as Lambda answers an
// unknown operation.
func (a *InvokeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) { a.mux.ServeHTTP(w, r) }

func (a *InvokeAPI) invoke(w http.ResponseWriter, r *http.Request) {
	id := newRequestID()
	w.Header().Set(hdrAmznRequestID, id)
	name, qualifier, err := parseFunctionName(r.PathValue("name"))
	if err != nil {
		invokeAPIError(w, http.StatusBadRequest, "InvalidParameterValueException", err.Error())
		return
	}
	if q := r.URL.Query().Get("Qualifier"); q != "" {
		qualifier = q
	}
	a.mu.RLock()
	fn, ok := a.fns[name]
	closed := a.closed
	a.mu.RUnlock()
	if qualifier != "" && qualifier != latest {
		ok = false
		name += ":" + qualifier
	}
	if !ok && a.Fallback != nil {
		w.Header().Del(hdrAmznRequestID)
		a.Fallback.ServeHTTP(w, r)
		return
	}
	if !ok {
		invokeAPIError(w, http.StatusNotFound, "ResourceNotFoundException", "Function not found: "+a.arn(name))
		return
	}
	if closed {
		invokeAPIError(w, http.StatusServiceUnavailable, "ServiceException", "the local Lambda service is shutting down")
		return
	}
	kind := r.Header.Get(hdrInvocationType)
	limit := maxSyncPayloadBytes
	switch kind {
	case "", "RequestResponse", "DryRun":
	case "Event":
		limit = maxAsyncPayloadBytes
	default:
		invokeAPIError(w, http.StatusBadRequest, "InvalidParameterValueException",
			fmt.Sprintf("invalid InvocationType %q: want RequestResponse, Event or DryRun", kind))
		return
	}
	payload, err := io.ReadAll(io.LimitReader(r.Body, int64(limit)+1))
	if err != nil {
		invokeAPIError(w, http.StatusBadRequest, "InvalidRequestContentException", "could not read the request body: "+err.Error())
		return
	}
	if len(payload) > limit {
		invokeAPIError(w, http.StatusRequestEntityTooLarge, "RequestTooLargeException",
			fmt.Sprintf("Request must be smaller than %d bytes for the Invoke operation", limit))
		return
	}
	if len(payload) == 0 {
		payload = []byte("{}") // Lambda hands an invocation without payload an empty object
	}
	if !json.Valid(payload) {
		invokeAPIError(w, http.StatusBadRequest, "InvalidRequestContentException", "Could not parse request body into json")
		return
	}
	w.Header().Set(hdrExecutedVersion, latest)
	switch kind {
	case "DryRun":
		w.WriteHeader(http.StatusNoContent)
	case "Event":
		a.mu.Lock() // Add only while not closed: Close's Wait must not race a late Add
		if a.closed {
			a.mu.Unlock()
			invokeAPIError(w, http.StatusServiceUnavailable, "ServiceException", "the local Lambda service is shutting down")
			return
		}
		deliveries := 1
		if p := a.DuplicateProbability; p > 0 && mrand.Float64() < p {
			deliveries = 2
			a.events.Duplicated.Add(1)
		}
		a.running.Add(deliveries)
		a.events.Pending.Add(int64(deliveries))
		cfg, configured := a.async[name]
		a.mu.Unlock()
		accepted := time.Now()
		for range deliveries {
			go func() {
				defer a.running.Done()
				defer a.events.Pending.Add(-1)
				var c *EventConfig
				if configured {
					c = &cfg
				}
				a.runEvent(fn, name, id, payload, accepted, c)
			}()
		}
		w.WriteHeader(http.StatusAccepted)
	default:
		// Detached from the caller's connection, as on Lambda: the function runs on when the
		// caller gives up; only Close cancels it.
		ctx, stop := context.WithCancel(a.baseCtx)
		defer stop()
		began := time.Now()
		out, err := a.run(ctx, fn, id, payload)
		if err == nil && len(out) > maxSyncPayloadBytes {
			err = &FunctionError{Function: name, RequestID: id, Type: ErrorTypeResponseTooLarge,
				Message: fmt.Sprintf("Response payload size (%d bytes) exceeded maximum allowed payload size (%d bytes).", len(out), maxSyncPayloadBytes)}
		}
		if errors.Is(err, ErrStopped) {
			invokeAPIError(w, http.StatusServiceUnavailable, "ServiceException", "the function stopped: "+err.Error())
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if err != nil {
			typ, msg := describeError(fn, err, time.Since(began))
			w.Header().Set(hdrFunctionError, "Unhandled")
			out, _ = json.Marshal(map[string]string{"errorMessage": msg, "errorType": typ})
		}
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(out)
	}
}

// DefaultEventRetryDelays are Lambda's retries of a failed Event invocation: two, after 1 and
// then 2 more minutes.
var DefaultEventRetryDelays = []time.Duration{time.Minute, 2 * time.Minute}

// DefaultMaxEventAge is how long Lambda keeps an Event invocation by default (and at most).
const DefaultMaxEventAge = 6 * time.Hour

// EventStats counts what the emulated asynchronous queue did.
type EventStats struct {
	Retried    atomic.Int64 // runs after a function error
	Duplicated atomic.Int64 // events delivered twice
	Expired    atomic.Int64 // events dropped at their maximum age
	Failed     atomic.Int64 // events whose last run failed (Lambda discards them without a destination)
	Pending    atomic.Int64 // deliveries accepted and not over: running, or waiting for a retry
}

// EventStats returns the asynchronous queue's counters.
func (a *InvokeAPI) EventStats() *EventStats { return &a.events }

// runEvent runs one delivery of an Event invocation and its retries after function errors,
// each only while the event is younger than its maximum age; cfg, when set, is the
// function's own configuration.
func (a *InvokeAPI) runEvent(fn Invoker, name, id string, payload []byte, accepted time.Time, cfg *EventConfig) {
	delays := a.EventRetryDelays
	if delays == nil {
		delays = DefaultEventRetryDelays
	}
	maxAge := a.MaxEventAge
	if maxAge <= 0 {
		maxAge = DefaultMaxEventAge
	}
	if cfg != nil {
		delays = delays[:min(cfg.MaximumRetryAttempts, len(delays))]
		if cfg.MaximumEventAge > 0 {
			maxAge = cfg.MaximumEventAge
		}
	}
	log := a.log().With("function", name, "request_id", id)
	for attempt := 0; ; attempt++ {
		if age := time.Since(accepted); age > maxAge {
			a.events.Expired.Add(1)
			log.Warn("asynchronous invocation dropped: older than its maximum event age", "age", age.String(), "max_age", maxAge.String())
			return
		}
		if attempt > 0 {
			a.events.Retried.Add(1)
		}
		_, err := a.run(a.baseCtx, fn, id, payload)
		if err == nil || errors.Is(err, ErrStopped) || a.baseCtx.Err() != nil {
			return
		}
		if attempt == len(delays) {
			a.events.Failed.Add(1)
			log.Warn("asynchronous invocation failed after its retries; discarded (no destination)", "attempts", attempt+1, "error", err)
			return
		}
		log.Warn("asynchronous invocation failed; Lambda retries it", "attempt", attempt+1, "retry_in", delays[attempt].String(), "error", err)
		select {
		case <-time.After(delays[attempt]):
		case <-a.baseCtx.Done():
			return
		}
	}
}

// run invokes fn, turning a panic in an in-process handler into a function error (Lambda
// reports it as the invocation's error; it must not take the platform down).
func (a *InvokeAPI) run(ctx context.Context, fn Invoker, id string, payload []byte) (out []byte, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &FunctionError{RequestID: id, Type: "Runtime.Panic", Message: fmt.Sprint(v)}
		}
	}()
	return fn.Invoke(ctx, id, payload)
}

// describeError is the errorType and errorMessage Lambda would report for err, after the
// invocation ran for took: those of a FunctionError (a process function, or a service error),
// a timeout's when an in-process function gave up at its timeout, else the Go error's type
// name and message as aws-lambda-go reports a handler's error.
func describeError(fn Invoker, err error, took time.Duration) (typ, msg string) {
	if fe, ok := errors.AsType[*FunctionError](err); ok {
		return fe.Type, fe.Message
	}
	if f, ok := fn.(Function); ok {
		if errors.Is(err, context.DeadlineExceeded) && took >= f.Timeout {
			// The handler gave up at the function's timeout: on Lambda the sandbox would have
			// been stopped there, and the error says so.
			return ErrorTypeTimeout, fmt.Sprintf("Task timed out after %.2f seconds", f.Timeout.Seconds())
		}
		// Function.Invoke prefixes the handler's error with the function's name.
		if inner := errors.Unwrap(err); inner != nil {
			err = inner
		}
	}
	t := reflect.TypeOf(err)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Name(), err.Error()
}

// parseFunctionName accepts what Lambda's FunctionName does: NAME, NAME:QUALIFIER,
// ACCOUNT:function:NAME[:QUALIFIER] and arn:PARTITION:lambda:REGION:ACCOUNT:function:NAME[:QUALIFIER].
func parseFunctionName(s string) (name, qualifier string, err error) {
	parts := strings.Split(s, ":")
	switch {
	case len(parts) >= 7 && parts[0] == "arn" && parts[2] == "lambda" && parts[5] == "function":
		parts = parts[6:]
	case len(parts) >= 3 && parts[1] == "function":
		parts = parts[2:]
	}
	if len(parts) > 2 || !functionNameRE.MatchString(parts[0]) || (len(parts) == 2 && parts[1] == "") {
		return "", "", fmt.Errorf("invalid FunctionName %q: want a name, a partial ARN or an ARN", s)
	}
	if len(parts) == 2 {
		qualifier = parts[1]
	}
	return parts[0], qualifier, nil
}

func (a *InvokeAPI) arn(name string) string {
	region, account := a.Region, a.Account
	if region == "" {
		region = "us-east-1"
	}
	if account == "" {
		account = "000000000000"
	}
	return fmt.Sprintf("arn:aws:lambda:%s:%s:function:%s", region, account, name)
}

func (a *InvokeAPI) log() *slog.Logger {
	if a.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return a.Log
}

// invokeAPIError answers as Lambda's REST API does: the error code in X-Amzn-ErrorType, and a JSON
// body with the type of fault and the message.
func invokeAPIError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set(hdrAmznErrorType, code)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	kind := "User"
	if status >= 500 {
		kind = "Service"
	}
	b, _ := json.Marshal(map[string]string{"Type": kind, "message": msg})
	_, _ = w.Write(b)
}

// newRequestID is a random UUID (version 4), the form of Lambda's request ids.
func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
