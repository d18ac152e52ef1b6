package engine

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"golang.org/x/sync/errgroup"

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
	// index, eventually consistent: normally within a second on AWS). A tick waits this long
	// between advancing the watermark and querying the index; see Run.
	IndexLag time.Duration
	// ShardGrace is how long the shards above a lowered Shards must stay empty before the
	// fetch stops reading them (default RetireGrace).
	ShardGrace time.Duration
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
}

// Run performs one tick.
//
// A writer that keys a next run for the fetch (Store.Finish, an operator's edit) reads the
// watermark after its write and sends the firing itself if the watermark has passed it
// (finisher.followUps); otherwise the tick that advances past it comes after that read, hence
// after the write. The index shows a write only IndexLag after it, so the tick waits that
// long between its advance and its query: a write made just before the advance is then in
// the index, and a later one was sent by its writer. The look-ahead must exceed the tick
// interval by IndexLag (config: two ticks plus IndexLag), so that the wait delays no firing.
// The items found are then read strongly consistent (Store.QueryDue), so that the index's
// entries are judged by the items as they are, not as a lagging replica has them.
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
	err = settle(ctx, f.IndexLag)
	var due []timer.Instance
	if err == nil {
		due, err = f.queryAll(ctx, span, prev, to)
	}
	if err == nil {
		st.Due = len(due)
		timer.Sort(due, now)
		msgs := make([]Outgoing, 0, len(due))
		for _, in := range due {
			msgs = append(msgs, outgoing(in, message.ReasonSchedule, now))
		}
		err = f.Queue.Send(ctx, msgs)
		if err == nil {
			st.Sent = len(msgs)
		}
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
	f.Log.Info("fetch tick", "from", prev, "to", to, "due", st.Due, "sent", st.Sent)
	return st, nil
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

func (f *Fetcher) queryAll(ctx context.Context, span int, after, upTo time.Time) ([]timer.Instance, error) {
	results := make([][]timer.Instance, max(span, 1))
	g, gctx := errgroup.WithContext(ctx)
	for shard := range results {
		g.Go(func() error {
			ins, err := f.Store.QueryDue(gctx, shard, after, upTo)
			if err != nil {
				return fmt.Errorf("query due shard %d: %w", shard, err)
			}
			results[shard] = ins
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	var all []timer.Instance
	for _, r := range results {
		all = append(all, r...)
	}
	return all, nil
}
