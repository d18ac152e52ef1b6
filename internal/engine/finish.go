package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/sundialhq/sundial/internal/message"
	"github.com/sundialhq/sundial/internal/timer"
)

// finisher ends executions — the processor after a run, recovery after a lease expired —
// with the same fenced write and the same log entry, so both paths obey one set of rules.
type finisher struct {
	store     Store
	queue     Queue
	clock     timer.Clock
	log       *slog.Logger
	schedules schedules

	mu     sync.Mutex
	wm     time.Time // the highest fetch watermark read (it only moves forward)
	wmRead time.Time // when it was read
	// refreshing: a read of the watermark is under way (watermark)
	refreshing bool
	// marks are the calendar edits in transit read with the watermark (a store that is a
	// CalendarReader), and edits the edits read for them (by mark).
	marks []timer.CalendarMark
	edits sync.Map
}

// watermarkFresh is how long a watermark read serves the finishes that follow. An older value
// is still a valid promise (the watermark only grows, and the finisher sends whatever is at
// or before the value it finished under), it only makes more finishes move the due index key.
const watermarkFresh = 5 * time.Second

// finish applies the outcome of `running` in one fenced write, from which its log entry
// follows. The next run is decided under the rules `running` has; a write refused because
// they changed meanwhile (Finish.CalendarEdit) is decided again under the rules read. It returns timer.ErrFenceLost when the execution no longer owns the instance (a
// zombie): then nothing is written at all.
func (f *finisher) finish(ctx context.Context, running timer.Instance, res timer.RunResult) (timer.Instance, timer.Execution, error) {
	sentUpTo := f.watermark(ctx)
	observed := f.inTransit(ctx, running)
	next, serr := f.schedules.next(observed)
	if serr != nil {
		res.Error = joinErr(res.Error, serr.Error())
	}
	var (
		after timer.Instance
		exec  timer.Execution
		err   error
	)
	for range 4 {
		dec := timer.Decide(observed, res, next)
		exec = timer.NewExecution(running, dec)
		after, err = f.store.Finish(ctx, observed, dec, exec, sentUpTo)
		if !errors.Is(err, timer.ErrChanged) {
			break
		}
		// nextRun or active changed during the run: re-read and decide again with what stands.
		if observed, err = f.store.Get(ctx, running.Key); err != nil {
			break
		}
		if observed.Fence() != running.Fence() {
			err = timer.ErrFenceLost
			break
		}
		// Its rules may have changed during the run (an operator's calendar edit reached
		// it): the next run follows the rules it has now.
		if n, nerr := f.schedules.next(observed); nerr == nil {
			next = n
		}
	}
	if err != nil {
		return timer.Instance{}, timer.Execution{}, fmt.Errorf("finish %s: %w", running.Key, err)
	}
	if rerr := releaseSlots(ctx, f.store, poolNames(running.Resources), running.ExecutionID); rerr != nil {
		f.log.Warn("finish: slot not released; it is free at its lease deadline", "timer", running.Key.String(), "error", rerr)
	}
	f.wake(ctx, after, exec) // the timers waiting for this success (deps.go)
	return after, exec, nil
}

