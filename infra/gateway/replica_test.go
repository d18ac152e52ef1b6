package gateway

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeDynamo is a one-table DynamoDB (key "pk", index "due" on "dueAt") that answers every
// read with what it has: what DynamoDB Local does.
type fakeDynamo struct {
	mu    sync.Mutex
	items map[string]map[string]json.RawMessage
}

func (f *fakeDynamo) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var in struct {
		Key, Item    map[string]json.RawMessage
		IndexName    string
		RequestItems map[string]struct{ Keys []map[string]json.RawMessage }
	}
	body, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(body, &in)
	var out any = map[string]any{}
	switch op := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "DynamoDB_20120810."); op {
	case "DescribeTable":
		out = json.RawMessage(`{"Table":{"KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],
			"GlobalSecondaryIndexes":[{"IndexName":"due","KeySchema":[{"AttributeName":"dueAt","KeyType":"HASH"}]}]}}`)
	case "PutItem":
		f.items[string(in.Item["pk"])] = in.Item
	case "GetItem":
		if it, ok := f.items[string(in.Key["pk"])]; ok {
			out = map[string]any{"Item": it}
		}
	case "BatchGetItem":
		var got []map[string]json.RawMessage
		for _, k := range in.RequestItems["t"].Keys {
			if it, ok := f.items[string(k["pk"])]; ok {
				got = append(got, it)
			}
		}
		out = map[string]any{"Responses": map[string]any{"t": got}, "UnprocessedKeys": map[string]any{}}
	case "Query":
		var got []map[string]json.RawMessage
		for _, it := range f.items {
			if _, ok := it["dueAt"]; ok {
				got = append(got, map[string]json.RawMessage{"pk": it["pk"], "dueAt": it["dueAt"]})
			}
		}
		out = map[string]any{"Items": got, "Count": len(got), "ScannedCount": len(got)}
	}
	_ = json.NewEncoder(w).Encode(out)
}

// TestReplica: an eventually consistent read answers the item as it was the configured delay
// ago, a consistent one as it is; an index shows a change only after the lag; the staleness is
// bounded (afterwards every read is current).
func TestReplica(t *testing.T) {
	t.Parallel()
	engine := httptest.NewServer(&fakeDynamo{items: map[string]map[string]json.RawMessage{}})
	defer engine.Close()
	const d = 300 * time.Millisecond
	rp, err := NewReplica(ReplicaConfig{IndexLag: d, IndexLagRate: 1, StaleReads: d, StaleReadRate: 1})
	require.NoError(t, err)
	g := &Gateway{DynamoDB: engine.URL, Replica: rp}
	url, err := g.Start("127.0.0.1:0")
	require.NoError(t, err)
	defer g.Close()

	call := func(op, body string) map[string]any {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader([]byte(body)))
		require.NoError(t, err)
		req.Header.Set("X-Amz-Target", "DynamoDB_20120810."+op)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		var out map[string]any
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
		return out
	}
	state := func(out map[string]any) any {
		it, ok := out["Item"].(map[string]any)
		if !ok {
			return nil
		}
		return it["state"].(map[string]any)["S"]
	}
	get := `{"TableName":"t","Key":{"pk":{"S":"a"}}}`
	getConsistent := `{"TableName":"t","Key":{"pk":{"S":"a"}},"ConsistentRead":true}`
	put := func(state, due string) {
		item := `{"pk":{"S":"a"},"state":{"S":"` + state + `"}`
		if due != "" {
			item += `,"dueAt":{"N":"` + due + `"}`
		}
		call("PutItem", `{"TableName":"t","Item":`+item+`}}`)
	}
	query := func() int {
		return int(call("Query", `{"TableName":"t","IndexName":"due"}`)["Count"].(float64))
	}

	put("idle", "")
	require.Nil(t, state(call("GetItem", get)), "just created: a replica may not have it yet")
	require.Equal(t, "idle", state(call("GetItem", getConsistent)))
	time.Sleep(d + 100*time.Millisecond)
	require.Equal(t, "idle", state(call("GetItem", get)))

	put("running", "1000")
	require.Equal(t, "idle", state(call("GetItem", get)), "the write before is what a replica has")
	require.Equal(t, "running", state(call("GetItem", getConsistent)))
	batch := call("BatchGetItem", `{"RequestItems":{"t":{"Keys":[{"pk":{"S":"a"}}]}}}`)
	require.Equal(t, "idle", batch["Responses"].(map[string]any)["t"].([]any)[0].(map[string]any)["state"].(map[string]any)["S"])
	require.Zero(t, query(), "the index does not show the new entry yet")

	time.Sleep(d + 100*time.Millisecond)
	require.Equal(t, "running", state(call("GetItem", get)), "bounded: after the delay every read is current")
	require.Equal(t, 1, query())
	st := rp.Stats()
	require.EqualValues(t, 3, st.StaleReads)
	require.EqualValues(t, 1, st.HiddenEntries)
}
