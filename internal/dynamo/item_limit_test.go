package dynamo_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/inmem"
	"github.com/sundialhq/sundial/internal/itemsize"
	"github.com/sundialhq/sundial/internal/manifest"
	"github.com/sundialhq/sundial/internal/testenv"
	"github.com/sundialhq/sundial/internal/timer"
)

// check and sync agree on DynamoDB's item limit: the largest property `sundial check` accepts
// syncs into DynamoDB (its instance and definition items stored), and an item over 400 KB is
// refused by DynamoDB (Local) itself — which is why check must refuse what would make one.
func TestManifestAtTheItemLimitSyncs(t *testing.T) {
	testenv.Integration(t)
	t.Parallel()
	ctx := context.Background()
	s, shards := newStore(t)
	app := testenv.Unique(t)
	doc := func(size int) string {
		return fmt.Sprintf("app: %s\ntimers:\n  - name: Big\n    schedule: \"every 1h\"\n    action: {http: {url: \"http://127.0.0.1:9/x\"}}\n    properties: {p: %s}\n", app, strings.Repeat("x", size))
	}
	m, err := manifest.Parse(strings.NewReader(doc(1)))
	require.NoError(t, err)
	n, err := m.Timers[0].InstanceItemBytes()
	require.NoError(t, err)
	d, err := m.Timers[0].DefinitionItemBytes()
	require.NoError(t, err)
	fits := itemsize.MaxItemBytes - max(n, d) + 1
	_, err = manifest.Parse(strings.NewReader(doc(fits + 1)))
	require.ErrorContains(t, err, "over DynamoDB's 409600-byte item limit", "check refuses one byte more")
	m, err = manifest.Parse(strings.NewReader(doc(fits)))
	require.NoError(t, err)

	svc := &admin.Service{Store: s, Queue: &inmem.Queue{}, Clock: timer.NewManualClock(time.Now().UTC().Truncate(time.Millisecond)), Shards: shards}
	_, err = svc.Publish(ctx, m, "deploy-"+app)
	require.NoError(t, err, "what check accepts, sync writes")
	in, err := s.Get(ctx, timer.Key{App: app, Timer: "Big"})
	require.NoError(t, err)
	require.Len(t, in.Properties["p"], fits)

	// DynamoDB refuses an item over the limit (so an unchecked manifest failed mid-sync).
	cfg, out := testenv.Stack(t)
	_, err = dynamodb.NewFromConfig(cfg).PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(out.TimersTable), Item: map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "T#" + app + ":Huge"}, "sk": &types.AttributeValueMemberS{Value: "I#"},
		"p": &types.AttributeValueMemberS{Value: strings.Repeat("x", itemsize.MaxItemBytes)},
	}})
	require.ErrorContains(t, err, "size")
}
