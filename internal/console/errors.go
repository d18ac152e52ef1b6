package console

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/schedule"
	"github.com/sundialhq/sundial/internal/timer"
)

// statusOf maps the error kinds every layer shares to HTTP statuses.
func statusOf(err error) int {
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, timer.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, admin.ErrUsage), errors.Is(err, timer.ErrInvalid), errors.Is(err, schedule.ErrInvalid):
		return http.StatusBadRequest
	case errors.Is(err, timer.ErrChanged):
		return http.StatusConflict
	}
	return http.StatusInternalServerError
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
	s.writeAPIError(w, r, status, publicMessage(status, err))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
