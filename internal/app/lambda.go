package app

import (
	"context"
	"log/slog"
	"os"
	"strings"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/sundialhq/sundial/internal/awshttp"
	"github.com/sundialhq/sundial/internal/chaos"
	"github.com/sundialhq/sundial/internal/config"
)

// FromLambdaEnv builds the App inside a Lambda function (or a process started like one):
// configuration from SUNDIAL_* variables, AWS clients from the default chain (which honours
// AWS_ENDPOINT_URL), SDK retries with backoff for throttling, whole responses read before
// they are parsed (internal/awshttp).
func FromLambdaEnv(ctx context.Context, role string) *App {
	log := LambdaLogger(role)
	setLambdaMemoryLimit(os.Getenv)
	cfg, err := config.FromEnv(os.Getenv)
	if err != nil {
		log.Error("invalid configuration", "error", err)
		os.Exit(1)
	}
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx, awsconfig.WithRetryMaxAttempts(6))
	if err != nil {
		log.Error("AWS configuration", "error", err)
		os.Exit(1)
	}
	awshttp.Wrap(&awsCfg)
	if ep := os.Getenv("SUNDIAL_ENDPOINT_URL"); ep != "" {
		// sam local invoke against the local platform (template.yaml declares it empty).
		awsCfg.BaseEndpoint = &ep
	}
	opts := Options{Log: log, Node: DefaultNode(role)}

	// Chaos test hook. SUNDIAL_CHAOS is set only by the local chaos harness (infra/chaosrun),
	// never by template.yaml: it wraps this process's DynamoDB and SQS clients with fault
	// injection (throttling, 5xx, duplicate sends) and skews its clock, the engine's only
	// source of time, by an offset derived from the seed and this node's name.
	if spec := os.Getenv(chaos.EnvVar); spec != "" {
		c, err := chaos.Parse(spec)
		if err != nil {
			log.Error("invalid chaos configuration", "error", err)
			os.Exit(1)
		}
		ch := chaos.New(c, opts.Node, dynamodb.NewFromConfig(awsCfg), sqs.NewFromConfig(awsCfg), log)
		opts.DynamoDB, opts.SQS, opts.Clock = ch.DynamoDB, ch.SQS, ch.Clock
		log.Warn("chaos: faults injected", "chaos", c.String(), "node", opts.Node, "clock_offset_ms", ch.Clock.Offset.Milliseconds())
	}

	a, err := New(awsCfg, cfg, opts)
	if err != nil {
		log.Error("wiring", "error", err)
		os.Exit(1)
	}
	return a
}

// LambdaLogger is a function's JSON logger at the level Lambda's advanced logging controls set
// (LoggingConfig.ApplicationLogLevel reaches the function as AWS_LAMBDA_LOG_LEVEL; Info when
// unset). At DEBUG, every successful execution gets its own line too.
func LambdaLogger(role string) *slog.Logger {
	return slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: LogLevel(os.Getenv("AWS_LAMBDA_LOG_LEVEL"))})).With("function", role)
}

// LogLevel maps Lambda's application log levels (TRACE, DEBUG, INFO, WARN, ERROR, FATAL) to
// slog's; anything else is Info.
func LogLevel(lambdaLevel string) slog.Level {
	switch strings.ToUpper(strings.TrimSpace(lambdaLevel)) {
	case "TRACE", "DEBUG":
		return slog.LevelDebug
	case "WARN":
		return slog.LevelWarn
	case "ERROR", "FATAL":
		return slog.LevelError
	default:
		return slog.LevelInfo
	}
}
