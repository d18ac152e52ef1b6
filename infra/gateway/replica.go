package gateway

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/sundialhq/sundial/infra/emulator"
)

// DynamoDB Local is one copy of the data: every read sees every write at once. DynamoDB is
// not: a global secondary index is updated asynchronously (a write shows in it "within a
// second" normally, later when the index is throttled), and a read without ConsistentRead may
// be served by a replica that has not yet applied the latest writes. A Replica makes the
// gateway answer as DynamoDB may:
//
//   - it keeps, for every item written through the gateway, a history of its versions: after
//     each successful write (PutItem, UpdateItem, DeleteItem, BatchWriteItem,
//     TransactWriteItems) it reads the items written back, strongly consistent, and records
//     them with the time (the first write of an item records what was there before it too);
//   - an eventually consistent GetItem or BatchGetItem is answered, with probability
//     StaleReadRate, with each item as it was StaleReads ago (absent if it did not exist yet);
//   - a Query of a global secondary index leaves out, with probability IndexLagRate per
//     change, the entries whose index key attributes changed within the last IndexLag: a new
//     or moved entry shows only once the lag has passed.
//
// Not emulated (docs/local.md): an index still showing an entry's old key, stale Query or
// Scan of a table itself, and lags longer than configured. Histories are shared by every
// caller of the gateway, so the staleness is the same for every function process, as a
// replica's is.
type Replica struct {
	cfg    ReplicaConfig
	client *http.Client
	signer *v4.Signer
	secret string // the engines' secret (Gateway.EngineSecret), set by the gateway's Start
	// owner, when the engines are partitioned (partition.go), names the engine of a
	// partition key's value; set by the gateway's Start.
	owner func(pk json.RawMessage) string

	mu       sync.Mutex
	rng      *rand.Rand
	schemas  map[string]*tableSchema
	history  map[string]*itemHistory
	stripes  [64]sync.Mutex // serialize the read-back and record of one item
	lastTrim time.Time

	staleReads, hiddenEntries, recorded atomic.Int64
}

// ReplicaConfig bounds the staleness a Replica emulates.
type ReplicaConfig struct {
	// IndexLag: a change of an item's index key shows in a global secondary index this long
	// after the write, for a share IndexLagRate (0..1) of the changes.
	IndexLag     time.Duration
	IndexLagRate float64
	// StaleReads: an eventually consistent item read answers the item as it was this long
	// ago, for a share StaleReadRate (0..1) of the reads.
	StaleReads    time.Duration
	StaleReadRate float64
	Seed          uint64
}

// Enabled reports whether anything is emulated.
func (c ReplicaConfig) Enabled() bool {
	return c.IndexLag > 0 && c.IndexLagRate > 0 || c.StaleReads > 0 && c.StaleReadRate > 0
}

// Validate names what is wrong with the configuration.
func (c ReplicaConfig) Validate() error {
	var errs []error
	for name, p := range map[string]float64{"index lag rate": c.IndexLagRate, "stale read rate": c.StaleReadRate} {
		if p < 0 || p > 1 {
			errs = append(errs, fmt.Errorf("%s %g: want a probability in 0..1", name, p))
		}
	}
	for name, d := range map[string]time.Duration{"index lag": c.IndexLag, "stale reads": c.StaleReads} {
		if d < 0 || d > time.Minute {
			errs = append(errs, fmt.Errorf("%s %s: want a duration in 0..1m", name, d))
		}
	}
	return errors.Join(errs...)
}

// ReplicaStats counts what a Replica did.
type ReplicaStats struct {
	// StaleReads: items answered as they were before their latest write (or left out, or
	// added, because they did not exist then or do not any more).
	StaleReads int64
	// HiddenEntries: index entries left out of Query answers because their change lagged.
	HiddenEntries int64
	// Recorded: item versions recorded.
	Recorded int64
}

