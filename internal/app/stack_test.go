package app_test

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/stack"
	"github.com/sundialhq/sundial/internal/app"
)

// TestForStack: a stack's outputs and parameters give the configuration its functions run with.
func TestForStack(t *testing.T) {
	t.Parallel()
	outs := stack.Outputs{TimersTable: "timers", LogTable: "log", DLQ: "dlq", Queues: [4]string{"q1", "q2", "q3", "q4"},
		DueShards: 16, Parameters: map[string]string{"FetchTickMinutes": "5", "DefaultRetryDelaySeconds": "30"}}
	a, err := app.ForStack(aws.Config{Region: "us-east-1"}, outs, app.Options{Node: "test"})
	require.NoError(t, err)
	require.Equal(t, "timers", a.Config.TimersTable)
	require.Equal(t, [4]string{"q1", "q2", "q3", "q4"}, a.Config.Queues)
	require.Equal(t, 16, a.Config.DueShards)
	require.Equal(t, 5*time.Minute, a.Config.Tick)
	require.Equal(t, 30*time.Second, a.Config.DefaultRetryDelay)
	require.Equal(t, 16, a.Admin.Shards)
}
