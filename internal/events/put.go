package events

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
)

// PutEvents' limits: 10 entries and 256 KB a request.
const (
	MaxEntries      = 10
	MaxRequestBytes = 256 * 1024
)

// API is the part of the EventBridge client the publisher uses.
type API interface {
	PutEvents(ctx context.Context, in *eventbridge.PutEventsInput, opts ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error)
}

// Store keeps the events that could not be put (the outbox, dynamo.Store's pending events).
type Store interface {
	PutPendingEvents(ctx context.Context, ids []string, bodies [][]byte) error
	PendingEvents(ctx context.Context, limit int) (ids []string, bodies [][]byte, err error)
	DeletePendingEvents(ctx context.Context, ids []string) error
}

// Publisher puts events on one bus.
type Publisher struct {
	API API
	Bus string // name or ARN; empty: the account's default bus
	// Outbox keeps what could not be put; nil: such events are only logged.
	Outbox Store
	Log    *slog.Logger
	// Attempts per entry within one Publish (default 3), Backoff before the second (default
	// 100 ms, doubling). The SDK's retryer already retries a throttled or failed call.
	Attempts int
	Backoff  time.Duration
	// Within bounds the time Publish spends putting (default 10 s): what is not taken by
	// then is kept in the outbox, so a slow EventBridge does not hold up the stream.
	Within time.Duration
}

// EntrySize is an entry's size as EventBridge counts it against the 256 KB of a request.
func EntrySize(e types.PutEventsRequestEntry) int {
	n := 0
	if e.Time != nil {
		n += 14
	}
	n += len(aws.ToString(e.Source)) + len(aws.ToString(e.DetailType)) + len(aws.ToString(e.Detail))
	for _, r := range e.Resources {
		n += len(r)
	}
	return n
}

func (p *Publisher) entry(ev Event) (types.PutEventsRequestEntry, error) {
	d, err := ev.DetailJSON()
	if err != nil {
		return types.PutEventsRequestEntry{}, err
	}
	e := types.PutEventsRequestEntry{Source: aws.String(Source), DetailType: aws.String(ev.DetailType), Detail: aws.String(d)}
	if !ev.Time.IsZero() {
		e.Time = aws.Time(ev.Time)
	}
	if p.Bus != "" {
		e.EventBusName = aws.String(p.Bus)
	}
	return e, nil
}

// Put puts evs, at most MaxEntries and MaxRequestBytes a request, retrying the entries
// EventBridge did not take (a failed call, or FailedEntryCount) up to Attempts times, and
// returns those it never took.
func (p *Publisher) Put(ctx context.Context, evs []Event) ([]Event, error) {
	attempts := p.Attempts
	if attempts <= 0 {
		attempts = 3
	}
	backoff := p.Backoff
	if backoff <= 0 {
		backoff = 100 * time.Millisecond
	}
	pending := evs
	for attempt := 1; len(pending) > 0 && attempt <= attempts; attempt++ {
		if attempt > 1 {
			select {
			case <-ctx.Done():
				return pending, nil
			case <-time.After(backoff << (attempt - 2)):
			}
		}
		var failed []Event
		for len(pending) > 0 {
			batch, entries, rest, err := p.nextBatch(pending)
			if err != nil {
				return nil, err
			}
			pending = rest
			out, err := p.API.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: entries})
			if err != nil {
				p.logger().Warn("events: PutEvents failed; retrying", "entries", len(entries), "attempt", attempt, "error", err)
				failed = append(failed, batch...)
				continue
			}
			if out.FailedEntryCount == 0 {
				continue
			}
			for i, r := range out.Entries {
				if r.ErrorCode != nil && i < len(batch) {
					p.logger().Warn("events: entry refused; retrying", "detail_type", batch[i].DetailType, "id", batch[i].ID(),
						"code", aws.ToString(r.ErrorCode), "message", aws.ToString(r.ErrorMessage), "attempt", attempt)
					failed = append(failed, batch[i])
				}
			}
			if len(out.Entries) < len(batch) { // not as documented; count the unanswered as failed
				failed = append(failed, batch[len(out.Entries):]...)
			}
		}
		pending = failed
	}
	return pending, nil
}

