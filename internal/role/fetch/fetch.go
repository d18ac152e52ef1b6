// Package fetch is the fetch function's role: the engine's Fetcher on the timers table and
// the priority queues.
package fetch

import (
	"context"

	"github.com/aws/aws-lambda-go/events"

	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/role"
	"github.com/sundialhq/sundial/internal/role/queued"
)

// New builds the fetcher.
func New(b *queued.Base) *engine.Fetcher {
	c := b.Config
	return &engine.Fetcher{Store: b.Store, Queue: b.Queues, Clock: b.Clock, Log: b.Log, Metrics: b.Metrics, Shards: c.DueShards,
		Lookahead: role.Lookahead(c), IndexLag: c.IndexLag, ShardGrace: c.ShardGrace, ClaimRate: c.ClaimRate, Calendars: b.Store}
}

// Handler is the fetch function's Lambda handler (EventBridge scheduled event).
func Handler(f *engine.Fetcher) func(context.Context, events.CloudWatchEvent) (engine.FetchStats, error) {
	return func(ctx context.Context, _ events.CloudWatchEvent) (engine.FetchStats, error) { return f.Run(ctx) }
}

// Lambda is the handler wired from the Lambda environment (hooks: queued.Hook).
func Lambda(ctx context.Context, hooks ...queued.Hook) func(context.Context, events.CloudWatchEvent) (engine.FetchStats, error) {
	return Handler(New(queued.FromLambdaEnv(ctx, "fetch", hooks...)))
}
