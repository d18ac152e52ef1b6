// Package demoaction serves the example manifest's HTTP actions so `make run` works offline.
package demoaction

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/sundialhq/sundial/internal/actionspec"
)

// Handler serves:
//
//	POST /ok            200
//	POST /flaky         fails (500) on attempt 1, succeeds on a retry
//	POST /slow?ms=N     sleeps N ms (at most 10 min) then 200
//	POST /fail          always 500
func Handler() http.Handler {
	var calls atomic.Int64
	mux := http.NewServeMux()
	read := func(w http.ResponseWriter, r *http.Request) (actionspec.Payload, bool) {
		var p actionspec.Payload
		if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&p); err != nil {
			http.Error(w, "bad payload: "+err.Error(), http.StatusBadRequest)
			return p, false
		}
		calls.Add(1)
		return p, true
	}
	mux.HandleFunc("POST /ok", func(w http.ResponseWriter, r *http.Request) {
		if _, ok := read(w, r); ok {
			fmt.Fprintln(w, `{"ok":true}`)
		}
	})
	mux.HandleFunc("POST /flaky", func(w http.ResponseWriter, r *http.Request) {
		p, ok := read(w, r)
		if !ok {
			return
		}
		if p.Attempt == 1 {
			http.Error(w, "downstream unavailable (the example fails every first attempt)", http.StatusInternalServerError)
			return
		}
		fmt.Fprintln(w, `{"ok":true}`)
	})
	mux.HandleFunc("POST /slow", func(w http.ResponseWriter, r *http.Request) {
		if _, ok := read(w, r); !ok {
			return
		}
		n, _ := strconv.Atoi(r.URL.Query().Get("ms"))
		select {
		case <-time.After(min(time.Duration(n)*time.Millisecond, 10*time.Minute)):
			fmt.Fprintln(w, `{"ok":true}`)
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("POST /fail", func(w http.ResponseWriter, r *http.Request) {
		if _, ok := read(w, r); ok {
			http.Error(w, "this example action always fails", http.StatusInternalServerError)
		}
	})
	return mux
}