// NewReplica returns a replica emulation; set it as Gateway.Replica before Start.
func NewReplica(cfg ReplicaConfig) (*Replica, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("gateway: replica: %w", err)
	}
	return &Replica{cfg: cfg, signer: v4.NewSigner(), rng: rand.New(rand.NewPCG(cfg.Seed, 0x5e1ca)),
		schemas: map[string]*tableSchema{}, history: map[string]*itemHistory{},
		client: &http.Client{Timeout: 30 * time.Second}}, nil
}

// Config is what the replica emulates.
func (rp *Replica) Config() ReplicaConfig { return rp.cfg }

// Stats returns the counts so far.
func (rp *Replica) Stats() ReplicaStats {
	return ReplicaStats{StaleReads: rp.staleReads.Load(), HiddenEntries: rp.hiddenEntries.Load(), Recorded: rp.recorded.Load()}
}

type tableSchema struct {
	key     []string            // the table's key attributes
	indexes map[string][]string // each global secondary index's key attributes
}

type itemVersion struct {
	at   time.Time                  // zero: as it was before the gateway saw it written
	item map[string]json.RawMessage // nil: absent
}

type itemHistory struct{ versions []itemVersion }

// at returns the version current at t (ok false: none recorded that early).
func (h *itemHistory) at(t time.Time) (itemVersion, bool) {
	for i := len(h.versions) - 1; i >= 0; i-- {
		if !h.versions[i].at.After(t) {
			return h.versions[i], true
		}
	}
	return itemVersion{}, false
}

// indexChanged returns when the index key attributes attrs last changed (zero: not since recorded).
func (h *itemHistory) indexChanged(attrs []string) time.Time {
	n := len(h.versions)
	if n == 0 {
		return time.Time{}
	}
	cur := indexKey(h.versions[n-1].item, attrs)
	for i := n - 2; i >= 0; i-- {
		if indexKey(h.versions[i].item, attrs) != cur {
			return h.versions[i+1].at
		}
	}
	return time.Time{}
}

func indexKey(item map[string]json.RawMessage, attrs []string) string {
	if item == nil {
		return "\x00absent"
	}
	var b strings.Builder
	for _, a := range attrs {
		b.WriteString(canonical(item[a]))
		b.WriteByte(0)
	}
	return b.String()
}

// canonical re-encodes an attribute value so that equal values compare equal as strings.
func canonical(v json.RawMessage) string {
	if len(v) == 0 {
		return ""
	}
	var x any
	if json.Unmarshal(v, &x) != nil {
		return string(v)
	}
	b, _ := json.Marshal(x)
	return string(b)
}

// serve answers one DynamoDB request: forward sends it to the engine (writing the answer to
// the writer it is given); the replica records what writes changed and makes reads stale.
func (rp *Replica) serve(w http.ResponseWriter, r *http.Request, op string, body []byte, upstream string, forward func(http.ResponseWriter)) {
	write := slices.Contains([]string{"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"}, op)
	read := slices.Contains([]string{"GetItem", "BatchGetItem", "Query"}, op)
	if !write && !read {
		forward(w)
		return
	}
	ctx := r.Context()
	var keys []itemKey
	if write {
		keys = rp.writtenKeys(ctx, upstream, op, body)
		rp.recordBefore(ctx, upstream, keys)
	}
	c := &captured{header: http.Header{}, status: http.StatusOK}
	forward(c)
	out := c.body.Bytes()
	if c.status == http.StatusOK {
		if write {
			rp.record(ctx, upstream, keys)
		} else if changed, ok := rp.stale(ctx, upstream, op, body, out); ok {
			out = changed
			c.header.Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE(out)), 10))
			c.header.Set("Content-Length", strconv.Itoa(len(out)))
		}
	}
	for k, v := range c.header {
		w.Header()[k] = v
	}
	w.WriteHeader(c.status)
	_, _ = w.Write(out)
}

// captured is the answer forward wrote.
type captured struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (c *captured) Header() http.Header         { return c.header }
func (c *captured) Write(p []byte) (int, error) { return c.body.Write(p) }
func (c *captured) WriteHeader(status int)      { c.status = status }

