// Command bootstrap is a Sundial function built for the chaos run: the same role constructor
// as the function's own main.go (internal/role/<function>.Lambda), given a hook that wraps
// its DynamoDB and SQS clients with fault injection (throttling, 5xx, duplicate sends) and
// skews its clock, the engine's only source of time, by an offset derived from the seed and
// the process's node name (internal/chaos). The local platform builds it, once per function,
// in place of functions/<function> when its Options.Chaos is set (infra/local/processes.go),
// with the function's name linked in (-X main.function=fetch) and the faults in SUNDIAL_CHAOS.
// The functions deployed never contain it.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/sundialhq/sundial/internal/chaos"
	"github.com/sundialhq/sundial/internal/role"
	"github.com/sundialhq/sundial/internal/role/fetch"
	"github.com/sundialhq/sundial/internal/role/logwriter"
	"github.com/sundialhq/sundial/internal/role/processor"
	"github.com/sundialhq/sundial/internal/role/queued"
	"github.com/sundialhq/sundial/internal/role/recovery"
	_ "github.com/sundialhq/sundial/internal/schedule" // embeds tzdata, as the functions do
)

// function is the function this bootstrap runs, set at link time.
var function string

func main() {
	ctx := context.Background()
	spec := os.Getenv(chaos.EnvVar)
	var ch chaos.Setup
	inject := func(awsCfg aws.Config, o *role.Options) error {
		if spec == "" {
			return fmt.Errorf("the chaos bootstrap needs %s (the faults to inject)", chaos.EnvVar)
		}
		c, err := chaos.Parse(spec)
		if err != nil {
			return fmt.Errorf("invalid chaos configuration: %w", err)
		}
		ch = chaos.New(c, o.Node, dynamodb.NewFromConfig(awsCfg), sqs.NewFromConfig(awsCfg), o.Log)
		o.DynamoDB, o.Clock = ch.DynamoDB, ch.Clock
		o.Log.Warn("chaos: faults injected", "chaos", c.String(), "node", o.Node, "clock_offset_ms", ch.Clock.Offset.Milliseconds())
		return nil
	}
	// The functions that send to the queues send through the same injector.
	injectQueued := func(awsCfg aws.Config, o *role.Options, q *queued.Options) error {
		if err := inject(awsCfg, o); err != nil {
			return err
		}
		q.SQS = ch.SQS
		return nil
	}
	switch function {
	case "fetch":
		lambda.Start(fetch.Lambda(ctx, injectQueued))
	case "processor":
		lambda.Start(processor.Lambda(ctx, injectQueued))
	case "recovery":
		lambda.Start(recovery.Lambda(ctx, injectQueued))
	case "logwriter":
		lambda.Start(logwriter.Lambda(ctx, inject))
	default:
		fmt.Fprintf(os.Stderr, "chaos bootstrap: built for %q, not one of fetch, processor, recovery, logwriter (go build -ldflags=-X=main.function=NAME)\n", function)
		os.Exit(2)
	}
}
