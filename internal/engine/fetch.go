package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/sundialhq/sundial/internal/message"
	"github.com/sundialhq/sundial/internal/timer"
)

// Fetcher is the Timers Fetcher: each tick it enqueues the firings that fall due before the
// next tick, each delayed to its due second. It reads only due instances (the sparse due
// index), from the watermark onward, so idle timers cost nothing and a firing is sent once.
type Fetcher struct {
	Store Store
	Queue Queue
	Clock timer.Clock
	Log   *slog.Logger
	// Metrics receives the tick and the firings sent (nil: nowhere).
	Metrics Metrics
	Shards  int
	// Lookahead is how far past now a tick enqueues. Twice the tick interval absorbs a late
	// tick without a gap; at most SQS's 900 s delay.
	Lookahead time.Duration
	// IndexLag is how long a write may take to show in the due index (a global secondary
	// index, eventually consistent: normally within a second on AWS). A tick looks at the
	// index again this long after its first look; see Run.
	IndexLag time.Duration
	// ShardGrace is how long the shards above a lowered Shards must stay empty before the
	// fetch stops reading them (default RetireGrace).
	ShardGrace time.Duration
	// ClaimRate is the claims per second a crowded second's firings are spread at: they are
	// sent early enough to be claimed before their instant (leadFor). 0: DefaultClaimRate;
	// negative: no lead.
	ClaimRate int
	// SendConcurrency is how many SendMessageBatch calls a tick has in flight at once
	// (0: DefaultSendConcurrency).
	SendConcurrency int
	// Reserve is how long before the invocation's deadline (ctx's) a tick stops sending, to
	// move the watermark back over what it did not send (0: DefaultReserve).
	Reserve time.Duration
	// Calendars, when set (the store), advances the watermark and learns the calendar edits
	// in transit in one write, and applies such an edit to a due instance it has not reached
	// before its firing is sent (calendars.go). nil: no edit is ever in transit.
	Calendars CalendarMarker
}

// RetireGrace outlasts any execution that started before DueShards was lowered: Lambda's
// longest timeout (15 minutes) × 1.2, the lease, plus a margin. Such an execution may still
// place its instance on a shard above the new count when it ends.
const RetireGrace = 20 * time.Minute

// drainBatch is how many idle instances a tick moves down from each shard above Shards.
const drainBatch = 100

// FetchStats describes one tick.
type FetchStats struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	Due  int       `json:"due"`
	Sent int       `json:"sent"`
	// Late are the firings only the second look found (the index lagged on them).
	Late int `json:"late,omitempty"`
}

// Run performs one tick.
//
// A writer that keys a next run for the fetch (Store.Finish, an operator's edit) reads the
// watermark after its write and sends the firing itself if the watermark has passed it
// (finisher.followUps); otherwise the tick that advances past it comes after that read, hence
// after the write. But the due index shows a write only up to IndexLag after it (a global
// secondary index is eventually consistent), so a write made just before the advance may be
// missing from a query made at once. The tick therefore looks twice: right after the advance,
// and again IndexLag later, when every write made before the advance is in the index; the
// second look sends only what the first did not (a firing is known by instance and next run).
// A tick that dies between the looks loses only what the index lagged on, which recovery
// re-sends; one that dies before the first look loses its window, as before. A tick cut
// short by its deadline (ctx) stops sending Reserve before it and moves the watermark back
// over what it did not send (see the error path below). The items found
// are read strongly consistent (Store.QueryDue), so that what is sent is decided on the items
// as they are, not as a lagging replica has them.
func (f *Fetcher) Run(ctx context.Context) (FetchStats, error) {
	now := f.Clock.Now()
	to := now.Add(min(f.Lookahead, MaxDelay))
	var (
		prev time.Time
		err  error
		t    *transit
	)
	if f.Calendars != nil {
		var marks []timer.CalendarMark
		prev, marks, err = f.Calendars.AdvanceWatermarkMarks(ctx, to, now)
		if len(marks) > 0 {
			t = &transit{marks: marks}
		}
	} else {
		prev, err = f.Store.AdvanceWatermark(ctx, to, now)
	}
	if err != nil {
		return FetchStats{}, fmt.Errorf("fetch: advance watermark: %w", err)
	}
	st := FetchStats{From: prev, To: to}
	if !prev.IsZero() && !prev.Before(to) {
		metricsOr(f.Metrics).FetchTick(0)
		return st, nil // a concurrent or duplicate tick already covered this window
	}
	span, err := f.Store.ShardSpan(ctx, max(f.Shards, 1))
	if err != nil {
		f.restore(ctx, prev, to)
		return st, fmt.Errorf("fetch: %w", err)
	}
	// The sends stop Reserve before the invocation's deadline, so that a tick cut short still
	// has the time to give back what it did not send.
	sendCtx, cancel := f.sendContext(ctx)
	defer cancel()
	sent := map[firing]bool{}
	res, err := f.look(sendCtx, span, prev, to, sent, &st, t)
	if f.IndexLag > 0 {
		first := st.Sent
		res.read = false // not the whole window until the second look has read it
		if err == nil {
			if err = settle(sendCtx, f.IndexLag); err == nil {
				res, err = f.look(sendCtx, span, prev, to, sent, &st, t)
			}
		}
		st.Late = st.Sent - first
	}
	if err != nil {
		// Give back what was not sent so that the next tick sends it; duplicates of what was
		// sent are harmless (the claim admits one), losses are not. The watermark says every
		// firing due up to it was sent, so it goes back to just before the earliest firing
		// not sent, or to prev if the last look did not read the whole window: a write the
		// index lagged on can be due anywhere in it.
		back := prev
		if just := time.UnixMilli(res.unsent.UnixMilli() - 1).UTC(); res.read && !res.unsent.IsZero() && just.After(prev) {
			back = just
		}
		rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), f.reserve())
		defer rcancel()
		f.restore(rctx, back, to)
		return st, fmt.Errorf("fetch: %w", err)
	}
	if span > max(f.Shards, 1) {
		if err := f.drain(ctx, span, now); err != nil {
			f.Log.Error("fetch: drain shards", "error", err)
		}
	}
	metricsOr(f.Metrics).FetchTick(st.Sent)
	f.Log.Info("fetch tick", "from", prev, "to", to, "due", st.Due, "sent", st.Sent, "late_in_index", st.Late)
	return st, nil
}

