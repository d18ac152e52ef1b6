package engine

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/sundialhq/sundial/internal/timer"
)

// How a processor notices a stop requested of the execution it runs (timer.RequestStop): it
// reads the instance only while the action has run longer than DefaultStopCheckAfter, then
// every DefaultStopCheckEvery, so an action that ends sooner costs exactly what it cost
// before Stop existed (no read, no write), and one that is stopped is aborted within
// StopCheckAfter + StopCheckEvery + a read of the request.
const (
	DefaultStopCheckAfter = 2 * time.Second
	DefaultStopCheckEvery = 2 * time.Second
	// CancelOtherLead is how long before the next instant a cancel-other execution is
	// stopped (timer.CancelOtherAt): time for its finish and the next firing's send, so that
	// the instant is claimed on time.
	CancelOtherLead = time.Second
)

// Why a watched action's context was cancelled (context.Cause).
var (
	errStopRequested = errors.New("the execution was stopped")
	errLeaseTaken    = errors.New("the execution no longer holds its timer")
	errWatchEnded    = errors.New("the action ended")
)

// stopWatch reads the running instance while its action runs (Processor.watchStop).
type stopWatch struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	done   chan struct{}
	seen   *timer.Instance // the instance with the stop request, once read (before done closes)
}

// watchStop starts watching running's instance for a stop request: the action runs under the
// returned watch's ctx, which is cancelled when one is read (or when the execution no longer
// holds the instance: its result would be discarded). end stops the watch.
func (p *Processor) watchStop(ctx context.Context, running timer.Instance, log *slog.Logger) *stopWatch {
	after, every := p.StopCheckAfter, p.StopCheckEvery
	if after <= 0 {
		after = DefaultStopCheckAfter
	}
	if every <= 0 {
		every = DefaultStopCheckEvery
	}
	wctx, cancel := context.WithCancelCause(ctx)
	w := &stopWatch{ctx: wctx, cancel: cancel, done: make(chan struct{})}
	// overlap: cancel-other: the next instant stops it (no read: the schedule is the item's).
	var overlap <-chan time.Time
	next, _ := p.finisher.schedules.next(running)
	at, cancels := running.CancelOtherAt(next)
	if cancels {
		// A run that started within the lead of the next instant (a late claim: a loaded
		// machine) is stopped at once: the next instant is due, and waiting for the one after
		// it would let this run pass an instant (it went on to its timeout).
		ot := time.NewTimer(max(at.Add(-CancelOtherLead).Sub(p.Clock.Now()), 0))
		defer func() { go func() { <-w.done; ot.Stop() }() }()
		overlap = ot.C
	}
	go func() {
		defer close(w.done)
		t := time.NewTimer(after)
		defer t.Stop()
		for {
			select {
			case <-wctx.Done():
				return
			case <-overlap:
				stopped := running.OverlapStop(at)
				log.Info("processor: the next instant cancels the running execution (overlap: cancel-other)", "next_instant", at)
				w.seen = &stopped
				cancel(errStopRequested)
				return
			case <-t.C:
			}
			in, err := p.Store.Get(wctx, running.Key)
			switch {
			case wctx.Err() != nil:
				return
			case errors.Is(err, timer.ErrNotFound):
				cancel(errLeaseTaken)
				return
			case err != nil:
				log.Warn("processor: could not read the instance for a stop request; the action goes on", "error", err)
			case in.Fence() != running.Fence():
				log.Warn("processor: the execution no longer holds its timer; its action is cancelled (its result would be discarded)")
				cancel(errLeaseTaken)
				return
			case in.Stop != nil:
				log.Info("processor: stop requested; the action is cancelled", "stopped_by", in.Stop.By)
				w.seen = &in
				cancel(errStopRequested)
				return
			}
			t.Reset(every)
		}
	}()
	return w
}

// end stops the watch and returns the instance with the stop request it read (nil: none).
func (w *stopWatch) end() *timer.Instance {
	w.cancel(errWatchEnded)
	<-w.done
	return w.seen
}
