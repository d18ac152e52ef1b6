package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/sundialhq/sundial/actionkit"
	"github.com/sundialhq/sundial/examples/orders"
	"github.com/sundialhq/sundial/functions/internal/lambdatest"
	"github.com/sundialhq/sundial/internal/manifest"
	"github.com/sundialhq/sundial/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// The sample action payload (what Sundial's processor invokes the function with for shard 2 of
// examples/orders.yaml's PushOrders05) goes through the handler main.go starts: the completed
// orders of shard 2 (order_id % 5 == 2) are pushed to the third party and marked pushed; the
// other shard's order is left alone. Only properties.endpoint is replaced, by a server
// standing in for the third party.
func TestSampleEvent(t *testing.T) {
	ctx := context.Background()
	table := ordersTable(t)
	lambdatest.Env(t, "orderpush", map[string]string{orders.TableEnv: table})
	raw, p := lambdatest.Event[actionkit.Payload](t)

	// The payload is exactly what the processor sends for that shard: the manifest's properties
	// with the shard's tt_index and tt_total, encoded as the action contract encodes it.
	want, err := json.Marshal(p)
	require.NoError(t, err)
	require.JSONEq(t, string(want), string(raw))
	// The sample is what `make run-orders` sends: its ${SUNDIAL_ACTIONS} is the third party's
	// default address.
	t.Setenv(manifest.ActionsVar, "127.0.0.1:9100")
	m, err := manifest.Load("../../examples/orders.yaml")
	require.NoError(t, err)
	var props map[string]string
	for _, tm := range m.Timers {
		for _, d := range tm.Expand(nil, manifest.Defaults{}) {
			if d.Key.Timer == p.Timer {
				props = d.Settings.Properties
				require.Equal(t, orders.FunctionName, d.Settings.Action.Lambda.Function)
			}
		}
	}
	require.Equal(t, props, p.Properties, "%s's properties in examples/orders.yaml", p.Timer)

	var mu sync.Mutex
	var pushed []int64
	third := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var o orders.Order
		if json.Unmarshal(b, &o) != nil {
			http.Error(w, "not an order", http.StatusBadRequest)
			return
		}
		mu.Lock()
		pushed = append(pushed, o.ID)
		mu.Unlock()
	}))
	t.Cleanup(third.Close)
	p.Properties[orders.PropEndpoint] = third.URL + "/orders"
	payload, err := json.Marshal(p)
	require.NoError(t, err)

	cfg, _ := testenv.Stack(t)
	store := orders.NewStore(dynamodb.NewFromConfig(cfg), table)
	due := orders.Ms(time.Now().Add(-time.Minute))
	for _, id := range []int64{2, 3, 7} {
		require.NoError(t, store.Put(ctx, orders.Order{ID: id, Desc: fmt.Sprint("order ", id), State: orders.StateCompleted,
			PushState: orders.PushInitial, ScheduledPushTime: due, CreateTime: due}))
	}

	h, err := handler(ctx, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	out, err := lambdatest.Invoke(t, "orderpush", h, 60*time.Second, payload)
	require.NoError(t, err)
	var sum orders.Summary
	require.NoError(t, json.Unmarshal(out, &sum))
	require.Equal(t, p.Timer, sum.Timer)
	require.Equal(t, p.ExecutionID, sum.Execution)
	require.Equal(t, 2, sum.Pushed)
	sort.Slice(sum.PushedIDs, func(i, j int) bool { return sum.PushedIDs[i] < sum.PushedIDs[j] })
	require.Equal(t, []int64{2, 7}, sum.PushedIDs)

	mu.Lock()
	sort.Slice(pushed, func(i, j int) bool { return pushed[i] < pushed[j] })
	require.Equal(t, []int64{2, 7}, pushed, "the third party received shard 2's orders")
	mu.Unlock()
	for id, state := range map[int64]int{2: orders.PushDone, 7: orders.PushDone, 3: orders.PushInitial} {
		o, ok, err := store.Get(ctx, id)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, state, o.PushState, "order %d", id)
	}
}

// ordersTable creates an orders table as template.yaml's OrdersTable defines it (the template
// deploys it only with Examples=true, which testenv's stack leaves off).
func ordersTable(t *testing.T) string {
	t.Helper()
	cfg, _ := testenv.Stack(t)
	body, err := os.ReadFile("../../template.yaml")
	require.NoError(t, err)
	type key struct {
		AttributeName string `yaml:"AttributeName"`
		KeyType       string `yaml:"KeyType"`
	}
	var def struct {
		Resources struct {
			OrdersTable struct {
				Properties struct {
					AttributeDefinitions []struct {
						AttributeName string `yaml:"AttributeName"`
						AttributeType string `yaml:"AttributeType"`
					} `yaml:"AttributeDefinitions"`
					KeySchema              []key `yaml:"KeySchema"`
					GlobalSecondaryIndexes []struct {
						IndexName  string `yaml:"IndexName"`
						KeySchema  []key  `yaml:"KeySchema"`
						Projection struct {
							ProjectionType string `yaml:"ProjectionType"`
						} `yaml:"Projection"`
					} `yaml:"GlobalSecondaryIndexes"`
				} `yaml:"Properties"`
			} `yaml:"OrdersTable"`
		} `yaml:"Resources"`
	}
	require.NoError(t, yaml.Unmarshal(body, &def))
	p := def.Resources.OrdersTable.Properties
	require.NotEmpty(t, p.KeySchema, "template.yaml defines OrdersTable")
	keys := func(ks []key) []types.KeySchemaElement {
		out := make([]types.KeySchemaElement, len(ks))
		for i, k := range ks {
			out[i] = types.KeySchemaElement{AttributeName: aws.String(k.AttributeName), KeyType: types.KeyType(k.KeyType)}
		}
		return out
	}
	in := &dynamodb.CreateTableInput{
		TableName:   aws.String("orders-" + testenv.Unique(t)),
		BillingMode: types.BillingModePayPerRequest,
		KeySchema:   keys(p.KeySchema),
	}
	for _, a := range p.AttributeDefinitions {
		in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{
			AttributeName: aws.String(a.AttributeName), AttributeType: types.ScalarAttributeType(a.AttributeType)})
	}
	for _, g := range p.GlobalSecondaryIndexes {
		in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, types.GlobalSecondaryIndex{
			IndexName: aws.String(g.IndexName), KeySchema: keys(g.KeySchema),
			Projection: &types.Projection{ProjectionType: types.ProjectionType(g.Projection.ProjectionType)}})
	}
	db := dynamodb.NewFromConfig(cfg)
	_, err = db.CreateTable(context.Background(), in)
	require.NoError(t, err)
	t.Cleanup(func() {
		_, err := db.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: in.TableName})
		require.NoError(t, err)
	})
	return *in.TableName
}
