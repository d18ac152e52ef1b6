package role

import (
	"context"
	"log/slog"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"

	"github.com/sundialhq/sundial/internal/awshttp"
	"github.com/sundialhq/sundial/internal/config"
)

// Hook changes a function's options once its AWS configuration and node name are known,
// before its role is built: the chaos run's bootstraps (infra/chaosrun/bootstrap) wrap the
// clients with fault injection this way. Production functions pass none.
type Hook func(awsCfg aws.Config, o *Options) error

// FromLambdaEnv builds the base inside a Lambda function (or a process started like one):
// configuration from SUNDIAL_* variables, AWS clients from the default chain (which honours
// AWS_ENDPOINT_URL), SDK retries with backoff for throttling, whole responses read before
// they are parsed (internal/awshttp). A configuration it cannot use ends the process.
func FromLambdaEnv(ctx context.Context, role string, hooks ...Hook) *Base {
	log := LambdaLogger(role)
	setLambdaMemoryLimit(os.Getenv)
	cfg, err := config.FromEnv(os.Getenv)
	if err != nil {
		log.Error("invalid configuration", "error", err)
		os.Exit(1)
	}
	awsCfg, err := LambdaAWS(ctx)
	if err != nil {
		log.Error("AWS configuration", "error", err)
		os.Exit(1)
	}
	opts := Options{Log: log, Node: DefaultNode(role)}
	for _, h := range hooks {
		if err := h(awsCfg, &opts); err != nil {
			log.Error("options", "error", err)
			os.Exit(1)
		}
	}
	b, err := New(awsCfg, cfg, opts)
	if err != nil {
		log.Error("wiring", "error", err)
		os.Exit(1)
	}
	return b
}

// LambdaAWS is a function's AWS configuration: the default chain, SDK retries with backoff
// for throttling, whole responses read before they are parsed, and SUNDIAL_ENDPOINT_URL as
// the endpoint when set (sam local invoke against the local platform; template.yaml declares
// it empty).
func LambdaAWS(ctx context.Context) (aws.Config, error) {
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx, awsconfig.WithRetryMaxAttempts(6))
	if err != nil {
		return aws.Config{}, err
	}
	awshttp.Wrap(&awsCfg)
	if ep := os.Getenv("SUNDIAL_ENDPOINT_URL"); ep != "" {
		awsCfg.BaseEndpoint = &ep
	}
	return awsCfg, nil
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
