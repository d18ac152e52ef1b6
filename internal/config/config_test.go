package config

import (
	"maps"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestFromEnv(t *testing.T) {
	t.Parallel()
	full := map[string]string{
		"SUNDIAL_TIMERS_TABLE": "timers", "SUNDIAL_LOG_TABLE": "log",
		"SUNDIAL_QUEUE_P1": "q1", "SUNDIAL_QUEUE_P2": "q2", "SUNDIAL_QUEUE_P3": "q3", "SUNDIAL_QUEUE_P4": "q4",
	}

	t.Run("AppliesDefaults", func(t *testing.T) {
		t.Parallel()
		c, err := FromEnv(env(full))
		require.NoError(t, err)
		require.Equal(t, 4, c.DueShards)
		require.Equal(t, 3, c.DefaultMaxRetries)
		require.Equal(t, time.Minute, c.Tick)
		require.Equal(t, 30*24*time.Hour, c.LogRetention)
		back, err := FromEnv(env(c.Env()))
		require.NoError(t, err)
		require.Equal(t, c, back, "Env is the inverse of FromEnv")
	})

	t.Run("LambdaEndpoint", func(t *testing.T) {
		t.Parallel()
		c, err := FromEnv(env(full))
		require.NoError(t, err)
		require.Empty(t, c.LambdaEndpoint, "unset: the Lambda client uses the AWS endpoint")
		require.NotContains(t, c.Env(), "SUNDIAL_LAMBDA_ENDPOINT", "an unset endpoint is not passed on")

		with := map[string]string{"SUNDIAL_LAMBDA_ENDPOINT": "http://127.0.0.1:4567"}
		maps.Copy(with, full)
		c, err = FromEnv(env(with))
		require.NoError(t, err)
		require.Equal(t, "http://127.0.0.1:4567", c.LambdaEndpoint)
		require.Equal(t, "http://127.0.0.1:4567", c.Env()["SUNDIAL_LAMBDA_ENDPOINT"])
		back, err := FromEnv(env(c.Env()))
		require.NoError(t, err)
		require.Equal(t, c, back)

		for _, bad := range []string{"127.0.0.1:4567", "ftp://host", "http://", "::"} {
			with["SUNDIAL_LAMBDA_ENDPOINT"] = bad
			_, err := FromEnv(env(with))
			require.ErrorContains(t, err, `SUNDIAL_LAMBDA_ENDPOINT=`+strconv.Quote(bad)+`: want an absolute http:// or https:// URL`)
		}
	})

	t.Run("ReportsEveryProblem", func(t *testing.T) {
		t.Parallel()
		bad := map[string]string{"SUNDIAL_DUE_SHARDS": "0", "SUNDIAL_TICK": "soon"}
		_, err := FromEnv(env(bad))
		for _, want := range []string{"SUNDIAL_TIMERS_TABLE is required", "SUNDIAL_QUEUE_P4 is required", `SUNDIAL_DUE_SHARDS="0"`, `SUNDIAL_TICK="soon"`} {
			require.ErrorContains(t, err, want)
		}
	})
}
