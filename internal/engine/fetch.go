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
func (f *Fetcher) look(ctx context.Context, span int, prev, to time.Time, sent map[firing]bool, st *FetchStats) error {
	found, err := f.queryAll(ctx, span, prev, to)
	if err != nil {
		return err
	}
	now := f.Clock.Now()
	due := found[:0]
	for _, in := range found {
		if id := (firing{in.Key, in.NextRun.UnixMilli()}); !sent[id] {
			due = append(due, in)
		}
	}
	timer.Sort(due, now)
	msgs := make([]Outgoing, 0, len(due))
	crowd := map[int64]int{} // firings per instant (second)
	for _, in := range due {
		crowd[in.NextRun.Unix()]++
	}
	rate := float64(f.ClaimRate)
	if f.ClaimRate == 0 {
		rate = DefaultClaimRate
	}
	place := map[int64]int{} // the next firing's place in its instant's claim order
	for _, in := range due {
		sec := in.NextRun.Unix()
		lead := leadFor(place[sec], crowd[sec], rate, in.NextRun.Sub(now))
		place[sec]++
		msgs = append(msgs, outgoingEarly(in, message.ReasonSchedule, now, lead))
	}
	if err := f.Queue.Send(ctx, msgs); err != nil {
		return err
	}
	for _, in := range due {
		sent[firing{in.Key, in.NextRun.UnixMilli()}] = true
	}
	st.Due += len(due)
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
