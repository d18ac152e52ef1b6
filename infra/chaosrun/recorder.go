// Package chaosrun is Sundial's chaos test: many timers on second-level schedules run on the
// local platform with every function as processes of its built bootstrap, while processor
// processes are killed mid-execution, SQS messages are duplicated, DynamoDB and SQS calls are
// throttled or fail with 5xx (internal/chaos) and the processes' clocks are skewed. Then the
// invariants of shared/design.md are checked from the log table and from a recording action
// server (check.go says exactly what is checked, and what counts as lost).
package chaosrun

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/sundialhq/sundial/client"
	"github.com/sundialhq/sundial/internal/action"
)

// Call is one invocation of an action, as the action server saw it.
type Call struct {
	Timer       string
	ExecutionID string
	ScheduledAt time.Time
	Attempt     int
	Start, End  time.Time // on this machine's clock, which no chaos skews
	Status      int
	// Gone: the caller hung up before the answer (its processor was killed, or timed out).
	Gone bool
	// Async: an async start (answered 202 at once), with what its worker did; End is when
	// the worker stopped working, Status 200 if its Complete was accepted, 500 its Fail.
	Async *AsyncCall
}

// Recorder is the timers' action server. POST /act runs an action: it sleeps between the
// query's min and max milliseconds, fails (HTTP 500) with probability fail, and with
// probability next answers a dynamic next run ({"nextRun": now + 3 s}). Every draw is a
// function of the seed and the execution, so a rerun behaves the same. An action whose
// caller hangs up runs on to its end, as a real service would. An async start (the payload's
// "async") is accepted at once and worked on by a goroutine that heartbeats and reports
// through the client package (async.go).
type Recorder struct {
	URL string

	// OnStart, if set, is called as a synchronous action starts (before it sleeps); it must
	// not block.
	OnStart func()

	seed uint64
	srv  *http.Server
	mu   sync.Mutex
	log  []Call

	client  *client.Client
	ready   chan struct{} // closed by SetClient
	quiet   bool          // Quiesce
	pending int           // async workers going
	starts  int           // async starts accepted, for lateEvery
}

// StartRecorder serves on a free 127.0.0.1 port.
func StartRecorder(seed uint64) (*Recorder, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &Recorder{URL: "http://" + ln.Addr().String(), seed: seed, ready: make(chan struct{})}
	r.srv = &http.Server{Handler: r, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = r.srv.Serve(ln) }()
	return r, nil
}

// Close stops the server.
func (r *Recorder) Close() error { return r.srv.Close() }

// Calls returns every call so far, by start time.
func (r *Recorder) Calls() []Call {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := slices.Clone(r.log)
	for i, c := range out {
		if c.Async != nil { // a copy: a worker may still be writing its own
			a := *c.Async
			out[i].Async = &a
		}
	}
	slices.SortFunc(out, func(a, b Call) int { return a.Start.Compare(b.Start) })
	return out
}

// InFlight is how many actions are running now (async workers included).
func (r *Recorder) InFlight() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.pending
	for _, c := range r.log {
		if c.End.IsZero() && c.Async == nil {
			n++
		}
	}
	return n
}

func (r *Recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	var p action.Payload
	if req.Method != http.MethodPost || req.URL.Path != "/act" || json.NewDecoder(io.LimitReader(req.Body, 1<<16)).Decode(&p) != nil {
		http.Error(w, "want POST /act with an action payload", http.StatusBadRequest)
		return
	}
	start := time.Now()
	r.mu.Lock()
	i := len(r.log)
	r.log = append(r.log, Call{Timer: p.Timer, ExecutionID: p.ExecutionID, ScheduledAt: p.ScheduledAt, Attempt: p.Attempt, Start: start})
	onStart := r.OnStart
	r.mu.Unlock()
	if p.Async {
		r.startAsync(i, p, start)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	// Only a synchronous action's start freezes: its processor waits for it, holding the
	// lease, and must wake as a zombie. An async start answers at once (a CI run whose one
	// freeze came at an async start froze a processor holding nothing, and saw no zombie).
	if onStart != nil {
		onStart()
	}

	q := req.URL.Query()
	lo, _ := strconv.Atoi(q.Get("min"))
	hi, _ := strconv.Atoi(q.Get("max"))
	fail, _ := strconv.ParseFloat(q.Get("fail"), 64)
	next, _ := strconv.ParseFloat(q.Get("next"), 64)
	sleep := time.Duration(lo) * time.Millisecond
	if hi > lo {
		sleep += time.Duration(r.draw(p.ExecutionID, "sleep")*float64(hi-lo)) * time.Millisecond
	}
	if q.Get("hangup") == "stop" {
		// An action that stops when its caller hangs up, as cancel-other needs of its
		// actions (the processor cancels the call at the next instant): its call ends then.
		select {
		case <-time.After(sleep):
		case <-req.Context().Done():
		}
	} else {
		time.Sleep(sleep) // not cut short when the caller hangs up
	}
	status, body := http.StatusOK, `{"ok":true}`
	switch {
	case r.draw(p.ExecutionID, "fail") < fail:
		status, body = http.StatusInternalServerError, `{"error":"chaos: this action fails sometimes"}`
	case r.draw(p.ExecutionID, "next") < next:
		body = fmt.Sprintf(`{"nextRun":%q}`, time.Now().UTC().Add(3*time.Second).Truncate(time.Millisecond).Format(time.RFC3339Nano))
	}
	gone := req.Context().Err() != nil
	r.mu.Lock()
	r.log[i].End, r.log[i].Status, r.log[i].Gone = time.Now(), status, gone
	r.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

// draw is a number in [0, 1) that depends only on the seed, the execution and what it is for.
func (r *Recorder) draw(executionID, what string) float64 {
	h := fnv.New64a()
	_, _ = fmt.Fprintf(h, "%d/%s/%s", r.seed, executionID, what)
	return float64(h.Sum64()>>11) / float64(1<<53)
}
