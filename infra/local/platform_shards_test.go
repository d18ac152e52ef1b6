package local_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/local"
	"github.com/sundialhq/sundial/internal/testenv"
)

// Changing the stack's DueShards between deploys (4 → 16 → 2 → 4), each a restart of the
// local platform on the same kept database, never strands a timer: every timer keeps firing in
// every phase, and the shards above a lowered count are drained and then no longer read.
func TestDueShardsChangesStrandNoTimer(t *testing.T) {
	testenv.Integration(t)
	t.Parallel()
	dir := t.TempDir()
	var names []string
	var b strings.Builder
	b.WriteString("timers:\n")
	for i := range 24 {
		names = append(names, fmt.Sprintf("S%02d", i))
		fmt.Fprintf(&b, "  - {name: S%02d, schedule: \"every 1s\", timeout: 5s, action: {http: {url: \"http://127.0.0.1:9/x\"}}}\n", i)
	}
	manifest := filepath.Join(dir, "timers.yaml")
	require.NoError(t, os.WriteFile(manifest, []byte(b.String()), 0o644))
	inv := &testenv.Invoker{}

	for _, shards := range []int{4, 16, 2, 4} {
		var logs testenv.SyncBuffer
		began := time.Now()
		p, err := local.Up(context.Background(), local.Options{
			Template:        "../../template.yaml",
			Manifest:        manifest,
			Log:             &logs,
			Params:          map[string]string{"DueShards": fmt.Sprint(shards)},
			AWSOptions:      local.AWSOptions{DataDir: filepath.Join(dir, "db")},
			FunctionOptions: local.FunctionOptions{Tick: time.Second, Invoker: inv, Settings: map[string]string{"SUNDIAL_SHARD_GRACE": "2s"}},
		})
		require.NoError(t, err, "log:\n%s", logs.String())
		t.Logf("DueShards=%d: up in %s", shards, time.Since(began).Round(time.Millisecond))
		before := inv.Snapshot()
		time.Sleep(10 * time.Second)
		// A stranded timer runs 0 times (at most once, overdue, right after the restart); a
		// loaded machine (the test binaries of `make test` run side by side on few CPUs) may
		// delay the first runs after a restart: the slow get 10 s more.
		slow := func() []string {
			after := inv.Snapshot()
			var out []string
			for _, name := range names {
				if after[name]-before[name] < 2 {
					out = append(out, fmt.Sprintf("%s ran %d times", name, after[name]-before[name]))
				}
			}
			return out
		}
		if len(slow()) > 0 {
			t.Logf("DueShards=%d: after 10 s %v", shards, slow())
			for deadline := time.Now().Add(10 * time.Second); len(slow()) > 0 && time.Now().Before(deadline); {
				time.Sleep(200 * time.Millisecond)
			}
			require.Empty(t, slow(), "DueShards=%d, in 20 s", shards)
		}
		span := maxShards(t, p)
		if shards == 2 && span != 2 {
			// Retiring takes a few fetch ticks past the grace; a loaded machine's ticks are slow.
			for deadline := time.Now().Add(15 * time.Second); span != 2 && time.Now().Before(deadline); span = maxShards(t, p) {
				time.Sleep(200 * time.Millisecond)
			}
		}
		require.NoError(t, p.Stop())
		if shards == 2 {
			require.Equal(t, 2, span, "the shards above 2 were drained and retired")
		} else {
			require.Equal(t, shards, span)
		}
		require.Empty(t, p.IAM().Denied, p.IAM().String())
	}
}

func maxShards(t *testing.T, p *local.Platform) int {
	t.Helper()
	out, err := dynamodb.NewFromConfig(p.AWS).GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(p.Outputs.TimersTable),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "META"}, "sk": &types.AttributeValueMemberS{Value: "FETCH"}}})
	require.NoError(t, err)
	var m struct {
		MaxShards int `dynamodbav:"maxShards"`
	}
	require.NoError(t, attributevalue.UnmarshalMap(out.Item, &m))
	return m.MaxShards
}
