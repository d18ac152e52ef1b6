package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Throttle enforces provisioned throughput as DynamoDB does, which DynamoDB Local does not:
// each PROVISIONED table and global secondary index has a read and a write token bucket
// filled at its units per second, holding up to BurstSeconds (300, DynamoDB's burst
// capacity) of unused units. A request whose table or index has an empty bucket is answered
// ProvisionedThroughputExceededException in DynamoDB's JSON error format (the SDK's retryer
// backs off and retries it); one that goes through is charged what it consumed.
//
// Units are counted from DynamoDB Local's own ConsumedCapacity: the request is sent with
// ReturnConsumedCapacity INDEXES when the caller asked for none (and the answer is given
// back without it), so every rule of DynamoDB's (1 KB write units, 4 KB read units, halves
// for eventually consistent reads, the index writes a key change makes, twice for
// transactions) is the engine's, not a model of ours. A write is checked against the buckets
// of its table and of every global secondary index of the table (DynamoDB throttles a base
// table write whose index is out of write capacity); a Query or Scan of an index against
// that index's read bucket. A batch request one of whose tables is out of capacity is refused
// whole (DynamoDB would return that table's items as unprocessed when others can proceed;
// Sundial's batches name one table).
type Throttle struct {
	// BurstSeconds is how many seconds of unused units a bucket keeps (default 300).
	BurstSeconds float64
	// Now is the clock (tests); default time.Now.
	Now func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket // by "table" or "table/index", then "|r" or "|w"
	indexes map[string][]string
	refused map[string]int64 // throttled requests by table (and index)
}

// bucket is one token bucket: rate units per second, at most max kept.
type bucket struct {
	rate, max, tokens float64
	at                time.Time
}

// Capacity is a table's or index's provisioned units.
type Capacity struct {
	Table, Index string // Index "" for the table itself
	Read, Write  float64
}

// SetCapacity sets (or replaces) provisioned units. A bucket starts with one second of units.
func (t *Throttle) SetCapacity(cs ...Capacity) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.buckets == nil {
		t.buckets, t.indexes, t.refused = map[string]*bucket{}, map[string][]string{}, map[string]int64{}
	}
	now := t.now()
	for _, c := range cs {
		name := c.Table
		if c.Index != "" {
			name += "/" + c.Index
			found := false
			for _, ix := range t.indexes[c.Table] {
				found = found || ix == c.Index
			}
			if !found {
				t.indexes[c.Table] = append(t.indexes[c.Table], c.Index)
			}
		}
		for _, b := range []struct {
			k    string
			rate float64
		}{{name + "|r", c.Read}, {name + "|w", c.Write}} {
			t.buckets[b.k] = &bucket{rate: b.rate, max: b.rate * t.burst(), tokens: b.rate, at: now}
		}
	}
}

// Throttled reports the requests refused so far, by table or "table/index".
func (t *Throttle) Throttled() map[string]int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[string]int64, len(t.refused))
	for k, v := range t.refused {
		out[k] = v
	}
	return out
}

func (t *Throttle) now() time.Time {
	if t.Now != nil {
		return t.Now()
	}
	return time.Now()
}

func (t *Throttle) burst() float64 {
	if t.BurstSeconds > 0 {
		return t.BurstSeconds
	}
	return 300
}

// refill brings a bucket up to now (t.mu held).
func (b *bucket) refill(now time.Time) {
	if d := now.Sub(b.at).Seconds(); d > 0 {
		b.tokens = min(b.max, b.tokens+d*b.rate)
	}
	b.at = now
}

var readOps = map[string]bool{"GetItem": true, "Query": true, "Scan": true, "BatchGetItem": true, "TransactGetItems": true}
var writeOps = map[string]bool{"PutItem": true, "UpdateItem": true, "DeleteItem": true, "BatchWriteItem": true, "TransactWriteItems": true}

