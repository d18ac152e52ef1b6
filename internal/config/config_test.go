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
	})

	t.Run("TickFromTheFetchSchedule", func(t *testing.T) {
		t.Parallel()
		with := maps.Clone(full)
		with["SUNDIAL_FETCH_SCHEDULE"] = "rate(5 minutes)"
		c, err := FromEnv(env(with))
		require.NoError(t, err)
		require.Equal(t, 5*time.Minute, c.Tick, "the fetch looks ahead by its own schedule's interval")
		require.Equal(t, 10*time.Minute+30*time.Second, c.LostAfter, "recovery waits for what the fetch has not sent yet")
		with["SUNDIAL_TICK"] = "2s"
		c, err = FromEnv(env(with))
		require.NoError(t, err)
		require.Equal(t, 2*time.Second, c.Tick, "SUNDIAL_TICK (local sub-minute ticks) wins")
		for bad, msg := range map[string]string{
			"rate(8 minutes)":   "above 7m30s",
			"cron(0 * * * ? *)": "not a rate() expression",
			"rate(1 minutes)":   "the unit must be",
		} {
			with := maps.Clone(full)
			with["SUNDIAL_FETCH_SCHEDULE"] = bad
			_, err := FromEnv(env(with))
			require.ErrorContains(t, err, msg, bad)
		}
	})

	t.Run("IndexLag", func(t *testing.T) {
		t.Parallel()
		c, err := FromEnv(env(full))
		require.NoError(t, err)
		require.Equal(t, 2*time.Second, c.IndexLag, "twice the second AWS names")
		with := maps.Clone(full)
		with["SUNDIAL_INDEX_LAG"] = "0s"
		c, err = FromEnv(env(with))
		require.NoError(t, err)
		require.Zero(t, c.IndexLag, "0: one look per tick")
		with["SUNDIAL_INDEX_LAG"] = "2m"
		_, err = FromEnv(env(with))
		require.ErrorContains(t, err, `SUNDIAL_INDEX_LAG="2m": want a duration in 0s..1m0s`)
	})

	t.Run("LambdaEndpoint", func(t *testing.T) {
		t.Parallel()
		c, err := FromEnv(env(full))
		require.NoError(t, err)
		require.Empty(t, c.LambdaEndpoint, "unset: the Lambda client uses the AWS endpoint")

		with := map[string]string{"SUNDIAL_LAMBDA_ENDPOINT": "http://127.0.0.1:4567"}
		maps.Copy(with, full)
		c, err = FromEnv(env(with))
		require.NoError(t, err)
		require.Equal(t, "http://127.0.0.1:4567", c.LambdaEndpoint)

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

func TestRateInterval(t *testing.T) {
	t.Parallel()
	for expr, want := range map[string]time.Duration{"rate(1 minute)": time.Minute, "rate(5 minutes)": 5 * time.Minute, "rate(2 hours)": 2 * time.Hour, "rate(1 day)": 24 * time.Hour} {
		got, err := RateInterval(expr)
		require.NoError(t, err, expr)
		require.Equal(t, want, got, expr)
	}
	for _, bad := range []string{"rate(1 minutes)", "rate(5 minute)", "rate(0 minutes)", "rate(5 seconds)", "cron(0 * * * ? *)", "rate(x minutes)", "rate(5 minutes"} {
		_, err := RateInterval(bad)
		require.Error(t, err, bad)
	}
}
