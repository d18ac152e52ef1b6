package role_test

import (
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/role"
)

// TestLogLevel: Lambda's application log levels (LoggingConfig.ApplicationLogLevel, given to the
// function as AWS_LAMBDA_LOG_LEVEL) map to slog's; unset or unknown is Info.
func TestLogLevel(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]slog.Level{
		"": slog.LevelInfo, "INFO": slog.LevelInfo, "TRACE": slog.LevelDebug, "debug": slog.LevelDebug,
		" WARN ": slog.LevelWarn, "ERROR": slog.LevelError, "FATAL": slog.LevelError, "verbose": slog.LevelInfo,
	} {
		require.Equal(t, want, role.LogLevel(in), "AWS_LAMBDA_LOG_LEVEL=%q", in)
	}
}