// Serve handles one DynamoDB request: refused when a bucket it needs is empty, else sent on
// with forward and charged what it consumed.
func (t *Throttle) Serve(w http.ResponseWriter, op string, body []byte, forward func(http.ResponseWriter, []byte)) {
	t.mu.Lock()
	none := len(t.buckets) == 0
	t.mu.Unlock()
	if none || (!readOps[op] && !writeOps[op]) {
		forward(w, body)
		return
	}
	var req map[string]json.RawMessage
	if json.Unmarshal(body, &req) != nil {
		forward(w, body) // the engine answers the malformed request
		return
	}
	keys := t.bucketsOf(op, req)
	if len(keys) == 0 {
		forward(w, body) // on-demand tables only
		return
	}
	if empty := t.admit(keys); empty != "" {
		writeJSONError(w, http.StatusBadRequest, "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException",
			"The level of configured provisioned throughput for the table was exceeded. Consider increasing your provisioning level with the UpdateTable API.")
		return
	}
	var asked json.RawMessage
	if rc, ok := req["ReturnConsumedCapacity"]; ok && string(rc) != `"NONE"` {
		asked = rc
	} else {
		req["ReturnConsumedCapacity"] = json.RawMessage(`"INDEXES"`)
		if b, err := json.Marshal(req); err == nil {
			body = b
		}
	}
	rec := &recorder{header: http.Header{}, status: http.StatusOK}
	forward(rec, body)
	out := rec.body.Bytes()
	var resp map[string]json.RawMessage
	if rec.status != http.StatusOK && singleWrites[op] && bytes.Contains(out, []byte("ConditionalCheckFailedException")) {
		// A write whose condition fails still consumes write units (at least one; DynamoDB
		// counts the existing item's size, which Sundial's instances keep under 1 KB), but
		// DynamoDB Local's error answer carries no ConsumedCapacity: charge one.
		var table string
		_ = json.Unmarshal(req["TableName"], &table)
		t.charge(op, json.RawMessage(fmt.Sprintf(`{"TableName":%q,"CapacityUnits":1}`, table)))
	}
	if rec.status == http.StatusOK && json.Unmarshal(out, &resp) == nil {
		t.charge(op, resp["ConsumedCapacity"])
		if asked == nil {
			if _, ok := resp["ConsumedCapacity"]; ok {
				delete(resp, "ConsumedCapacity")
				if b, err := json.Marshal(resp); err == nil {
					out = b
					rec.header.Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE(out)), 10))
				}
			}
		}
	}
	for k, v := range rec.header {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	w.WriteHeader(rec.status)
	_, _ = w.Write(out)
}

// bucketsOf names the buckets a request needs ("" when none is provisioned).
func (t *Throttle) bucketsOf(op string, req map[string]json.RawMessage) []string {
	var tables []string
	var index string
	str := func(raw json.RawMessage) string {
		var s string
		_ = json.Unmarshal(raw, &s)
		return s
	}
	switch op {
	case "BatchGetItem", "BatchWriteItem":
		var items map[string]json.RawMessage
		_ = json.Unmarshal(req["RequestItems"], &items)
		for name := range items {
			tables = append(tables, name)
		}
	case "TransactWriteItems", "TransactGetItems":
		var items []map[string]struct{ TableName string }
		_ = json.Unmarshal(req["TransactItems"], &items)
		for _, it := range items {
			for _, v := range it {
				tables = append(tables, v.TableName)
			}
		}
	default:
		tables = []string{str(req["TableName"])}
		index = str(req["IndexName"])
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	var keys []string
	add := func(k string) {
		if t.buckets[k] != nil {
			keys = append(keys, k)
		}
	}
	for _, table := range tables {
		switch {
		case writeOps[op]:
			add(table + "|w")
			for _, ix := range t.indexes[table] {
				add(table + "/" + ix + "|w")
			}
		case index != "":
			add(table + "/" + index + "|r")
		default:
			add(table + "|r")
		}
	}
	return keys
}

// admit returns the first of the buckets that is empty, counting the refusal, or "".
func (t *Throttle) admit(keys []string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	for _, k := range keys {
		b := t.buckets[k]
		b.refill(now)
		if b.tokens <= 0 {
			name := k[:len(k)-2]
			t.refused[name]++
			return name
		}
	}
	return ""
}

// consumed is one ConsumedCapacity entry of an answer.
type consumed struct {
	TableName              string
	CapacityUnits          float64
	Table                  *struct{ CapacityUnits float64 }
	GlobalSecondaryIndexes map[string]struct{ CapacityUnits float64 }
}

// charge takes what an answer consumed from its buckets (they may go below zero: the next
// requests wait until the debt is paid, as DynamoDB's do).
func (t *Throttle) charge(op string, raw json.RawMessage) {
	if len(raw) == 0 {
		return
	}
	var list []consumed
	if raw[0] == '{' {
		var c consumed
		if json.Unmarshal(raw, &c) != nil {
			return
		}
		list = []consumed{c}
	} else if json.Unmarshal(raw, &list) != nil {
		return
	}
	kind := "|r"
	if writeOps[op] {
		kind = "|w"
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	take := func(k string, units float64) {
		if b := t.buckets[k]; b != nil && units > 0 {
			b.refill(now)
			b.tokens -= units
		}
	}
	for _, c := range list {
		switch {
		case c.Table != nil || len(c.GlobalSecondaryIndexes) > 0:
			if c.Table != nil {
				take(c.TableName+kind, c.Table.CapacityUnits)
			}
			for ix, u := range c.GlobalSecondaryIndexes {
				take(c.TableName+"/"+ix+kind, u.CapacityUnits)
			}
		default: // TOTAL only: the table's
			take(c.TableName+kind, c.CapacityUnits)
		}
	}
}

// singleWrites are the writes that name one item and may carry a condition.
var singleWrites = map[string]bool{"PutItem": true, "UpdateItem": true, "DeleteItem": true}

// recorder keeps an answer to be rewritten.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) WriteHeader(status int)      { r.status = status }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
