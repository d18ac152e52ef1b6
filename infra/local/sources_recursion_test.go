package local_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/local"
	"github.com/sundialhq/sundial/internal/testenv"
)

// Lambda stops an SQS → function → SQS chain at the function's 17th invocation unless the
// function's RecursiveLoop is Allow (https://docs.aws.amazon.com/lambda/latest/dg/invocation-recursion.html),
// and the processor sends a frequent timer's next firing itself, from the invocation that ran
// the last one: every run of an `every 2s` timer is one more hop of one chain. Through the local
// platform, whose SQS event source counts the chain's lineage as Lambda does, with the
// template's own schedules (the fetch every minute, as on AWS), the timer runs every 2 s for a
// whole minute — it would stop after 16 runs without RecursiveLoop: Allow on the processor.
func TestFrequentTimerRunsPastLambdaRecursionLimit(t *testing.T) {
	testenv.Integration(t)
	t.Parallel()
	manifest := writeManifest(t, []byte(
		"timers:\n  - {name: Every2s, schedule: \"every 2s\", timeout: 5s, action: {http: {url: \"http://127.0.0.1:9/x\"}}}\n"))
	inv := &testenv.Invoker{}
	var logs testenv.SyncBuffer
	p, err := local.Up(context.Background(), local.Options{Template: "../../template.yaml", Manifest: manifest, Log: &logs, FunctionOptions: local.FunctionOptions{Invoker: inv}})
	require.NoError(t, err, "log:\n%s", logs.String())
	t.Cleanup(func() { _ = p.Stop() })

	time.Sleep(60 * time.Second)
	runs := inv.Calls("Every2s")
	var stopped []string
	for line := range strings.Lines(logs.String()) {
		if strings.Contains(line, "RECURSIVE LOOP DETECTED") {
			stopped = append(stopped, line)
		}
	}
	t.Logf("Every2s ran %d times in 60 s; %d messages held back by the recursion limit", runs, len(stopped))
	require.Empty(t, stopped, "Lambda's recursive loop detection stopped the processor's chain")
	// 30 at best; a loaded machine's fetch and cold start take a few seconds of the minute.
	require.GreaterOrEqual(t, runs, 24, "an every-2s timer runs all minute, not 16 times")
}
