package main

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/sundialhq/sundial/infra/emulator"
	"github.com/sundialhq/sundial/internal/timer"
)

// endpointCost is what the local endpoint costs the calls a firing cannot avoid: the
// ceiling's loop through the endpoint (every call's signature verified, checked against the
// caller's policies, DynamoDB Local's ARNs translated, as every function's call is) and
// straight to the engines, on two stacks alike, alternately.
type endpointCost struct {
	Workers int `json:"workers"`
	Rounds  int `json:"rounds"`
	// Firings per second of each path, the mean of its rounds.
	ViaEndpoint float64 `json:"via_endpoint_firings_per_s"`
	Direct      float64 `json:"direct_firings_per_s"`
	// Ratio is ViaEndpoint ÷ Direct: 1 would be an endpoint that costs nothing.
	Ratio float64 `json:"ratio"`
}

// measureEndpointCost runs `rounds` rounds of `each` per path at `workers` batches in flight.
func (e *env) measureEndpointCost(ctx context.Context, timers, workers, rounds int, each time.Duration) (endpointCost, error) {
	via, err := e.deploy(ctx, "bench-endpoint-via", time.Minute, nil)
	if err != nil {
		return endpointCost{}, err
	}
	direct, err := e.deploy(ctx, "bench-endpoint-direct", time.Minute, nil)
	if err != nil {
		return endpointCost{}, err
	}
	ddbURL, sqsURL := e.local.Engines()
	// The same configuration (counted; the engines check only their secret), without the
	// endpoint.
	cfg := e.aws.Copy()
	emulator.WithSecret(&cfg, e.local.EngineSecret())
	ddb := dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(ddbURL) })
	sq := sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(sqsURL) })
	paths := [2]*ceilingBench{}
	if paths[0], err = e.newCeiling(ctx, via, timer.DefaultPriority, timers); err != nil {
		return endpointCost{}, err
	}
	if paths[1], err = e.newCeilingOn(ctx, direct, timer.DefaultPriority, timers, ddb, sq); err != nil {
		return endpointCost{}, fmt.Errorf("straight to the engines: %w", err)
	}
	for _, c := range paths { // a round each to warm the engines' JIT, not counted
		if _, err := c.run(ctx, workers, each/2); err != nil {
			return endpointCost{}, err
		}
	}
	var sum [2]float64
	for round := range rounds {
		for i, c := range paths {
			r, err := c.run(ctx, workers, each)
			if err != nil {
				return endpointCost{}, err
			}
			sum[i] += r.PerSecond
			e.log.Info("endpoint cost", "round", round+1, "path", [2]string{"via the endpoint", "direct"}[i], "firings_per_s", fmt.Sprintf("%.1f", r.PerSecond))
		}
	}
	out := endpointCost{Workers: workers, Rounds: rounds, ViaEndpoint: sum[0] / float64(rounds), Direct: sum[1] / float64(rounds)}
	if out.Direct > 0 {
		out.Ratio = out.ViaEndpoint / out.Direct
	}
	return out, nil
}
