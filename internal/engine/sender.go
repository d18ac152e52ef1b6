package engine

import (
	"context"
	"log/slog"
	"time"

	"github.com/sundialhq/sundial/internal/timer"
)

// DefaultCoalesce is how long the processor waits for other records of its batch to end
// before it sends what one record left to send: long enough to share a send among firings
// that end together, short enough that no firing waits on another's action. The wait ends
// at once when every record of the batch has ended, so a batch of quick actions still makes
// one watermark read and one send.
const DefaultCoalesce = 100 * time.Millisecond

// pending is what one record leaves to send when it ends: the follow-up firing of the
// instance it finished, or its own message re-sent because it arrived early.
type pending struct {
	after *timer.Instance
	early *Outgoing
}

// sender sends each record's follow-up as soon as the record ends, coalescing the records
// that end within `window` of each other into one watermark read and one batched send — so
// a quick timer's next firing never waits for a slow action that shares its SQS batch.
type sender struct {
	finisher *finisher
	queue    Queue
	log      *slog.Logger
	window   time.Duration

	in      chan pending
	done    chan struct{}
	records int // in the batch: when all have ended, nothing more can join a group
}

func newSender(ctx context.Context, f *finisher, q Queue, log *slog.Logger, window time.Duration, n int) *sender {
	s := &sender{finisher: f, queue: q, log: log, window: window, in: make(chan pending, n), done: make(chan struct{}), records: n}
	go s.loop(ctx)
	return s
}

// add hands over one ended record's sends (possibly none: the record still counts as ended);
// it never blocks (the channel holds one per record).
func (s *sender) add(p pending) {
	s.in <- p
}

// close waits until everything added has been sent.
func (s *sender) close() {
	close(s.in)
	<-s.done
}

// MaxCoalesce bounds how long a group waits for its batch-mates when none of its sends is
// pressed for time (patience): a batch's records end within a second or two of each other under
// a burst, and one send for the batch is a fifth of the requests of one per record.
const MaxCoalesce = 2 * time.Second

// patience is how long p's send may wait and still leave its message the whole second of
// delay truncation before its instant, half a second for the send, and MaxLead more (follow-ups
// are sent without a lead; the margin keeps a wait from reaching into a second a crowd would).
func (s *sender) patience(p pending, now time.Time) time.Duration {
	const margin = MaxLead + time.Second + 500*time.Millisecond
	switch {
	case p.after != nil && !p.after.NextRun.IsZero():
		return p.after.NextRun.Sub(now) - margin
	case p.early != nil:
		return p.early.Delay - margin
	}
	return MaxCoalesce // nothing to send (or nothing due): no hurry
}

func (s *sender) loop(ctx context.Context) {
	defer close(s.done)
	ended := 0
	for first := range s.in {
		ended++
		group := []pending{first}
		if s.window > 0 && ended < s.records {
			start := time.Now()
			now := s.finisher.clock.Now()
			// The group waits the window, or longer while every send in it has time to spare.
			wait := min(s.patience(first, now), MaxCoalesce)
			t := time.NewTimer(max(s.window, wait))
		collect:
			for ended < s.records {
				select {
				case p, ok := <-s.in:
					if !ok {
						break collect
					}
					ended++
					group = append(group, p)
					if w := s.patience(p, s.finisher.clock.Now()); w < wait {
						// A pressing send shortens the wait to what it allows (the window at least).
						wait = w
						t.Reset(max(s.window, wait) - time.Since(start))
					}
				case <-t.C:
					break collect
				}
			}
			t.Stop()
		}
		s.send(ctx, group)
	}
}

func (s *sender) send(ctx context.Context, group []pending) {
	var finished []timer.Instance
	var resend []Outgoing
	for _, p := range group {
		if p.after != nil {
			finished = append(finished, *p.after)
		}
		if p.early != nil {
			resend = append(resend, *p.early)
		}
	}
	if err := s.finisher.followUps(ctx, finished, followUpReason); err != nil {
		// The state is written; the fetch or recovery will enqueue these firings instead.
		s.log.Error("processor: follow-up send failed; recovery will requeue", "error", err)
	}
	if len(resend) > 0 {
		if err := s.queue.Send(ctx, resend); err != nil {
			s.log.Error("processor: re-send of early messages failed; recovery will requeue", "error", err)
		}
	}
}
