package orders

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Always makes FailOrder fail an order's every push.
const Always = -1

// ThirdParty is a local stand-in for the system orders are pushed to: it accepts orders POSTed
// to /orders, records every request (so a test or a demo can prove each order arrived exactly
// once), and fails on demand — every push, one order's next N pushes, or a random share —
// through its Go API or its HTTP control endpoint.
//
//	POST /orders                       an order (JSON); 200 accepted, 503 when told to fail
//	POST /control?fail=all|none        fail every push / none (clears every failure setting)
//	POST /control?order=7&times=2      fail order 7's next 2 pushes (times=always: every one)
//	POST /control?rate=0.3             fail 30% of pushes at random
//	GET  /control                      the failure settings
//	GET  /received[?order=7]           every request received, in order
//	GET  /stats                        counts: requests, accepted, refused, duplicates
type ThirdParty struct {
	// Now stamps receipts; default time.Now.
	Now func() time.Time

	mu        sync.Mutex
	failAll   bool
	failOrder map[int64]int // pushes still to fail; Always: every one
	failRate  float64
	rnd       *rand.Rand
	receipts  []Receipt
	accepted  map[int64]int

	srv *http.Server
	url string
}

// Receipt is one push request as the third party saw it.
type Receipt struct {
	OrderID    int64     `json:"orderId"`
	OrderState int       `json:"orderState"`
	At         time.Time `json:"at"`
	Accepted   bool      `json:"accepted"`
	Status     int       `json:"status"`
	// Duplicate: accepted although the same order was accepted before (same Idempotency-Key).
	Duplicate      bool   `json:"duplicate,omitempty"`
	IdempotencyKey string `json:"idempotencyKey"`
	Timer          string `json:"timer,omitempty"`
	Execution      string `json:"executionId,omitempty"`
	Shard          string `json:"shard,omitempty"`
	Attempt        int    `json:"attempt,omitempty"`
	Order          Order  `json:"order"`
}

// Stats counts the requests.
type Stats struct {
	Requests   int `json:"requests"`
	Accepted   int `json:"accepted"`
	Refused    int `json:"refused"`
	Duplicates int `json:"duplicates"`
	Orders     int `json:"orders"` // distinct orders accepted
}

// Failures are the failure settings.
type Failures struct {
	All   bool          `json:"all"`
	Rate  float64       `json:"rate"`
	Order map[int64]int `json:"order"` // pushes still to fail by order id; -1: every one
}

// NewThirdParty returns a third party that accepts everything; seed drives the random failure rate.
func NewThirdParty(seed uint64) *ThirdParty {
	return &ThirdParty{failOrder: map[int64]int{}, accepted: map[int64]int{}, rnd: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// Start serves on addr ("127.0.0.1:0": any free port) and returns the base URL; orders go
// to PushURL.
func (tp *ThirdParty) Start(addr string) (string, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("third party: %w", err)
	}
	tp.srv = &http.Server{Handler: tp.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = tp.srv.Serve(ln) }()
	tp.url = "http://" + ln.Addr().String()
	return tp.url, nil
}

// URL is the base URL ("" before Start).
func (tp *ThirdParty) URL() string { return tp.url }

// PushURL is where orders are pushed: the `endpoint` property of the timers.
func (tp *ThirdParty) PushURL() string { return tp.url + "/orders" }

// Close stops serving: it lets requests in flight finish (up to 5 s), then closes what is
// left. A connection a client dialled and never used (Go's transport may dial one for a
// request that then takes an idle connection) counts for Shutdown until it is 5 s old, and
// under load that held Close past its 5 s; such connections carry no request, so they are
// closed rather than reported.
func (tp *ThirdParty) Close() error {
	if tp.srv == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := tp.srv.Shutdown(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return tp.srv.Close()
}

// FailAll makes every push fail (true) or not (false, the other settings stay).
func (tp *ThirdParty) FailAll(on bool) {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	tp.failAll = on
}

// FailOrder makes the next times pushes of order id fail (Always: every one; 0 clears it).
func (tp *ThirdParty) FailOrder(id int64, times int) {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	if times == 0 {
		delete(tp.failOrder, id)
		return
	}
	tp.failOrder[id] = times
}

// FailRate makes a share rate (0..1) of the pushes fail at random.
func (tp *ThirdParty) FailRate(rate float64) error {
	if !(rate >= 0 && rate <= 1) {
		return fmt.Errorf("failure rate %v: want 0..1", rate)
	}
	tp.mu.Lock()
	defer tp.mu.Unlock()
	tp.failRate = rate
	return nil
}

// FailNone clears every failure setting.
func (tp *ThirdParty) FailNone() {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	tp.failAll, tp.failRate = false, 0
	clear(tp.failOrder)
}

// Failures returns the failure settings.
func (tp *ThirdParty) Failures() Failures {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	f := Failures{All: tp.failAll, Rate: tp.failRate, Order: map[int64]int{}}
	for id, n := range tp.failOrder {
		f.Order[id] = n
	}
	return f
}

// Receipts returns every request received so far, in order.
func (tp *ThirdParty) Receipts() []Receipt {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	return slices.Clone(tp.receipts)
}

// Accepted returns how many times each order was accepted (more than once is a duplicate).
func (tp *ThirdParty) Accepted() map[int64]int {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	out := make(map[int64]int, len(tp.accepted))
	for id, n := range tp.accepted {
		out[id] = n
	}
	return out
}

// Stats counts the requests so far.
func (tp *ThirdParty) Stats() Stats {
	tp.mu.Lock()
	defer tp.mu.Unlock()
	s := Stats{Requests: len(tp.receipts), Orders: len(tp.accepted)}
	for _, r := range tp.receipts {
		switch {
		case r.Duplicate:
			s.Accepted++
			s.Duplicates++
		case r.Accepted:
			s.Accepted++
		default:
			s.Refused++
		}
	}
	return s
}

// Handler serves the endpoints listed on ThirdParty.
func (tp *ThirdParty) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /orders", tp.receive)
	mux.HandleFunc("POST /control", tp.control)
	mux.HandleFunc("GET /control", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusOK, tp.Failures()) })
	mux.HandleFunc("GET /received", func(w http.ResponseWriter, r *http.Request) {
		rs := tp.Receipts()
		if v := r.URL.Query().Get("order"); v != "" {
			id, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				writeJSON(w, http.StatusBadRequest, map[string]string{"error": fmt.Sprintf("order %q: want an order id", v)})
				return
			}
			rs = slices.DeleteFunc(rs, func(r Receipt) bool { return r.OrderID != id })
		}
		writeJSON(w, http.StatusOK, rs)
	})
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusOK, tp.Stats()) })
	return mux
}