// nextBatch takes the longest head of evs that fits one request.
func (p *Publisher) nextBatch(evs []Event) (batch []Event, entries []types.PutEventsRequestEntry, rest []Event, err error) {
	size := 0
	for i, ev := range evs {
		e, err := p.entry(ev)
		if err != nil {
			return nil, nil, nil, err
		}
		n := EntrySize(e)
		if len(entries) == MaxEntries || (len(entries) > 0 && size+n > MaxRequestBytes) {
			return evs[:i], entries, evs[i:], nil
		}
		entries, size = append(entries, e), size+n
	}
	return evs, entries, nil, nil
}

func (p *Publisher) logger() *slog.Logger {
	if p.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return p.Log
}

// Publish puts evs and keeps those never taken in the outbox for Drain. It fails only when
// an event could neither be put nor kept.
func (p *Publisher) Publish(ctx context.Context, evs []Event) error {
	evs = distinct(evs)
	if len(evs) == 0 {
		return nil
	}
	within := p.Within
	if within <= 0 {
		within = 10 * time.Second
	}
	pctx, cancel := context.WithTimeout(ctx, within)
	left, err := p.Put(pctx, evs)
	cancel()
	if err != nil {
		return err
	}
	if len(left) == 0 {
		return nil
	}
	if p.Outbox == nil {
		p.logger().Error("events: not put, and no outbox to keep them", "events", len(left))
		return nil
	}
	ids, bodies, err := encode(left)
	if err != nil {
		return err
	}
	if err := p.Outbox.PutPendingEvents(ctx, ids, bodies); err != nil {
		return fmt.Errorf("events: keep %d events not put: %w", len(left), err)
	}
	p.logger().Warn("events: kept for the next recovery sweep", "events", len(left))
	return nil
}

// distinct drops the events named twice (a record delivered twice in one batch).
func distinct(evs []Event) []Event {
	seen := make(map[string]bool, len(evs))
	out := evs[:0:0]
	for _, ev := range evs {
		if id := ev.ID(); !seen[id] {
			seen[id] = true
			out = append(out, ev)
		}
	}
	return out
}

func encode(evs []Event) (ids []string, bodies [][]byte, err error) {
	for _, ev := range evs {
		b, err := json.Marshal(ev)
		if err != nil {
			return nil, nil, fmt.Errorf("event %s: %w", ev.ID(), err)
		}
		ids, bodies = append(ids, ev.ID()), append(bodies, b)
	}
	return ids, bodies, nil
}

// DrainPage is how many outbox events Drain reads at a time; DrainPages bounds the pages
// one Drain puts.
const (
	DrainPage  = 100
	DrainPages = 10
)

// Drain puts the outbox's events, a page of DrainPage at a time while EventBridge takes
// them all (at most DrainPages), removing those it took; it returns how many it put and how
// many of the last page are still kept.
func (p *Publisher) Drain(ctx context.Context) (put, kept int, err error) {
	for range DrainPages {
		n, k, err := p.drainPage(ctx)
		put += n
		if err != nil || k > 0 || n < DrainPage {
			return put, k, err
		}
	}
	return put, 0, nil
}

func (p *Publisher) drainPage(ctx context.Context) (put, kept int, err error) {
	if p.Outbox == nil {
		return 0, 0, nil
	}
	ids, bodies, err := p.Outbox.PendingEvents(ctx, DrainPage)
	if err != nil {
		return 0, 0, fmt.Errorf("events: read the outbox: %w", err)
	}
	var evs []Event
	for i, b := range bodies {
		var ev Event
		if err := json.Unmarshal(b, &ev); err != nil {
			p.logger().Error("events: outbox entry not understood; dropped", "id", ids[i], "error", err)
			if err := p.Outbox.DeletePendingEvents(ctx, ids[i:i+1]); err != nil {
				return 0, 0, err
			}
			continue
		}
		evs = append(evs, ev)
	}
	left, err := p.Put(ctx, evs)
	if err != nil {
		return 0, 0, err
	}
	still := map[string]bool{}
	for _, ev := range left {
		still[ev.ID()] = true
	}
	var done []string
	for _, ev := range evs {
		if !still[ev.ID()] {
			done = append(done, ev.ID())
		}
	}
	if err := p.Outbox.DeletePendingEvents(ctx, done); err != nil {
		return len(done), len(left), fmt.Errorf("events: remove %d events put from the outbox: %w", len(done), err)
	}
	return len(done), len(left), nil
}
