// Package processor is the processor function's role: the engine's Processor, which claims
// each firing, invokes its action (HTTP, or Lambda) and finishes it.
package processor

import (
	"context"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/sundialhq/sundial/internal/action"
	"github.com/sundialhq/sundial/internal/action/lambdainvoke"
	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/role"
	"github.com/sundialhq/sundial/internal/role/queued"
)

// New builds the processor; inv invokes the actions (nil: HTTP and Lambda, as deployed).
func New(b *queued.Base, inv engine.Invoker) *engine.Processor {
	if inv == nil {
		inv = action.Dispatcher{HTTP: &action.HTTPInvoker{}, Lambda: &lambdainvoke.Invoker{Client: lambdainvoke.NewClient(b.AWS, b.Config.LambdaEndpoint)}}
	}
	return &engine.Processor{
		Store: b.Store, Queue: b.Queues, Invoker: inv, Clock: b.Clock, Log: b.Log, Metrics: b.Metrics, Node: b.Node, NewID: role.NewExecutionID,
		MaxEarly: engine.MaxLead + 2*time.Second, MaxAhead: engine.MaxAheadFor(role.Lookahead(b.Config)), FailedBackoff: b.Config.FailedBackoff,
		DeadlineMargin: 3 * time.Second,
	}
}

// Lambda is the processor function's handler (SQS event source with ReportBatchItemFailures)
// wired from the Lambda environment (hooks: queued.Hook).
func Lambda(ctx context.Context, hooks ...queued.Hook) func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
	return New(queued.FromLambdaEnv(ctx, "processor", hooks...), nil).Handle
}
