package config

import (
	"maps"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/stack"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// template is the environment template.yaml's Globals give every function, for a stack
// whose resources are named as below, with the parameters' defaults.
func template() map[string]string {
	return stack.Outputs{TimersTable: "timers", LogTable: "log", DLQ: "dlq", Queues: [4]string{"q1", "q2", "q3", "q4"}}.Env(nil)
}

func TestFromEnv(t *testing.T) {
	t.Parallel()
	full := template()

	t.Run("ReadsTheTemplatesSettings", func(t *testing.T) {
		t.Parallel()
		c, err := FromEnv(env(full))
		require.NoError(t, err)
		require.Equal(t, "timers", c.TimersTable)
		require.Equal(t, [4]string{"q1", "q2", "q3", "q4"}, c.Queues)
		require.Equal(t, full["SUNDIAL_DUE_SHARDS"], strconv.Itoa(c.DueShards))
		require.Equal(t, full["SUNDIAL_DEFAULT_MAX_RETRIES"], strconv.Itoa(c.DefaultMaxRetries))
		require.Equal(t, full["SUNDIAL_DEFAULT_RETRY_DELAY"], c.DefaultRetryDelay.String())
		require.Equal(t, full["SUNDIAL_LOG_RETENTION_DAYS"], strconv.Itoa(int(c.LogRetention/(24*time.Hour))))
		require.Equal(t, full["SUNDIAL_AUDIT_RETENTION_DAYS"], strconv.Itoa(int(c.AuditRetention/(24*time.Hour))))
		require.Equal(t, full["SUNDIAL_PROCESSOR_TIMEOUT_SECONDS"], strconv.Itoa(int(c.ProcessorTimeout/time.Second)))
		tick, err := RateInterval(full["SUNDIAL_FETCH_SCHEDULE"])
		require.NoError(t, err)
		require.Equal(t, tick, c.Tick)
	})

	// Configuration has one source: a setting the template gives every function has no second
	// default here. Its absence is an error, not the template's default written again in Go.
	t.Run("NoDefaultForWhatTheTemplateGives", func(t *testing.T) {
		t.Parallel()
		optional := map[string]bool{
			"SUNDIAL_DLQ":          true, // empty: no dead-letter queue to read (tests' own stacks)
			"SUNDIAL_ENDPOINT_URL": true, // empty on AWS; not read here (internal/app)
		}
		for name := range full {
			if optional[name] {
				continue
			}
			without := maps.Clone(full)
			delete(without, name)
			_, err := FromEnv(env(without))
			require.ErrorContains(t, err, name+" is required", "FromEnv has a default of its own for %s", name)
		}
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
