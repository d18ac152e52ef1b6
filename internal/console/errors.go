package console

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/timer"
)

// statusOf is the HTTP status of an error: its kind's (internal/errkind), or 413 for a body
// over the limit.
func statusOf(err error) int {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return http.StatusRequestEntityTooLarge
	}
	return errkind.HTTPStatus(err)
}

// publicMessage is what a client may see: the message of a client error, and a generic
// text for a server error (whose details go to the log).
func publicMessage(status int, err error) string {
	switch {
	case status == http.StatusRequestEntityTooLarge:
		return "request body too large"
	case status >= 500:
		return "internal error; the console's log has the details"
	}
	return err.Error()
}

type apiError struct {
	Error  string `json:"error"`
	Status int    `json:"status"`
	// Fields are each refused field of a request (a Run Now's parameters), when it has them.
	Fields []timer.ParamError `json:"fields,omitempty"`
}

func (s *Server) writeAPIError(w http.ResponseWriter, r *http.Request, status int, msg string) {
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="sundial"`)
	}
	writeJSON(w, status, apiError{Error: msg, Status: status})
}

func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error, page bool) {
	status := statusOf(err)
	if status >= 500 {
		s.log.Error("request failed", "method", r.Method, "path", r.URL.Path, "status", status, "error", err)
	}
	if page {
		s.renderError(w, r, status, publicMessage(status, err))
		return
	}
	var fields timer.ParamErrors
	if errors.As(err, &fields) && status < 500 {
		writeJSON(w, status, apiError{Error: publicMessage(status, err), Status: status, Fields: fields})
		return
	}
	s.writeAPIError(w, r, status, publicMessage(status, err))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
