// Package demoaction serves the example manifest's HTTP actions so `make run` works offline.
// It is written as any HTTP action can be, with the public actionkit package.
package demoaction

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/sundialhq/sundial/actionkit"
)

// answer is what the demo actions answer (kept in the execution's log as its output).
type answer struct {
	OK bool `json:"ok"`
}

// Handler serves:
//
//	POST /ok            200
//	POST /flaky         fails (500) on attempt 1, succeeds on a retry
//	POST /slow?ms=N     sleeps N ms (at most 10 min) then 200
//	POST /fail          always 500
func Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("POST /ok", actionkit.HTTP(func(context.Context, actionkit.Payload) (answer, error) {
		return answer{OK: true}, nil
	}))
	mux.Handle("POST /flaky", actionkit.HTTP(func(_ context.Context, p actionkit.Payload) (answer, error) {
		if p.Attempt == 1 {
			return answer{}, errors.New("downstream unavailable (the example fails every first attempt)")
		}
		return answer{OK: true}, nil
	}))
	mux.HandleFunc("POST /slow", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("ms"))
		actionkit.HTTP(func(ctx context.Context, _ actionkit.Payload) (answer, error) {
			select {
			case <-time.After(min(time.Duration(n)*time.Millisecond, 10*time.Minute)):
				return answer{OK: true}, nil
			case <-ctx.Done():
				return answer{}, ctx.Err()
			}
		}).ServeHTTP(w, r)
	})
	mux.Handle("POST /fail", actionkit.HTTP(func(context.Context, actionkit.Payload) (answer, error) {
		return answer{}, errors.New("this example action always fails")
	}))
	return mux
}