func (tp *ThirdParty) receive(w http.ResponseWriter, r *http.Request) {
	var o Order
	if err := json.NewDecoder(io.LimitReader(r.Body, 64<<10)).Decode(&o); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "not an order: " + err.Error()})
		return
	}
	attempt, _ := strconv.Atoi(r.Header.Get(HeaderAttempt))
	rc := Receipt{OrderID: o.ID, OrderState: o.State, At: tp.now(), IdempotencyKey: r.Header.Get(HeaderIdempotencyKey),
		Timer: r.Header.Get(HeaderTimer), Execution: r.Header.Get(HeaderExecution), Shard: r.Header.Get(HeaderShard),
		Attempt: attempt, Order: o}

	tp.mu.Lock()
	fail := tp.failAll
	if n := tp.failOrder[o.ID]; !fail && n != 0 {
		fail = true
		if n > 0 {
			if n == 1 {
				delete(tp.failOrder, o.ID)
			} else {
				tp.failOrder[o.ID] = n - 1
			}
		}
	}
	if !fail && tp.failRate > 0 && tp.rnd.Float64() < tp.failRate {
		fail = true
	}
	if fail {
		rc.Status = http.StatusServiceUnavailable
	} else {
		rc.Status, rc.Accepted = http.StatusOK, true
		rc.Duplicate = tp.accepted[o.ID] > 0
		tp.accepted[o.ID]++
	}
	tp.receipts = append(tp.receipts, rc)
	tp.mu.Unlock()

	if fail {
		writeJSON(w, rc.Status, map[string]string{"error": fmt.Sprintf("order %d refused: the third party is told to fail", o.ID)})
		return
	}
	// An idempotent receiver: a repeat is acknowledged like the first push, and counted.
	writeJSON(w, http.StatusOK, map[string]any{"accepted": true, "duplicate": rc.Duplicate})
}

// control applies ?fail=all|none, ?order=ID[&times=N|always], ?rate=R.
func (tp *ThirdParty) control(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var errs []error
	if len(q) == 0 {
		errs = append(errs, errors.New("nothing to do: use fail=all|none, order=ID[&times=N|always] or rate=0..1"))
	}
	for k := range q {
		if k != "fail" && k != "order" && k != "times" && k != "rate" {
			errs = append(errs, fmt.Errorf("unknown parameter %q: use fail=all|none, order=ID[&times=N|always] or rate=0..1", k))
		}
	}
	if q.Has("times") && !q.Has("order") {
		errs = append(errs, errors.New("times needs order=ID"))
	}
	var apply []func()
	if q.Has("fail") {
		switch v := q.Get("fail"); v {
		case "all":
			apply = append(apply, func() { tp.FailAll(true) })
		case "none":
			apply = append(apply, tp.FailNone)
		default:
			errs = append(errs, fmt.Errorf("fail=%q: want all or none", v))
		}
	}
	if q.Has("order") {
		id, err := strconv.ParseInt(q.Get("order"), 10, 64)
		if err != nil {
			errs = append(errs, fmt.Errorf("order=%q: want an order id", q.Get("order")))
		}
		times := 1
		if v := q.Get("times"); v == "always" {
			times = Always
		} else if v != "" {
			if times, err = strconv.Atoi(v); err != nil || times < 0 {
				errs = append(errs, fmt.Errorf("times=%q: want a count >= 0 or always", v))
			}
		}
		apply = append(apply, func() { tp.FailOrder(id, times) })
	}
	if q.Has("rate") {
		rate, err := strconv.ParseFloat(q.Get("rate"), 64)
		if err != nil || !(rate >= 0 && rate <= 1) {
			errs = append(errs, fmt.Errorf("rate=%q: want a number 0..1", q.Get("rate")))
		}
		apply = append(apply, func() { _ = tp.FailRate(rate) })
	}
	if len(errs) > 0 {
		msgs := make([]string, len(errs))
		for i, e := range errs {
			msgs[i] = e.Error()
		}
		slices.Sort(msgs)
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": strings.Join(msgs, "; ")})
		return
	}
	for _, f := range apply {
		f()
	}
	writeJSON(w, http.StatusOK, tp.Failures())
}

func (tp *ThirdParty) now() time.Time {
	if tp.Now != nil {
		return tp.Now()
	}
	return time.Now()
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