// itemKey names one item: its table and its key attributes' values.
type itemKey struct {
	table string
	key   map[string]json.RawMessage
}

func (k itemKey) id() string {
	names := make([]string, 0, len(k.key))
	for n := range k.key {
		names = append(names, n)
	}
	slices.Sort(names)
	var b strings.Builder
	b.WriteString(k.table)
	for _, n := range names {
		b.WriteByte(0)
		b.WriteString(n)
		b.WriteByte('=')
		b.WriteString(canonical(k.key[n]))
	}
	return b.String()
}

type writeRequest struct {
	TableName    string
	Item, Key    map[string]json.RawMessage
	RequestItems map[string][]struct {
		PutRequest    *struct{ Item map[string]json.RawMessage }
		DeleteRequest *struct{ Key map[string]json.RawMessage }
	}
	TransactItems []map[string]struct {
		TableName string
		Item, Key map[string]json.RawMessage
	}
}

// writtenKeys lists the items a write request changes.
func (rp *Replica) writtenKeys(ctx context.Context, upstream, op string, body []byte) []itemKey {
	var req writeRequest
	if json.Unmarshal(body, &req) != nil {
		return nil
	}
	var keys []itemKey
	add := func(table string, item, key map[string]json.RawMessage) {
		if key == nil && item != nil {
			s, err := rp.schema(ctx, upstream, table)
			if err != nil {
				return
			}
			key = map[string]json.RawMessage{}
			for _, a := range s.key {
				key[a] = item[a]
			}
		}
		if len(key) > 0 {
			keys = append(keys, itemKey{table: table, key: key})
		}
	}
	switch op {
	case "BatchWriteItem":
		for table, reqs := range req.RequestItems {
			for _, wr := range reqs {
				switch {
				case wr.PutRequest != nil:
					add(table, wr.PutRequest.Item, nil)
				case wr.DeleteRequest != nil:
					add(table, nil, wr.DeleteRequest.Key)
				}
			}
		}
	case "TransactWriteItems":
		for _, ti := range req.TransactItems {
			for kind, t := range ti {
				if kind != "ConditionCheck" {
					add(t.TableName, t.Item, t.Key)
				}
			}
		}
	default:
		add(req.TableName, req.Item, req.Key)
	}
	return keys
}

// recordBefore records, for items the replica has no history of, what they are before the
// write: an eventually consistent read right after it may still answer that.
func (rp *Replica) recordBefore(ctx context.Context, upstream string, keys []itemKey) {
	var fresh []itemKey
	rp.mu.Lock()
	for _, k := range keys {
		if rp.history[k.id()] == nil {
			fresh = append(fresh, k)
		}
	}
	rp.mu.Unlock()
	rp.readBack(ctx, upstream, fresh, time.Time{})
}

// record reads the written items back (strongly consistent) and records them as of now.
func (rp *Replica) record(ctx context.Context, upstream string, keys []itemKey) {
	rp.readBack(ctx, upstream, keys, time.Now())
}

func (rp *Replica) readBack(ctx context.Context, upstream string, keys []itemKey, at time.Time) {
	for _, k := range keys {
		id := k.id()
		s := &rp.stripes[fnvHash(id)%uint64(len(rp.stripes))]
		s.Lock()
		item, err := rp.getItem(ctx, upstream, k)
		if err == nil {
			rp.add(id, itemVersion{at: at, item: item})
		}
		s.Unlock()
	}
}

