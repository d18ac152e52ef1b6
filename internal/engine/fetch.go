package engine

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
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
// re-sends; one that dies before the first look loses its window, as before. The items found
// are read strongly consistent (Store.QueryDue), so that what is sent is decided on the items
// as they are, not as a lagging replica has them.
func (f *Fetcher) Run(ctx context.Context) (FetchStats, error) {
	now := f.Clock.Now()
	to := now.Add(min(f.Lookahead, MaxDelay))
	prev, err := f.Store.AdvanceWatermark(ctx, to, now)
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
	sent := map[firing]bool{}
	err = f.look(ctx, span, prev, to, sent, &st)
	if err == nil && f.IndexLag > 0 {
		first := st.Sent
		if err = settle(ctx, f.IndexLag); err == nil {
			err = f.look(ctx, span, prev, to, sent, &st)
		}
		st.Late = st.Sent - first
	}
	if err != nil {
		// Give the window back so the next tick retries it; duplicates of what was sent are
		// harmless (the claim admits one), losses are not.
		f.restore(ctx, prev, to)
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
// are sent in timer.Less's order over the whole window, each delayed to its due instant from
// when it is sent.
func (f *Fetcher) look(ctx context.Context, span int, prev, to time.Time, sent map[firing]bool, st *FetchStats) error {
	type ranked struct {
		out  Outgoing
		last time.Duration // the instance's LastDuration
	}
	var all []ranked
	for shard := range max(span, 1) {
		found, err := f.Store.QueryDue(ctx, shard, prev, to)
		if err != nil {
			return fmt.Errorf("query due shard %d: %w", shard, err)
		}
		now := f.Clock.Now()
		for _, in := range found {
			if !sent[firing{in.Key.Norm(), in.NextRun.UnixMilli()}] { // Norm: as Firing.Key() has it
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
	rate := float64(f.ClaimRate)
	if f.ClaimRate == 0 {
		rate = DefaultClaimRate
	}
	place := map[int64]int{} // the next firing's place in its instant's claim order
	now := f.Clock.Now()
	msgs := make([]Outgoing, len(all))
	for i, r := range all {
		sec := r.out.Firing.DueAt.Unix()
		due := r.out.Firing.DueAt
		lead := leadFor(place[sec], crowd[sec], rate, due.Sub(now))
		place[sec]++
		msgs[i] = r.out
		msgs[i].Delay = delayUntil(due, now, lead)
	}
	all = nil
	if err := f.Queue.Send(ctx, msgs); err != nil {
		return err
	}
	for _, o := range msgs {
		sent[firing{o.Firing.Key(), o.Firing.DueAt.UnixMilli()}] = true
	}
	st.Due += len(msgs)
	st.Sent += len(msgs)
	return nil
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
