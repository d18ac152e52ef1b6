package local

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/sundialhq/sundial/internal/timer"
)

// eventRelay receives the events the functions put on EventBridge (the gateway's emulated
// PutEvents): it prints a line for each to the platform's output and, with
// Options.EventsTo, POSTs each event's whole JSON there as an EventBridge API destination
// does (Content-Type application/json; a 5xx, 429 or unreachable receiver is retried with
// backoff, another 4xx is not), one at a time in the order they were put.
type eventRelay struct {
	out    io.Writer
	mu     *sync.Mutex // the execution lines' (one line at a time)
	to     string
	log    *slog.Logger
	client *http.Client
	queue  chan []byte
	done   chan struct{}
	once   sync.Once
}

// CheckEventsTo validates Options.EventsTo.
func CheckEventsTo(to string) error {
	if to == "" {
		return nil
	}
	u, err := url.Parse(to)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("events-to %q: want an absolute http:// or https:// URL (the receiver of the events, as an API destination's endpoint)", to)
	}
	return nil
}

func newEventRelay(out io.Writer, mu *sync.Mutex, to string, log *slog.Logger) *eventRelay {
	r := &eventRelay{out: out, mu: mu, to: to, log: log, client: &http.Client{Timeout: 5 * time.Second}}
	if to != "" {
		r.queue, r.done = make(chan []byte, 10000), make(chan struct{})
		go r.post()
	}
	return r
}

// event is the sink the gateway calls for each event put.
func (r *eventRelay) event(bus string, ev []byte) {
	var e struct {
		DetailType string `json:"detail-type"`
		Time       string `json:"time"`
		Detail     struct {
			App, Timer, Tenant, Outcome, Rule, Error string
			ExecutionID                              string `json:"executionId"`
			Attempt                                  int
		} `json:"detail"`
	}
	_ = json.Unmarshal(ev, &e)
	name := e.Detail.Timer
	if e.Detail.App != "" && e.Detail.App != timer.DefaultApp {
		name = e.Detail.App + ":" + name // as timer.Key.String writes it
	}
	if e.Detail.Tenant != "" {
		name += "@" + e.Detail.Tenant
	}
	line := fmt.Sprintf("%s event %-20s %s", time.Now().UTC().Format("15:04:05.000"), e.DetailType, name)
	if e.Detail.Rule != "" {
		line += " rule " + e.Detail.Rule
	}
	if e.Detail.ExecutionID != "" {
		line += fmt.Sprintf(" execution %s attempt %d", e.Detail.ExecutionID, e.Detail.Attempt)
	}
	if e.Detail.Error != "" {
		line += "  error: " + oneLine(e.Detail.Error)
	}
	r.mu.Lock()
	fmt.Fprintln(r.out, line)
	r.mu.Unlock()
	if r.queue != nil {
		select {
		case r.queue <- ev:
		default:
			r.log.Error("events-to: 10,000 events waiting for the receiver; event not sent", "url", r.to, "bus", bus, "event", string(ev))
		}
	}
}

func (r *eventRelay) post() {
	defer close(r.done)
	for ev := range r.queue {
		for attempt := 1; ; attempt++ {
			status, err := r.send(ev)
			if err == nil && status < 300 {
				break
			}
			retry := err != nil || status >= 500 || status == http.StatusTooManyRequests
			if !retry || attempt == 5 {
				r.log.Error("events-to: the receiver did not take the event", "url", r.to, "status", status, "error", err, "attempts", attempt, "event", string(ev))
				break
			}
			time.Sleep(time.Duration(attempt) * 200 * time.Millisecond)
		}
	}
}

func (r *eventRelay) send(ev []byte) (int, error) {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, r.to, bytes.NewReader(ev))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := r.client.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode, nil
}

// close sends what is queued and stops.
func (r *eventRelay) close() {
	if r == nil || r.queue == nil {
		return
	}
	r.once.Do(func() {
		close(r.queue)
		select {
		case <-r.done:
		case <-time.After(10 * time.Second):
		}
	})
}

// sns is the sink for SNS's Publish (an alert rule's notify topic): one line each.
func (r *eventRelay) sns(topic, subject, message string) {
	r.mu.Lock()
	fmt.Fprintf(r.out, "%s sns %s: %s\n", time.Now().UTC().Format("15:04:05.000"), topic, oneLine(subject))
	r.mu.Unlock()
}