func (rp *Replica) add(id string, v itemVersion) {
	keep := max(rp.cfg.IndexLag, rp.cfg.StaleReads) + time.Second
	rp.mu.Lock()
	defer rp.mu.Unlock()
	h := rp.history[id]
	if h == nil {
		h = &itemHistory{}
		rp.history[id] = h
	} else if v.at.IsZero() {
		return // written meanwhile: what was before is known
	}
	h.versions = append(h.versions, v)
	rp.recorded.Add(1)
	// Versions superseded before now − keep are never answered again: keep the last of them.
	if cut := time.Now().Add(-keep); len(h.versions) > 2 {
		i := 0
		for i+1 < len(h.versions) && h.versions[i+1].at.Before(cut) {
			i++
		}
		h.versions = h.versions[i:]
	}
	if time.Since(rp.lastTrim) > time.Minute {
		rp.lastTrim = time.Now()
		for id, h := range rp.history {
			if last := h.versions[len(h.versions)-1]; !last.at.IsZero() && last.at.Before(time.Now().Add(-keep)) {
				delete(rp.history, id) // settled: every read answers what the engine has
			}
		}
	}
}

func (rp *Replica) lookup(id string) *itemHistory {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	h := rp.history[id]
	if h == nil {
		return nil
	}
	return &itemHistory{versions: slices.Clone(h.versions)}
}

func (rp *Replica) draw(p float64) bool {
	if p <= 0 {
		return false
	}
	rp.mu.Lock()
	defer rp.mu.Unlock()
	return rp.rng.Float64() < p
}

// staleItem returns, with the configured probability, the item as it was StaleReads ago,
// if that differs from what the engine answered (ok false: answer the engine's).
func (rp *Replica) staleItem(id string) (item map[string]json.RawMessage, ok bool) {
	if rp.cfg.StaleReads <= 0 || !rp.draw(rp.cfg.StaleReadRate) {
		return nil, false
	}
	h := rp.lookup(id)
	if h == nil || len(h.versions) < 2 {
		return nil, false
	}
	v, found := h.at(time.Now().Add(-rp.cfg.StaleReads))
	if !found || sameItem(v.item, h.versions[len(h.versions)-1].item) {
		return nil, false
	}
	return v.item, true
}

func sameItem(a, b map[string]json.RawMessage) bool {
	if (a == nil) != (b == nil) || len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if canonical(v) != canonical(b[k]) {
			return false
		}
	}
	return true
}

// stale rewrites a read's answer as a lagging replica may give it; ok false: unchanged.
func (rp *Replica) stale(ctx context.Context, upstream, op string, reqBody, out []byte) ([]byte, bool) {
	switch op {
	case "GetItem":
		return rp.staleGet(ctx, upstream, reqBody, out)
	case "BatchGetItem":
		return rp.staleBatchGet(ctx, upstream, reqBody, out)
	case "Query":
		return rp.laggingQuery(ctx, upstream, reqBody, out)
	}
	return nil, false
}

type readRequest struct {
	TableName                string
	Key                      map[string]json.RawMessage
	ConsistentRead           bool
	ProjectionExpression     string
	ExpressionAttributeNames map[string]string
	AttributesToGet          []string
	Keys                     []map[string]json.RawMessage // BatchGetItem's, per table
}

// projection returns the top-level attributes a read asks for (nil: all); ok false when the
// projection names nested paths, which the replica does not apply (it answers the engine's).
func (q readRequest) projection() ([]string, bool) {
	if len(q.AttributesToGet) > 0 {
		return q.AttributesToGet, true
	}
	if q.ProjectionExpression == "" {
		return nil, true
	}
	var attrs []string
	for p := range strings.SplitSeq(q.ProjectionExpression, ",") {
		p = strings.TrimSpace(p)
		if strings.ContainsAny(p, ".[") {
			return nil, false
		}
		if n, ok := q.ExpressionAttributeNames[p]; ok {
			p = n
		}
		attrs = append(attrs, p)
	}
	return attrs, true
}

func project(item map[string]json.RawMessage, attrs []string) map[string]json.RawMessage {
	if item == nil || attrs == nil {
		return item
	}
	out := map[string]json.RawMessage{}
	for _, a := range attrs {
		if v, ok := item[a]; ok {
			out[a] = v
		}
	}
	return out
}

