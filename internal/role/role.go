// Package role holds what every Sundial function is built on (Base: configuration, the
// timers and log tables, the metrics; internal/role/queued adds the priority queues for the
// roles that send firings), and its subpackages one small
// constructor per role — fetch, processor, recovery, logwriter, auditwriter, operator (the
// API, publish, the CLI and the public client), api and publish — each linking only what its
// role uses. A function's main.go calls its role's Lambda; the local platform and the tests
// build the same roles with options (a clock, fault-injecting clients) instead of the
// Lambda environment.
package role

import (
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/sundialhq/sundial/internal/config"
	"github.com/sundialhq/sundial/internal/dynamo"
	"github.com/sundialhq/sundial/internal/emf"
	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/timer"
)

// Options are what differs between Lambda and the local platform or a test.
type Options struct {
	Node  string // isRunningBy; default from the Lambda environment or host and pid
	Clock timer.Clock
	Log   *slog.Logger
	// DynamoDB overrides the client (fault injection, request counting); the queues' SQS
	// client is internal/role/queued's.
	DynamoDB dynamo.API
	// Metrics receives the CloudWatch Embedded Metric Format lines: stdout on Lambda (the
	// default), the function log locally.
	Metrics io.Writer
}

// Base is what every role is built on.
type Base struct {
	Config config.Config
	// AWS is the configuration the role's own clients are built from.
	AWS   aws.Config
	Node  string
	Clock timer.Clock
	Log   *slog.Logger
	Store *dynamo.Store
	// Metrics writes the EMF metric lines (the engine's and the publish and API functions').
	Metrics *emf.Recorder
}

// New builds the base on AWS clients made from awsCfg (or the options' own).
func New(awsCfg aws.Config, cfg config.Config, o Options) (*Base, error) {
	if o.Clock == nil {
		o.Clock = timer.SystemClock{}
	}
	if o.Log == nil {
		o.Log = slog.New(slog.NewJSONHandler(os.Stderr, nil))
	}
	if o.Node == "" {
		o.Node = DefaultNode("processor")
	}
	if o.Metrics == nil {
		o.Metrics = os.Stdout
	}
	ddb := o.DynamoDB
	if ddb == nil {
		ddb = dynamodb.NewFromConfig(awsCfg)
	}
	store := dynamo.New(ddb, cfg.TimersTable, cfg.LogTable, cfg.LogRetention)
	store.SetShards(cfg.DueShards) // instances move to this deployment's shards as they run
	return &Base{Config: cfg, AWS: awsCfg, Node: o.Node, Clock: o.Clock, Log: o.Log, Store: store,
		Metrics: emf.NewRecorder(o.Metrics, o.Clock.Now)}, nil
}

// Lookahead is how far ahead of now the fetch sends firings (engine.Fetcher.Lookahead), which
// bounds how early the processor may see one (engine.MaxAheadFor).
func Lookahead(cfg config.Config) time.Duration { return 2*cfg.Tick + cfg.IndexLag }

var _ engine.Metrics = (*emf.Recorder)(nil)

// NewExecutionID returns a random execution id (the lease owner token).
func NewExecutionID() string { return rand.Text()[:20] }

// DefaultNode names this process: the Lambda function and log stream, or host and pid.
func DefaultNode(role string) string {
	if fn := os.Getenv("AWS_LAMBDA_FUNCTION_NAME"); fn != "" {
		return fn + "/" + os.Getenv("AWS_LAMBDA_LOG_STREAM_NAME")
	}
	host, _ := os.Hostname()
	return fmt.Sprintf("%s@%s:%d", role, host, os.Getpid())
}
