package local_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/local"
	"github.com/sundialhq/sundial/internal/dynamo"
	"github.com/sundialhq/sundial/internal/testenv"
	"github.com/sundialhq/sundial/internal/timer"
)

// The execution log comes from the timers table's stream through the log writer function:
// once the platform is drained it holds exactly one entry per execution that has ended.
func TestLogWriterDrained(t *testing.T) {
	testenv.Integration(t)
	t.Parallel()
	dir := t.TempDir()
	names := []string{"LogA", "LogB", "LogC"}
	manifest := filepath.Join(dir, "timers.yaml")
	body := "timers:\n"
	for _, n := range names {
		body += fmt.Sprintf("  - {name: %s, schedule: \"every 1s\", timeout: 5s, action: {http: {url: \"http://127.0.0.1:9/x\"}}}\n", n)
	}
	require.NoError(t, os.WriteFile(manifest, []byte(body), 0o644))
	inv := &testenv.Invoker{}
	var logs testenv.SyncBuffer
	p, err := local.Up(context.Background(), local.Options{
		Template:        "../../template.yaml",
		Manifest:        manifest,
		Log:             &logs,
		FunctionOptions: local.FunctionOptions{Tick: time.Second, Invoker: inv},
	})
	require.NoError(t, err, "log:\n%s", logs.String())
	t.Cleanup(func() { _ = p.Stop() })
	require.Contains(t, p.Schedules(), "logwriter on the timers table's stream")
	ctx := context.Background()

	require.Eventually(t, func() bool {
		for _, n := range names {
			if inv.Calls(n) < 3 {
				return false
			}
		}
		return true
	}, 30*time.Second, 100*time.Millisecond)
	for _, n := range names {
		_, err := p.App.Admin.SetActive(ctx, timer.Key{Timer: n}, false)
		require.NoError(t, err)
	}
	// No run is in progress, and none starts any more.
	require.Eventually(t, func() bool {
		for _, n := range names {
			in, err := p.App.Store.Get(ctx, timer.Key{Timer: n})
			if err != nil || in.Running() {
				return false
			}
		}
		return true
	}, 20*time.Second, 100*time.Millisecond)
	runs := inv.Snapshot()
	time.Sleep(2 * time.Second)
	require.Equal(t, runs, inv.Snapshot(), "deactivated timers do not run")

	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	began := time.Now()
	require.NoError(t, p.Drained(dctx))
	t.Logf("drained in %s", time.Since(began).Round(time.Millisecond))
	for _, n := range names {
		logged, err := p.App.Store.Logs(ctx, dynamo.LogQuery{Key: &timer.Key{Timer: n}, Limit: 1000})
		require.NoError(t, err)
		require.Len(t, logged, runs[n], "%s: one log entry per execution", n)
		for _, e := range logged {
			require.Equal(t, timer.OutcomeSuccess, e.Outcome)
		}
	}
	st := p.Streams()
	require.Len(t, st, 1)
	require.Zero(t, st[0].Pending)
	require.Positive(t, st[0].Delivered)
	require.Positive(t, st[0].Filtered, "claims and edits do not reach the function")
	require.Empty(t, st[0].LastError)
	require.Empty(t, p.IAM().Denied, p.IAM().String())
}

// On a kept database the log writer reads on where it stopped, as Lambda's event source
// mapping keeps its position across deploys: the two runs read the stream's records once
// between them.
func TestLogWriterKeepsItsPositionAcrossRestarts(t *testing.T) {
	dir := t.TempDir()
	manifest := filepath.Join(dir, "timers.yaml")
	require.NoError(t, os.WriteFile(manifest, []byte(`timers:
  - {name: Kept, schedule: "every 1s", timeout: 5s, action: {http: {url: "http://127.0.0.1:9/x"}}}
`), 0o644))
	inv := &testenv.Invoker{}
	ctx := context.Background()
	var read int64
	var arn string
	for run := range 2 {
		var logs testenv.SyncBuffer
		p, err := local.Up(ctx, local.Options{
			Template:        "../../template.yaml",
			Manifest:        manifest,
			Log:             &logs,
			AWSOptions:      local.AWSOptions{DataDir: filepath.Join(dir, "db")},
			FunctionOptions: local.FunctionOptions{Tick: time.Second, Invoker: inv},
		})
		require.NoError(t, err, "log:\n%s", logs.String())
		want := inv.Calls("Kept") + 2
		require.Eventually(t, func() bool { return inv.Calls("Kept") >= want }, 30*time.Second, 100*time.Millisecond)
		require.NoError(t, p.StopFunctions()) // the log writer delivers what was written, then stops
		st := p.Streams()
		require.Len(t, st, 1)
		require.Zero(t, st[0].Pending)
		read += st[0].Read
		arn = st[0].StreamArn
		if run == 1 {
			total := streamLength(t, p, arn)
			require.EqualValues(t, total, read, "each record of the stream read once over the two runs")
			logged, err := p.App.Store.Logs(ctx, dynamo.LogQuery{Key: &timer.Key{Timer: "Kept"}, Limit: 1000})
			require.NoError(t, err)
			require.Len(t, logged, inv.Calls("Kept"))
		}
		require.NoError(t, p.Stop())
	}
	require.FileExists(t, filepath.Join(dir, "db", local.StreamPositionsFile))
}

// streamLength counts the records of a stream (one shard on DynamoDB Local).
func streamLength(t *testing.T, p *local.Platform, arn string) int {
	t.Helper()
	ctx := context.Background()
	c := dynamodbstreams.NewFromConfig(p.AWS)
	d, err := c.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(arn)})
	require.NoError(t, err)
	n := 0
	for _, sh := range d.StreamDescription.Shards {
		it, err := c.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(arn), ShardId: sh.ShardId,
			ShardIteratorType: streamtypes.ShardIteratorTypeTrimHorizon})
		require.NoError(t, err)
		for iter := it.ShardIterator; iter != nil; {
			out, err := c.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: iter})
			require.NoError(t, err)
			n += len(out.Records)
			if len(out.Records) == 0 {
				break
			}
			iter = out.NextShardIterator
		}
	}
	return n
}