// followUps sends the next firing of instances whose next run falls inside the window the
// fetch has already covered: the fetch will not see them again, so the writer sends them.
// Those at or before the watermark the finish was written under (Store.Finish's sentUpTo) are
// sent whatever happens; for a later one the watermark is read again, after the write.
func (f *finisher) followUps(ctx context.Context, ins []timer.Instance, reason func(timer.Instance) message.Reason) error {
	var candidates []timer.Instance
	for _, in := range ins {
		if in.Active && !in.Running() && !in.NextRun.IsZero() {
			candidates = append(candidates, in)
		}
	}
	if len(candidates) == 0 {
		return nil
	}
	wm := f.watermark(ctx)
	for _, in := range candidates {
		if in.NextRun.After(wm) {
			fresh, err := f.readWatermark(ctx)
			if err != nil {
				return fmt.Errorf("read watermark: %w", err)
			}
			wm = fresh
			break
		}
	}
	now := f.clock.Now()
	var msgs []Outgoing
	for _, in := range candidates {
		if !in.NextRun.After(wm) {
			msgs = append(msgs, outgoing(in, reason(in), now))
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	if err := f.queue.Send(ctx, msgs); err != nil {
		return fmt.Errorf("send follow-up firings: %w", err)
	}
	return nil
}

// watermark returns the highest watermark read, reading it again when the last read is older
// than watermarkFresh. A failed read returns what is known (zero at worst: every finish then
// keys its next run for the fetch, which is correct, only dearer).
//
// One read at a time: while it is under way, the other finishes use the value it replaces
// (still a valid promise). Under a burst hundreds of finishes found the value stale at once
// and each read it, a tenth of a read per firing queued in front of the claims.
func (f *finisher) watermark(ctx context.Context) time.Time {
	f.mu.Lock()
	wm, at := f.wm, f.wmRead
	if !at.IsZero() && (f.clock.Now().Sub(at) < watermarkFresh || f.refreshing) {
		f.mu.Unlock()
		return wm
	}
	f.refreshing = true
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.refreshing = false
		f.mu.Unlock()
	}()
	got, err := f.readWatermark(ctx)
	if err != nil {
		f.log.Warn("read watermark", "error", err)
		return wm
	}
	return got
}

// readWatermark reads the watermark from the store and remembers the highest value seen,
// and the calendar edits in transit (CalendarReader: the same item, the same read).
func (f *finisher) readWatermark(ctx context.Context) (time.Time, error) {
	var (
		got   time.Time
		marks []timer.CalendarMark
		err   error
	)
	if cr, ok := f.store.(CalendarReader); ok {
		got, marks, err = cr.WatermarkMarks(ctx)
	} else {
		got, err = f.store.Watermark(ctx)
	}
	if err != nil {
		return time.Time{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.marks = marks
	f.wmRead = f.clock.Now()
	if got.After(f.wm) {
		f.wm = got
	}
	return f.wm, nil
}

// inTransit gives a running instance an operator's calendar edit in transit that has not
// reached it (the marks as the last watermark read had them: no read of their own), so that
// its end decides its next run under the edit: its settings only, its fence is kept (the
// edit is read once per finisher). A backfill run's end keeps the timer's next run as
// claimed, so its instance is left to the fetch. Anything that fails leaves running as it
// is (the fetch applies the edit when its next run comes due).
func (f *finisher) inTransit(ctx context.Context, running timer.Instance) timer.Instance {
	cr, ok := f.store.(CalendarReader)
	if !ok || running.RunBackfill != "" {
		return running
	}
	f.mu.Lock()
	t := transit{marks: f.marks}
	f.mu.Unlock()
	m, stale := t.stale(running)
	if !stale {
		return running
	}
	var e timer.CalendarEdit
	if v, ok := f.edits.Load(m); ok {
		e = v.(timer.CalendarEdit)
	} else {
		var err error
		if e, err = cr.CalendarEdit(ctx, m.App, m.Name); err != nil || e.Stamp != m.Stamp {
			f.log.Warn("finish: calendar edit in transit not applied", "timer", running.Key.String(), "calendar", m.Name, "error", err)
			return running
		}
		f.edits.Store(m, e)
	}
	out, err := Recalendar(ctx, cr, running, e, f.clock.Now())
	if err != nil || out.Fence() != running.Fence() {
		f.log.Warn("finish: calendar edit in transit not applied", "timer", running.Key.String(), "calendar", m.Name, "error", err)
		return running
	}
	f.log.Info("finish: applied a calendar edit in transit before deciding the next run", "timer", running.Key.String(), "calendar", m.Name)
	return out
}

func followUpReason(in timer.Instance) message.Reason {
	if in.PendingAttempt > 0 {
		return message.ReasonRetry
	}
	return message.ReasonChain
}

func joinErr(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

func fmtDur(d time.Duration) string { return d.Round(time.Millisecond).String() }
