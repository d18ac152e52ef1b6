package lambdarun

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
)

// Runtime API paths and headers (https://docs.aws.amazon.com/lambda/latest/dg/runtimes-api.html).
const (
	runtimeAPIPrefix      = "/2018-06-01/runtime"
	hdrRequestID          = "Lambda-Runtime-Aws-Request-Id"
	hdrDeadlineMs         = "Lambda-Runtime-Deadline-Ms"
	hdrFunctionARN        = "Lambda-Runtime-Invoked-Function-Arn"
	hdrTraceID            = "Lambda-Runtime-Trace-Id"
	hdrFunctionErrorType  = "Lambda-Runtime-Function-Error-Type"
	trailerErrorBody      = "Lambda-Runtime-Function-Error-Body"
	maxResponseBytes      = 6 * 1024 * 1024 // Lambda's synchronous response limit
	maxErrorBodyBytes     = 1024 * 1024
	errInvalidRequestID   = "InvalidRequestID"
	errInvalidStateChange = "InvalidStateTransition"
)

func (in *instance) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+runtimeAPIPrefix+"/invocation/next", in.handleNext)
	mux.HandleFunc("POST "+runtimeAPIPrefix+"/invocation/{id}/response", in.handleResponse)
	mux.HandleFunc("POST "+runtimeAPIPrefix+"/invocation/{id}/error", in.handleError)
	mux.HandleFunc("POST "+runtimeAPIPrefix+"/init/error", in.handleInitError)
	return mux
}

// handleNext ends init (first call) or the previous invocation, then blocks until an
// invocation is handed to this instance or the process is gone.
func (in *instance) handleNext(w http.ResponseWriter, r *http.Request) {
	in.readyOnce.Do(func() { close(in.ready) })
	in.mu.Lock()
	prev := in.cur
	in.cur = nil
	in.mu.Unlock()
	if prev != nil {
		prev.finish(result{err: &FunctionError{RequestID: prev.id, Type: ErrorTypeNoResponse,
			Message: "RequestId: " + prev.id + " Error: the runtime asked for the next invocation without answering this one"}})
	}
	var inv *invocation
	select {
	case inv = <-in.next:
	case <-r.Context().Done():
		return
	case <-in.exited:
		return
	}
	in.mu.Lock()
	in.cur = inv
	in.mu.Unlock()
	if in.beforeDeliver != nil {
		in.beforeDeliver(inv.id)
	}
	h := w.Header()
	h.Set(hdrRequestID, inv.id)
	h.Set(hdrDeadlineMs, strconv.FormatInt(inv.deadline.UnixMilli(), 10))
	h.Set(hdrFunctionARN, inv.arn)
	h.Set(hdrTraceID, inv.trace)
	h.Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write(inv.payload); err != nil {
		return
	}
	if http.NewResponseController(w).Flush() == nil {
		inv.delivered.Store(true)
	}
}

func (in *instance) handleResponse(w http.ResponseWriter, r *http.Request) {
	inv, ok := in.current(w, r)
	if !ok {
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxResponseBytes+1))
	var res result
	switch {
	case len(body) > maxResponseBytes:
		res.err = &FunctionError{RequestID: inv.id, Type: ErrorTypeResponseTooLarge,
			Message: "Response payload size exceeded maximum allowed payload size (6291456 bytes)."}
	case err != nil:
		res.err = &FunctionError{RequestID: inv.id, Type: "Runtime.InvalidResponse", Message: err.Error()}
	case r.Trailer.Get(hdrFunctionErrorType) != "":
		// A response body that failed mid-stream: aws-lambda-go reports the error in trailers.
		res.err = trailerError(inv.id, r.Trailer)
	default:
		res.body = body
	}
	if !inv.finish(res) {
		apiError(w, http.StatusForbidden, errInvalidStateChange, "invocation already answered")
		return
	}
	if len(body) > maxResponseBytes {
		apiError(w, http.StatusRequestEntityTooLarge, ErrorTypeResponseTooLarge, "response too large")
		return
	}
	accepted(w)
}

func (in *instance) handleError(w http.ResponseWriter, r *http.Request) {
	inv, ok := in.current(w, r)
	if !ok {
		return
	}
	fe := readFunctionError(r)
	fe.RequestID = inv.id
	if !inv.finish(result{err: fe}) {
		apiError(w, http.StatusForbidden, errInvalidStateChange, "invocation already answered")
		return
	}
	accepted(w)
}

// handleInitError takes the runtime's report that it cannot start; the invoker that waits
// for init gets it, and kills the process as Lambda does.
func (in *instance) handleInitError(w http.ResponseWriter, r *http.Request) {
	if in.isReady() {
		apiError(w, http.StatusForbidden, errInvalidStateChange, "init already completed")
		return
	}
	fe := readFunctionError(r)
	if fe.Type == "" {
		fe.Type = ErrorTypeInit
	}
	select {
	case in.initErr <- fe:
	default: // a second report changes nothing
	}
	accepted(w)
}

// current is the invocation the path names, if it is the one this instance is handling.
func (in *instance) current(w http.ResponseWriter, r *http.Request) (*invocation, bool) {
	in.mu.Lock()
	inv := in.cur
	in.mu.Unlock()
	if inv == nil || inv.id != r.PathValue("id") {
		apiError(w, http.StatusBadRequest, errInvalidRequestID, "unknown or stale request id "+r.PathValue("id"))
		return nil, false
	}
	return inv, true
}

// readFunctionError decodes {"errorType","errorMessage",...}; the type header wins when the
// body has none (a runtime may send any body).
func readFunctionError(r *http.Request) *FunctionError {
	body, _ := io.ReadAll(io.LimitReader(r.Body, maxErrorBodyBytes))
	var e struct {
		Type    string `json:"errorType"`
		Message string `json:"errorMessage"`
	}
	if json.Unmarshal(body, &e) != nil {
		e.Message = string(body)
	}
	if e.Type == "" {
		e.Type = r.Header.Get(hdrFunctionErrorType)
	}
	if e.Type == "" {
		e.Type = "Unhandled"
	}
	return &FunctionError{Type: e.Type, Message: e.Message}
}

func trailerError(id string, t http.Header) *FunctionError {
	fe := &FunctionError{RequestID: id, Type: t.Get(hdrFunctionErrorType)}
	if raw, err := base64.StdEncoding.DecodeString(t.Get(trailerErrorBody)); err == nil {
		var e struct {
			Message string `json:"errorMessage"`
		}
		_ = json.Unmarshal(raw, &e)
		fe.Message = e.Message
	}
	return fe
}

func accepted(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
	_, _ = w.Write([]byte(`{"status":"OK"}`))
}

func apiError(w http.ResponseWriter, code int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"errorType": typ, "errorMessage": msg})
}