func (rp *Replica) staleGet(_ context.Context, _ string, reqBody, out []byte) ([]byte, bool) {
	var q readRequest
	if json.Unmarshal(reqBody, &q) != nil || q.ConsistentRead {
		return nil, false
	}
	attrs, ok := q.projection()
	if !ok {
		return nil, false
	}
	item, ok := rp.staleItem(itemKey{table: q.TableName, key: q.Key}.id())
	if !ok {
		return nil, false
	}
	var resp map[string]json.RawMessage
	if json.Unmarshal(out, &resp) != nil {
		return nil, false
	}
	delete(resp, "Item")
	if item != nil {
		b, _ := json.Marshal(project(item, attrs))
		resp["Item"] = b
	}
	b, err := json.Marshal(resp)
	if err != nil {
		return nil, false
	}
	rp.staleReads.Add(1)
	return b, true
}

func (rp *Replica) staleBatchGet(ctx context.Context, upstream string, reqBody, out []byte) ([]byte, bool) {
	var q struct{ RequestItems map[string]readRequest }
	var resp struct {
		Responses        map[string][]map[string]json.RawMessage
		UnprocessedKeys  json.RawMessage `json:",omitempty"`
		ConsumedCapacity json.RawMessage `json:",omitempty"`
	}
	if json.Unmarshal(reqBody, &q) != nil || json.Unmarshal(out, &resp) != nil {
		return nil, false
	}
	var unprocessed map[string]struct{ Keys []map[string]json.RawMessage }
	_ = json.Unmarshal(resp.UnprocessedKeys, &unprocessed)
	changed := 0
	for table, tq := range q.RequestItems {
		attrs, ok := tq.projection()
		if tq.ConsistentRead || !ok {
			continue
		}
		s, err := rp.schema(ctx, upstream, table)
		if err != nil {
			continue
		}
		got := map[string]int{} // key id -> index in the answer
		for i, item := range resp.Responses[table] {
			got[itemKey{table: table, key: keyOf(item, s.key)}.id()] = i
		}
		skip := map[string]bool{}
		for _, k := range unprocessed[table].Keys {
			skip[itemKey{table: table, key: k}.id()] = true
		}
		var drop []int
		for _, k := range tq.Keys {
			id := itemKey{table: table, key: k}.id()
			if skip[id] {
				continue
			}
			item, ok := rp.staleItem(id)
			if !ok {
				continue
			}
			changed++
			i, present := got[id]
			switch {
			case item == nil && present:
				drop = append(drop, i)
			case item != nil && present:
				resp.Responses[table][i] = project(item, attrs)
			case item != nil:
				resp.Responses[table] = append(resp.Responses[table], project(item, attrs))
			}
		}
		slices.Sort(drop)
		for j := len(drop) - 1; j >= 0; j-- {
			resp.Responses[table] = slices.Delete(resp.Responses[table], drop[j], drop[j]+1)
		}
	}
	if changed == 0 {
		return nil, false
	}
	b, err := json.Marshal(resp)
	if err != nil {
		return nil, false
	}
	rp.staleReads.Add(int64(changed))
	return b, true
}

func keyOf(item map[string]json.RawMessage, attrs []string) map[string]json.RawMessage {
	k := map[string]json.RawMessage{}
	for _, a := range attrs {
		k[a] = item[a]
	}
	return k
}

