// Package queued is the base of the roles that send firings to the priority queues (fetch,
// processor, recovery and the operator's, through the API, publish and CLI): role.Base and
// the queues. The roles that only read and write tables (the log and audit writers) are built
// on role.Base alone and do not link the SQS client (functions/deps_test.go).
package queued

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/queue"
	"github.com/sundialhq/sundial/internal/role"
)

// Base is role.Base with the priority queues.
type Base struct {
	*role.Base
	// Queues are the priority queues, through Options.SQS when set.
	Queues *queue.Queues
}

// Options override the queues' SQS client (fault injection, request counting).
type Options struct {
	SQS queue.API
}

// Hook changes a queued function's options once its AWS configuration and node name are
// known, as role.Hook does, and its SQS client (the chaos run's fault injection).
type Hook func(awsCfg aws.Config, o *role.Options, q *Options) error

// New adds the queues to b, on api (nil: an SQS client made from b.AWS).
func New(b *role.Base, api queue.API) (*Base, error) {
	if api == nil {
		api = sqs.NewFromConfig(b.AWS)
	}
	qs, err := queue.New(api, b.Config.Queues)
	if err != nil {
		return nil, fmt.Errorf("queues: %w", err)
	}
	return &Base{Base: b, Queues: qs}, nil
}

// FromLambdaEnv is role.FromLambdaEnv with the queues: the base of a queued function wired
// from the Lambda environment.
func FromLambdaEnv(ctx context.Context, name string, hooks ...Hook) *Base {
	var q Options
	rh := make([]role.Hook, len(hooks))
	for i, h := range hooks {
		rh[i] = func(awsCfg aws.Config, o *role.Options) error { return h(awsCfg, o, &q) }
	}
	b := role.FromLambdaEnv(ctx, name, rh...)
	qb, err := New(b, q.SQS)
	if err != nil {
		b.Log.Error("wiring", "error", err)
		os.Exit(1)
	}
	return qb
}

// Reporter ends async executions (their heartbeats and outcomes): the public client's.
func (b *Base) Reporter() *engine.Reporter {
	return &engine.Reporter{Store: b.Store, Queue: b.Queues, Clock: b.Clock, Log: b.Log, Metrics: b.Metrics}
}