// firing names one firing of an instance: its next run.
type firing struct {
	key timer.Key
	at  int64 // NextRun, Unix ms
}

// look queries the window and sends the firings it finds that are not in sent, adding them.
// It reads one shard at a time and keeps of each instance only its message and what the
// order needs, so that a window's instances are never in memory together: 50,000 firings read
// at once needed 370 MB, above the fetch function's 128 MB (bench fetch_window). The messages
// are sent in timer.Less's order over the whole window (see send), each delayed to its due
// instant from when its batch is sent.
//
// An instance an operator's calendar edit in transit (t) has not reached is given the edit
// first: its firing is decided on its next run under the edit's rules, sent if it is due by
// `to` (also before prev: the window covered already), else left to a later tick.
func (f *Fetcher) look(ctx context.Context, span int, prev, to time.Time, sent map[firing]bool, st *FetchStats, t *transit) (looked, error) {
	type ranked struct {
		out  Outgoing
		last time.Duration // the instance's LastDuration
	}
	var all []ranked
	for shard := range max(span, 1) {
		found, err := f.Store.QueryDue(ctx, shard, prev, to)
		if err != nil {
			return looked{}, fmt.Errorf("query due shard %d: %w", shard, err)
		}
		now := f.Clock.Now()
		for _, in := range found {
			if m, ok := t.stale(in); ok {
				out, err := f.applyEdit(ctx, t, m, in)
				if err != nil {
					return looked{}, err
				}
				if !out.Active || out.Running() || out.NextRun.IsZero() || out.NextRun.After(to) {
					continue // its next firing is a later tick's
				}
				in = out
			}
			if !sent[firing{in.Key, in.NextRun.UnixMilli()}] {
				all = append(all, ranked{outgoing(in, message.ReasonSchedule, now), in.LastDuration})
			}
		}
	}
	// timer.Less on what was kept: the effective priority (the message's), the previous
	// duration, then the longest waiting (the earliest next run, the message's DueAt).
	slices.SortStableFunc(all, func(a, b ranked) int {
		return cmp.Or(cmp.Compare(a.out.Priority, b.out.Priority), cmp.Compare(a.last, b.last), a.out.Firing.DueAt.Compare(b.out.Firing.DueAt))
	})
	crowd := map[int64]int{} // firings per instant (second)
	for _, r := range all {
		crowd[r.out.Firing.DueAt.Unix()]++
	}
	place := map[int64]int{} // the next firing's place in its instant's claim order
	msgs := make([]queued, len(all))
	for i, r := range all {
		sec := r.out.Firing.DueAt.Unix()
		msgs[i] = queued{out: r.out, place: place[sec], crowd: crowd[sec]}
		place[sec]++
	}
	all = nil
	return f.send(ctx, msgs, sent, st)
}

// queued is a firing the fetch is about to send: its delay is decided when its batch is sent,
// from its place among the firings due in the same second (leadFor).
type queued struct {
	out          Outgoing
	place, crowd int
}

// looked is what a look did: it read the whole window (read), and unsent is the earliest due
// instant among the firings it found but could not send (zero: it sent them all).
type looked struct {
	read   bool
	unsent time.Time
}

// SendBatch is how many firings of one priority the fetch hands the queue at a time: SQS's
// most entries in one SendMessageBatch call.
const SendBatch = 10