// laggingQuery leaves out of a global secondary index's answer the entries whose change has
// not reached the index yet.
func (rp *Replica) laggingQuery(ctx context.Context, upstream string, reqBody, out []byte) ([]byte, bool) {
	if rp.cfg.IndexLag <= 0 || rp.cfg.IndexLagRate <= 0 {
		return nil, false
	}
	var q struct{ TableName, IndexName string }
	if json.Unmarshal(reqBody, &q) != nil || q.IndexName == "" {
		return nil, false
	}
	s, err := rp.schema(ctx, upstream, q.TableName)
	if err != nil || s.indexes[q.IndexName] == nil {
		return nil, false // a local secondary index can be read consistently; not emulated
	}
	var resp map[string]json.RawMessage
	var items []map[string]json.RawMessage
	if json.Unmarshal(out, &resp) != nil || json.Unmarshal(resp["Items"], &items) != nil {
		return nil, false
	}
	cut := time.Now().Add(-rp.cfg.IndexLag)
	kept := items[:0]
	hidden := 0
	for _, item := range items {
		id := itemKey{table: q.TableName, key: keyOf(item, s.key)}.id()
		if h := rp.lookup(id); h != nil {
			// Whether a change lags is drawn once per change, so that every query during
			// the lag sees the index the same way.
			if at := h.indexChanged(s.indexes[q.IndexName]); at.After(cut) && chance(rp.cfg.Seed, id, at) < rp.cfg.IndexLagRate {
				hidden++
				continue
			}
		}
		kept = append(kept, item)
	}
	if hidden == 0 {
		return nil, false
	}
	resp["Items"], _ = json.Marshal(kept)
	resp["Count"] = json.RawMessage(strconv.Itoa(len(kept)))
	b, err := json.Marshal(resp)
	if err != nil {
		return nil, false
	}
	rp.hiddenEntries.Add(int64(hidden))
	return b, true
}

func chance(seed uint64, id string, at time.Time) float64 {
	h := fnv.New64a()
	_, _ = fmt.Fprintf(h, "%d\x00%s\x00%d", seed, id, at.UnixNano())
	return float64(h.Sum64()>>11) / (1 << 53)
}

func fnvHash(s string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(s))
	return h.Sum64()
}

// schema returns a table's key attributes and its global secondary indexes' (DescribeTable,
// once per table).
func (rp *Replica) schema(ctx context.Context, upstream, table string) (*tableSchema, error) {
	rp.mu.Lock()
	s := rp.schemas[table]
	rp.mu.Unlock()
	if s != nil {
		return s, nil
	}
	type keyElem struct{ AttributeName string }
	var out struct {
		Table struct {
			KeySchema              []keyElem
			GlobalSecondaryIndexes []struct {
				IndexName string
				KeySchema []keyElem
			}
		}
	}
	if err := rp.call(ctx, upstream, "DescribeTable", map[string]any{"TableName": table}, &out); err != nil {
		return nil, err
	}
	names := func(ks []keyElem) []string {
		var n []string
		for _, k := range ks {
			n = append(n, k.AttributeName)
		}
		return n
	}
	s = &tableSchema{key: names(out.Table.KeySchema), indexes: map[string][]string{}}
	for _, gsi := range out.Table.GlobalSecondaryIndexes {
		s.indexes[gsi.IndexName] = names(gsi.KeySchema)
	}
	rp.mu.Lock()
	rp.schemas[table] = s
	rp.mu.Unlock()
	return s, nil
}

func (rp *Replica) getItem(ctx context.Context, upstream string, k itemKey) (map[string]json.RawMessage, error) {
	var out struct{ Item map[string]json.RawMessage }
	if rp.owner != nil {
		s, err := rp.schema(ctx, upstream, k.table)
		if err != nil {
			return nil, err
		}
		upstream = rp.owner(k.key[s.key[0]])
	}
	err := rp.call(ctx, upstream, "GetItem", map[string]any{"TableName": k.table, "Key": k.key, "ConsistentRead": true}, &out)
	return out.Item, err
}

// call sends one DynamoDB request to the engine, signed (DynamoDB Local reads the signature's
// access key, though it does not check it).
func (rp *Replica) call(ctx context.Context, upstream, op string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodPost, upstream, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "DynamoDB_20120810."+op)
	req.Header.Set(emulator.SecretHeader, rp.secret)
	sum := sha256.Sum256(body)
	creds := aws.Credentials{AccessKeyID: "LOCALREPLICA", SecretAccessKey: "local"}
	if err := rp.signer.SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), "dynamodb", "us-east-1", time.Now()); err != nil {
		return err
	}
	resp, err := rp.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("gateway: replica: %s: %s: %s", op, resp.Status, b)
	}
	return json.Unmarshal(b, out)
}
