package dynamo

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/actionspec"
	"github.com/sundialhq/sundial/internal/timer"
)

// The log entry of a Run Now's run, made from the stream's images, has its overrides (the old
// image's runParams), and they survive the log item's round trip.
func TestExecutionFromImagesParameters(t *testing.T) {
	base := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	def := "100"
	idle := timer.Instance{
		Key: timer.Key{Timer: "Reload"},
		Settings: timer.Settings{Schedule: "every 5m", Timeout: time.Minute, Action: actionspec.Spec{HTTP: &actionspec.HTTPSpec{URL: "http://x"}},
			Parameters: timer.Params{{Name: "limit", Type: timer.ParamInteger, Default: &def}}},
		Active: true, NextRun: base, Version: 7, RunParams: `{"limit":7}`,
	}
	running, err := idle.Claim(timer.Claim{Due: base, ScheduledAt: base, Attempt: 1, ExecutionID: "exec-1", By: "p1", Now: base})
	require.NoError(t, err)
	dec := timer.Decide(running, timer.RunResult{Outcome: timer.OutcomeSuccess, Finished: base.Add(time.Second)}, func(time.Time) (time.Time, bool) { return base.Add(5 * time.Minute), true })
	require.True(t, dec.ClearRunParams)
	after, err := running.Apply(dec)
	require.NoError(t, err)
	require.Empty(t, after.RunParams)
	o, n := images(t, running, after, map[string]types.AttributeValue{"lastExecId": &types.AttributeValueMemberS{Value: "exec-1"}})
	got, ok, err := ExecutionFromImages(o, n)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, map[string]any{"limit": 7.0}, got.Parameters)

	item, err := attributevalue.MarshalMap(toLogItem(got, time.Hour))
	require.NoError(t, err)
	var back logItem
	require.NoError(t, attributevalue.UnmarshalMap(item, &back))
	require.Equal(t, got.Parameters, back.execution().Parameters)

	var it instanceItem
	o2, err := attributevalue.MarshalMap(toItem(idle))
	require.NoError(t, err)
	require.NoError(t, attributevalue.UnmarshalMap(o2, &it))
	require.Equal(t, idle.Parameters, it.instance().Parameters, "the declarations round-trip in the instance item")
}