// DefaultSendConcurrency is how many batches the fetch has in flight at once
// (Fetcher.SendConcurrency): 50,000 firings are 5,000 calls, which one after the other take
// most of the function's minute.
const DefaultSendConcurrency = 8

// send sends msgs (in timer.Less's order) in batches of one priority, at most SendBatch each,
// SendConcurrency at a time, and adds each batch sent to sent. The batches are taken in order,
// so higher-priority firings go first. Each batch's delays are computed from the clock when it
// is sent: a window of 50,000 firings takes seconds to send, and a delay computed when the
// tick began would make the last batches late by that much (SQS counts DelaySeconds from the
// SendMessageBatch call). A batch that fails does not stop the others (as Queue.Send); once ctx
// ends no further batch is started. The error joins every batch's.
func (f *Fetcher) send(ctx context.Context, msgs []queued, sent map[firing]bool, st *FetchStats) (looked, error) {
	var batches [][]queued
	for start := 0; start < len(msgs); {
		end := start + 1
		for end < len(msgs) && end-start < SendBatch && msgs[end].out.Priority == msgs[start].out.Priority {
			end++
		}
		batches = append(batches, msgs[start:end])
		start = end
	}
	rate := float64(f.ClaimRate)
	if f.ClaimRate == 0 {
		rate = DefaultClaimRate
	}
	workers := f.SendConcurrency
	if workers <= 0 {
		workers = DefaultSendConcurrency
	}
	var (
		mu    sync.Mutex
		next  int // the next batch to send
		done  = make([]bool, len(batches))
		tried = make([]bool, len(batches))
		errs  []error
		wg    sync.WaitGroup
	)
	for range min(workers, len(batches)) {
		wg.Go(func() {
			for {
				mu.Lock()
				i := next
				next++
				if i >= len(batches) || ctx.Err() != nil {
					mu.Unlock()
					return
				}
				tried[i] = true
				mu.Unlock()
				batch := batches[i]
				out := make([]Outgoing, len(batch))
				now := f.Clock.Now()
				for j, q := range batch {
					due := q.out.Firing.DueAt
					out[j] = q.out
					out[j].Delay = delayUntil(due, now, leadFor(q.place, q.crowd, rate, due.Sub(now)))
				}
				err := f.Queue.Send(ctx, out)
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				} else {
					done[i] = true
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	res := looked{read: true}
	skipped := 0
	for i, batch := range batches {
		if !tried[i] {
			skipped++
		}
		for _, q := range batch {
			due := q.out.Firing.DueAt
			if !done[i] {
				if res.unsent.IsZero() || due.Before(res.unsent) {
					res.unsent = due
				}
				continue
			}
			sent[firing{q.out.Firing.Key(), due.UnixMilli()}] = true
			st.Sent++
		}
		st.Due += len(batch)
	}
	if skipped > 0 {
		errs = append(errs, fmt.Errorf("%d of %d batches not sent: %w", skipped, len(batches), context.Cause(ctx)))
	}
	return res, errors.Join(errs...)
}

// settle waits d (the index's lag), or until ctx ends.
func settle(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// DefaultReserve is how long before its invocation's deadline a tick stops sending
// (Fetcher.Reserve): time for one conditional write of the watermark, and its retries.
const DefaultReserve = 5 * time.Second

func (f *Fetcher) reserve() time.Duration {
	if f.Reserve > 0 {
		return f.Reserve
	}
	return DefaultReserve
}

// sendContext is ctx ending Reserve before ctx's deadline (ctx itself if it has none).
func (f *Fetcher) sendContext(ctx context.Context) (context.Context, context.CancelFunc) {
	deadline, ok := ctx.Deadline()
	if !ok {
		return context.WithCancel(ctx)
	}
	return context.WithDeadline(ctx, deadline.Add(-f.reserve()))
}

// restore moves the watermark back from `to` to prev (if no other tick moved it since).
func (f *Fetcher) restore(ctx context.Context, prev, to time.Time) {
	if rerr := f.Store.RestoreWatermark(ctx, prev, to); rerr != nil {
		f.Log.Error("fetch: restore watermark", "error", rerr)
	}
}

// drain moves the idle instances left on the shards above Shards (DueShards was lowered)
// down to theirs, and stops reading those shards once they have stayed empty for the grace.
func (f *Fetcher) drain(ctx context.Context, span int, now time.Time) error {
	shards := max(f.Shards, 1)
	empty := true
	for from := shards; from < span; from++ {
		remaining, err := f.Store.DrainShard(ctx, from, shards, drainBatch)
		if err != nil {
			return err
		}
		empty = empty && !remaining
	}
	grace := f.ShardGrace
	if grace <= 0 {
		grace = RetireGrace
	}
	f.Log.Info("fetch: draining shards", "shards", shards, "span", span, "empty", empty)
	return f.Store.RetireShards(ctx, span, shards, empty, now, grace)
}
