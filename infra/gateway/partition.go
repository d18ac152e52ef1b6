package gateway

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	"math/big"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/sundialhq/sundial/infra/iam"
)

// A DynamoDB table is many partitions: DynamoDB places each item by a hash of its partition
// key, serves each partition on its own servers (up to 1,000 write and 3,000 read units a
// second each), and gives the table's stream a shard per partition, ordered per key and not
// across keys. The local platform runs several DynamoDB Local engines and the gateway stands
// for the table's request router (Gateway.Partitions):
//
//   - an item's engine is a hash of its partition key's value (keys with a colocated prefix,
//     Gateway.Colocate, all live on the first engine): GetItem, PutItem, UpdateItem and DeleteItem go to that engine, and a
//     Query of the table naming its partition key too;
//   - a Query of an index, or of the table without an equality on its partition key, goes to
//     every engine and the answers are merged in the index's order; LastEvaluatedKey is the
//     last item answered, and the gateway remembers where each engine stood then, so that the
//     next page continues every engine exactly (an ExclusiveStartKey it does not know, e.g. one
//     built by the caller, is given to every engine as a position);
//   - a Scan reads the engines one after the other: a LastEvaluatedKey names an item, whose
//     partition key names the engine to continue;
//   - BatchGetItem and BatchWriteItem are split by engine and the answers joined:
//     Responses, UnprocessedKeys and UnprocessedItems as each engine answered them; a part an
//     engine refused for want of capacity or by failing is answered unprocessed;
//   - TransactWriteItems and TransactGetItems go to their items' engine and are refused
//     (ValidationException) when their items live on more than one: DynamoDB runs them across
//     partitions, one DynamoDB Local engine cannot, and nothing is half applied;
//   - CreateTable, UpdateTable, DeleteTable, UpdateTimeToLive and the other control calls go
//     to every engine; DescribeTable, ListTables and the other reads of the control plane to
//     the first;
//   - each engine's stream is a shard of the table's stream: DescribeStream lists the shards
//     of every engine (their ids tagged with the engine, "-p<i>", for engines after the first),
//     GetShardIterator goes to the shard's engine and tags its iterator, GetRecords follows it.
type partitions struct {
	engines  []string
	colocate []string

	mu      sync.Mutex
	schemas map[string]*partSchema
	streams map[string][]string // table → each engine's latest stream label
	cursors cursorMemory
}

type partSchema struct {
	pk, sk  string               // the table's key attributes (sk "" when none)
	indexes map[string][2]string // each index's key attributes (local and global)
}

func newPartitions(engines, colocate []string) *partitions {
	return &partitions{engines: engines, colocate: colocate, schemas: map[string]*partSchema{}, streams: map[string][]string{},
		cursors: cursorMemory{m: map[string][]cursor{}}}
}

// owner returns the engine of a partition key's value (its JSON attribute value).
func (p *partitions) owner(v json.RawMessage) int {
	var av struct{ S, N, B *string }
	if json.Unmarshal(v, &av) != nil {
		return 0
	}
	h := fnv.New64a()
	switch {
	case av.S != nil:
		for _, pre := range p.colocate {
			if strings.HasPrefix(*av.S, pre) {
				return 0 // colocated keys live on the first engine
			}
		}
		h.Write([]byte("S" + *av.S))
	case av.N != nil:
		// Equal numbers are one key however written (1, 1.0, 1e0).
		if r, ok := new(big.Rat).SetString(*av.N); ok {
			h.Write([]byte("N" + r.RatString()))
		} else {
			h.Write([]byte("N" + *av.N))
		}
	case av.B != nil:
		h.Write([]byte("B" + *av.B))
	}
	return int(h.Sum64() % uint64(len(p.engines)))
}

// routeDynamoDB answers one DynamoDB or DynamoDB Streams request from the engines.
func (g *Gateway) routeDynamoDB(w http.ResponseWriter, r *http.Request, op string, body []byte) {
	p := g.parts
	var req map[string]json.RawMessage
	if json.Unmarshal(body, &req) != nil {
		g.forward(w, r, iam.DynamoDB, p.engines[0], body) // the engine answers the malformed request
		return
	}
	one := func(i int) { g.forward(w, r, iam.DynamoDB, p.engines[i], body) }
	ctx := r.Context()
	switch op {
	case "GetItem", "PutItem", "UpdateItem", "DeleteItem":
		table := str(req["TableName"])
		s, err := g.partSchema(ctx, r, table)
		if err != nil {
			g.noSchema(w, r, err, body)
			return
		}
		key := req["Key"]
		if op == "PutItem" {
			key = req["Item"]
		}
		var k map[string]json.RawMessage
		_ = json.Unmarshal(key, &k)
		one(p.owner(k[s.pk]))
	case "Query":
		g.partQuery(w, r, req, body)
	case "Scan":
		g.partScan(w, r, req)
	case "BatchGetItem":
		g.partBatch(w, r, req, "Keys", "UnprocessedKeys")
	case "BatchWriteItem":
		g.partBatch(w, r, req, "", "UnprocessedItems")
	case "TransactWriteItems", "TransactGetItems":
		i, err := g.transactOwner(ctx, r, req)
		if se := (*schemaError)(nil); errors.As(err, &se) {
			g.noSchema(w, r, err, body)
			return
		}
		if err != nil {
			writeJSONError(w, http.StatusBadRequest, "com.amazon.coral.validate#ValidationException", err.Error())
			return
		}
		one(i)
	case "CreateTable", "UpdateTable", "DeleteTable", "UpdateTimeToLive", "TagResource", "UntagResource",
		"UpdateContinuousBackups", "UpdateContributorInsights", "UpdateKinesisStreamingDestination":
		g.partAll(w, r, req, body)
	case "DescribeStream":
		g.partDescribeStream(w, r, req)
	case "GetShardIterator":
		g.partShardIterator(w, r, req)
	case "GetRecords":
		it := str(req["ShardIterator"])
		i, raw := untagIterator(it)
		if i >= len(p.engines) {
			writeJSONError(w, http.StatusBadRequest, "com.amazonaws.dynamodb.v20120810#ValidationException", "Invalid ShardIterator")
			return
		}
		req["ShardIterator"], _ = json.Marshal(raw)
		b, _ := json.Marshal(req)
		status, hdr, out := g.engineCall(r, p.engines[i], "", b)
		if status == http.StatusOK && i > 0 {
			out = tagNextIterator(out, i)
		}
		writeAnswer(w, status, hdr, out)
	case "ExecuteStatement", "BatchExecuteStatement", "ExecuteTransaction":
		writeJSONError(w, http.StatusBadRequest, "com.amazon.coral.validate#ValidationException",
			"the local endpoint's partitioned DynamoDB does not route PartiQL statements ("+op+"): Sundial does not use them; run with one partition (SUNDIAL_DYNAMODB_PARTITIONS=1) to try them")
	default: // DescribeTable, ListTables, DescribeTimeToLive, ListStreams, ListTagsOfResource, …
		one(0)
	}
}

func str(raw json.RawMessage) string {
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

// engineCall sends body to one engine as the request's operation (target "") or another
// (a DynamoDB_20120810 operation) and returns its answer, ARNs translated to the stack's.
func (g *Gateway) engineCall(r *http.Request, engine, target string, body []byte) (int, http.Header, []byte) {
	if target != "" {
		r = r.Clone(r.Context())
		r.Header.Set("X-Amz-Target", "DynamoDB_20120810."+target)
	}
	c := &captured{header: http.Header{}, status: http.StatusOK}
	g.forward(c, r, iam.DynamoDB, engine, body)
	return c.status, c.header, c.body.Bytes()
}

// writeAnswer writes an answer, its checksum and length made to match its body.
func writeAnswer(w http.ResponseWriter, status int, hdr http.Header, body []byte) {
	for k, v := range hdr {
		w.Header()[k] = v
	}
	w.Header().Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE(body)), 10))
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func writeJSONAnswer(w http.ResponseWriter, hdr http.Header, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeJSONError(w, http.StatusInternalServerError, "InternalFailure", err.Error())
		return
	}
	writeAnswer(w, http.StatusOK, hdr, b)
}

// partSchema returns a table's key attributes and its indexes' (DescribeTable on the first
// engine, once per table; forgotten when the table changes).
func (g *Gateway) partSchema(_ context.Context, r *http.Request, table string) (*partSchema, error) {
	p := g.parts
	p.mu.Lock()
	s := p.schemas[table]
	p.mu.Unlock()
	if s != nil {
		return s, nil
	}
	b, _ := json.Marshal(map[string]string{"TableName": table})
	status, hdr, out := g.engineCall(r, p.engines[0], "DescribeTable", b)
	if status != http.StatusOK {
		return nil, &schemaError{table: table, status: status, hdr: hdr, body: out}
	}
	type keyElem struct{ AttributeName, KeyType string }
	var d struct {
		Table struct {
			KeySchema                                     []keyElem
			GlobalSecondaryIndexes, LocalSecondaryIndexes []struct {
				IndexName string
				KeySchema []keyElem
			}
			LatestStreamArn string
		}
	}
	if err := json.Unmarshal(out, &d); err != nil {
		return nil, fmt.Errorf("DescribeTable %s: %w", table, err)
	}
	keys := func(ks []keyElem) (k [2]string) {
		for _, e := range ks {
			if e.KeyType == "HASH" {
				k[0] = e.AttributeName
			} else {
				k[1] = e.AttributeName
			}
		}
		return k
	}
	tk := keys(d.Table.KeySchema)
	s = &partSchema{pk: tk[0], sk: tk[1], indexes: map[string][2]string{}}
	for _, ix := range append(d.Table.GlobalSecondaryIndexes, d.Table.LocalSecondaryIndexes...) {
		s.indexes[ix.IndexName] = keys(ix.KeySchema)
	}
	p.mu.Lock()
	p.schemas[table] = s
	p.mu.Unlock()
	return s, nil
}

// schemaError is the first engine's answer to a DescribeTable that failed.
type schemaError struct {
	table  string
	status int
	hdr    http.Header
	body   []byte
}

func (e *schemaError) Error() string {
	return fmt.Sprintf("DescribeTable %s: %d %s", e.table, e.status, e.body)
}

// noSchema answers a request whose table's key schema could not be read. A table the engine
// refuses (a 4xx: unknown, a bad name) is the engine's to answer, and the first engine
// answers the request as one engine would. Any other failure (an engine unreachable or
// failing, as under load) is answered as a server error the SDKs retry: the request is never
// sent to an engine that may not own its items, where a write would be lost to later reads.
func (g *Gateway) noSchema(w http.ResponseWriter, r *http.Request, err error, body []byte) {
	var se *schemaError
	switch {
	case errors.As(err, &se) && se.status >= 400 && se.status < 500:
		g.forward(w, r, iam.DynamoDB, g.parts.engines[0], body)
	case errors.As(err, &se):
		writeAnswer(w, se.status, se.hdr, se.body)
	default:
		writeJSONError(w, http.StatusInternalServerError, "com.amazonaws.dynamodb.v20120810#InternalServerError",
			"the local endpoint could not read the table's key schema: "+err.Error())
	}
}

// partAll sends a control-plane change to every engine; the answer is the first engine's, or
// the first refusal.
func (g *Gateway) partAll(w http.ResponseWriter, r *http.Request, req map[string]json.RawMessage, body []byte) {
	p := g.parts
	type answer struct {
		status int
		hdr    http.Header
		body   []byte
	}
	answers := make([]answer, len(p.engines))
	var wg sync.WaitGroup
	for i, e := range p.engines {
		wg.Go(func() {
			s, h, b := g.engineCall(r, e, "", body)
			answers[i] = answer{s, h, b}
		})
	}
	wg.Wait()
	p.mu.Lock()
	table := str(req["TableName"])
	if table == "" {
		clear(p.schemas)
		clear(p.streams)
	} else {
		delete(p.schemas, table)
		delete(p.streams, table)
	}
	p.mu.Unlock()
	for _, a := range answers {
		if a.status != http.StatusOK {
			writeAnswer(w, a.status, a.hdr, a.body)
			return
		}
	}
	writeAnswer(w, answers[0].status, answers[0].hdr, answers[0].body)
}

// transactOwner returns the one engine a transaction's items live on.
func (g *Gateway) transactOwner(ctx context.Context, r *http.Request, req map[string]json.RawMessage) (int, error) {
	var items []map[string]struct {
		TableName string
		Key, Item map[string]json.RawMessage
	}
	if err := json.Unmarshal(req["TransactItems"], &items); err != nil {
		return 0, fmt.Errorf("TransactItems: %w", err)
	}
	owner := -1
	var first string
	for _, it := range items {
		for _, act := range it {
			s, err := g.partSchema(ctx, r, act.TableName)
			if err != nil {
				return 0, err // noSchema answers it
			}
			k := act.Key
			if k == nil {
				k = act.Item
			}
			i := g.parts.owner(k[s.pk])
			switch {
			case owner < 0:
				owner, first = i, string(k[s.pk])
			case owner != i:
				return 0, fmt.Errorf("the local DynamoDB is partitioned over %d engines and this transaction's items live on more than one (partition keys %s and %s): DynamoDB runs such a transaction, one DynamoDB Local engine cannot, so it is refused whole, nothing applied (colocate the keys with Gateway.Colocate, or run one partition: SUNDIAL_DYNAMODB_PARTITIONS=1)",
					len(g.parts.engines), first, k[s.pk])
			}
		}
	}
	return max(owner, 0), nil
}

// keyCond finds the partition key's value in a Query's key condition (ok false: none, or not
// an equality the router reads).
var eqTerm = regexp.MustCompile(`([#:]?[A-Za-z0-9_.\-]+)\s*=\s*([#:]?[A-Za-z0-9_.\-]+)`)

func keyCond(req map[string]json.RawMessage, pk string) (json.RawMessage, bool) {
	var names map[string]string
	var values map[string]json.RawMessage
	_ = json.Unmarshal(req["ExpressionAttributeNames"], &names)
	_ = json.Unmarshal(req["ExpressionAttributeValues"], &values)
	if expr := str(req["KeyConditionExpression"]); expr != "" {
		name := func(t string) string {
			if strings.HasPrefix(t, "#") {
				return names[t]
			}
			return t
		}
		for _, m := range eqTerm.FindAllStringSubmatch(expr, -1) {
			l, rt := m[1], m[2]
			if strings.HasPrefix(l, ":") {
				l, rt = rt, l
			}
			if name(l) == pk && strings.HasPrefix(rt, ":") && values[rt] != nil {
				return values[rt], true
			}
		}
		return nil, false
	}
	var legacy map[string]struct {
		ComparisonOperator string
		AttributeValueList []json.RawMessage
	}
	_ = json.Unmarshal(req["KeyConditions"], &legacy)
	if c, ok := legacy[pk]; ok && c.ComparisonOperator == "EQ" && len(c.AttributeValueList) == 1 {
		return c.AttributeValueList[0], true
	}
	return nil, false
}

// partQuery answers a Query: from the partition key's engine, or from every engine merged.
func (g *Gateway) partQuery(w http.ResponseWriter, r *http.Request, req map[string]json.RawMessage, body []byte) {
	p := g.parts
	s, err := g.partSchema(r.Context(), r, str(req["TableName"]))
	if err != nil {
		g.noSchema(w, r, err, body)
		return
	}
	index := str(req["IndexName"])
	if index == "" {
		if v, ok := keyCond(req, s.pk); ok {
			g.forward(w, r, iam.DynamoDB, p.engines[p.owner(v)], body)
			return
		}
	}
	order := [2]string{s.pk, s.sk}
	if index != "" {
		ks, ok := s.indexes[index]
		if !ok {
			g.forward(w, r, iam.DynamoDB, p.engines[0], body) // the engine names the unknown index
			return
		}
		order = ks
	}
	g.partMerge(w, r, req, s, order)
}

// cursor is where one engine stands in a merged read: done, or after start (nil: from its
// beginning).
type cursor struct {
	start json.RawMessage
	done  bool
}

// cursorMemory remembers, for the LastEvaluatedKeys the gateway answered lately, where each
// engine stood.
type cursorMemory struct {
	mu    sync.Mutex
	m     map[string][]cursor
	order []string
}

const cursorsKept = 4096

func (c *cursorMemory) put(k string, cs []cursor) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[k]; !ok {
		c.order = append(c.order, k)
	}
	c.m[k] = cs
	for len(c.order) > cursorsKept {
		delete(c.m, c.order[0])
		c.order = c.order[1:]
	}
}

func (c *cursorMemory) get(k string) ([]cursor, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cs, ok := c.m[k]
	return cs, ok
}

// mergeAnswer is one engine's answer to a merged read.
type mergeAnswer struct {
	status int
	hdr    http.Header
	body   []byte
	items  []map[string]json.RawMessage
	lek    map[string]json.RawMessage
	count  int
	resp   map[string]json.RawMessage
}

// partMerge answers a Query from every engine, merged in the order of order's sort key (then
// of the table's key), paged as one engine would page it.
func (g *Gateway) partMerge(w http.ResponseWriter, r *http.Request, req map[string]json.RawMessage, s *partSchema, order [2]string) {
	p := g.parts
	forward := string(req["ScanIndexForward"]) != "false"
	limit := -1
	if l, ok := req["Limit"]; ok {
		limit, _ = strconv.Atoi(string(l))
	}
	// The query a cursor belongs to (a map's JSON is in any order: the values re-encoded).
	memKey := string(req["TableName"]) + "\x00" + string(req["IndexName"]) + "\x00" + string(req["KeyConditionExpression"]) + "\x00" +
		string(req["FilterExpression"]) + "\x00" + canonical(req["ExpressionAttributeValues"]) + "\x00" + string(req["ScanIndexForward"]) + "\x00"
	cursors := make([]cursor, len(p.engines))
	if esk, ok := req["ExclusiveStartKey"]; ok {
		if cs, known := p.cursors.get(memKey + canonical(esk)); known {
			cursors = slices.Clone(cs)
		} else {
			for i := range cursors {
				cursors[i].start = esk
			}
		}
	}
	keyAttrs := []string{s.pk, s.sk, order[0], order[1]}
	answers := make([]*mergeAnswer, len(p.engines))
	var wg sync.WaitGroup
	for i, e := range p.engines {
		if cursors[i].done {
			continue
		}
		sub := cloneReq(req)
		delete(sub, "ExclusiveStartKey")
		if cursors[i].start != nil {
			sub["ExclusiveStartKey"] = cursors[i].start
		}
		b, _ := json.Marshal(sub)
		wg.Go(func() {
			status, hdr, out := g.engineCall(r, e, "", b)
			a := &mergeAnswer{status: status, hdr: hdr, body: out}
			if status == http.StatusOK {
				var resp struct {
					Items            []map[string]json.RawMessage
					LastEvaluatedKey map[string]json.RawMessage
					Count            int
				}
				_ = json.Unmarshal(out, &resp)
				_ = json.Unmarshal(out, &a.resp)
				a.items, a.lek, a.count = resp.Items, resp.LastEvaluatedKey, resp.Count
			}
			answers[i] = a
		})
	}
	wg.Wait()
	var hdr http.Header
	for _, a := range answers {
		if a == nil {
			continue
		}
		if a.status != http.StatusOK {
			writeAnswer(w, a.status, a.hdr, a.body)
			return
		}
		hdr = a.hdr
	}
	if hdr == nil { // every engine was done: an ExclusiveStartKey past the end
		writeJSONAnswer(w, http.Header{"Content-Type": {"application/x-amz-json-1.0"}}, map[string]any{"Items": []any{}, "Count": 0, "ScannedCount": 0})
		return
	}
	// Heads are compared by the sort key (in the asked direction), then the table's key.
	cmpItems := func(a, b map[string]json.RawMessage) int {
		if order[1] != "" {
			if c := compareAV(a[order[1]], b[order[1]]); c != 0 {
				if !forward {
					return -c
				}
				return c
			}
		}
		for _, attr := range []string{s.pk, s.sk} {
			if attr == "" {
				continue
			}
			if c := compareAV(a[attr], b[attr]); c != 0 {
				return c
			}
		}
		return 0
	}
	if str(req["Select"]) == "COUNT" {
		total, scanned := 0, 0
		for _, a := range answers {
			if a == nil {
				continue
			}
			if a.lek != nil {
				writeJSONError(w, http.StatusBadRequest, "com.amazon.coral.validate#ValidationException",
					"the local endpoint's partitioned DynamoDB does not page a Select=COUNT Query across engines: Sundial does not send one")
				return
			}
			total += a.count
			var sc int
			_ = json.Unmarshal(a.resp["ScannedCount"], &sc)
			scanned += sc
		}
		writeJSONAnswer(w, hdr, map[string]any{"Count": total, "ScannedCount": scanned})
		return
	}
	// A k-way merge of the engines' answers, each taken in its own order: it stops at the
	// limit, or when an engine that has more (a LastEvaluatedKey) has no item left to offer,
	// since its next items are unknown. Each engine's part answered is so a prefix of its own.
	taken := make([]int, len(p.engines))
	var out []map[string]json.RawMessage
	full := false
	stalled := -1
	for {
		best := -1
		for i, a := range answers {
			if a == nil || taken[i] == len(a.items) {
				continue
			}
			if best < 0 || cmpItems(a.items[taken[i]], answers[best].items[taken[best]]) < 0 {
				best = i
			}
		}
		for i, a := range answers {
			if a != nil && a.lek != nil && taken[i] == len(a.items) {
				stalled = i
			}
		}
		if best < 0 || stalled >= 0 {
			break
		}
		if limit >= 0 && len(out) == limit {
			full = true
			break
		}
		out = append(out, answers[best].items[taken[best]])
		taken[best]++
	}
	next := slices.Clone(cursors)
	more := false
	for i, a := range answers {
		if a == nil {
			continue
		}
		switch {
		case taken[i] == len(a.items) && a.lek == nil:
			next[i] = cursor{done: true}
		case taken[i] == len(a.items):
			next[i] = cursor{start: keyAttrsOf(a.lek, keyAttrs)}
			more = true
		case taken[i] > 0:
			next[i] = cursor{start: keyAttrsOf(a.items[taken[i]-1], keyAttrs)}
			more = true
		default:
			more = true // nothing of it answered: it starts again where it started
		}
	}
	resp := map[string]any{"Items": out, "Count": len(out)}
	if out == nil {
		resp["Items"] = []any{}
	}
	scanned := 0
	var consumed json.RawMessage
	for _, a := range answers {
		if a == nil {
			continue
		}
		var sc int
		_ = json.Unmarshal(a.resp["ScannedCount"], &sc)
		scanned += sc
		consumed = sumJSON(consumed, a.resp["ConsumedCapacity"])
	}
	resp["ScannedCount"] = max(scanned, len(out))
	if consumed != nil {
		resp["ConsumedCapacity"] = consumed
	}
	if more || full {
		var lek json.RawMessage
		if len(out) > 0 {
			lek = keyAttrsOf(out[len(out)-1], keyAttrs)
		} else {
			lek = keyAttrsOf(answers[stalled].lek, keyAttrs) // an engine read on without answering
		}
		resp["LastEvaluatedKey"] = lek
		p.cursors.put(memKey+canonical(lek), next)
	}
	writeJSONAnswer(w, hdr, resp)
}

func cloneReq(m map[string]json.RawMessage) map[string]json.RawMessage {
	out := make(map[string]json.RawMessage, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// keyAttrsOf returns an item's key attributes (those of attrs it has) as a JSON map.
func keyAttrsOf(item map[string]json.RawMessage, attrs []string) json.RawMessage {
	k := map[string]json.RawMessage{}
	for _, a := range attrs {
		if v, ok := item[a]; ok && a != "" {
			k[a] = v
		}
	}
	b, _ := json.Marshal(k)
	return b
}

// compareAV orders two scalar attribute values as DynamoDB orders keys: numbers by value,
// strings and binaries by their bytes. A missing value sorts first.
func compareAV(a, b json.RawMessage) int {
	var x, y struct{ S, N, B *string }
	_ = json.Unmarshal(a, &x)
	_ = json.Unmarshal(b, &y)
	switch {
	case x.N != nil && y.N != nil:
		rx, ok1 := new(big.Rat).SetString(*x.N)
		ry, ok2 := new(big.Rat).SetString(*y.N)
		if ok1 && ok2 {
			return rx.Cmp(ry)
		}
		return strings.Compare(*x.N, *y.N)
	case x.S != nil && y.S != nil:
		return strings.Compare(*x.S, *y.S)
	case x.B != nil && y.B != nil:
		bx, _ := base64.StdEncoding.DecodeString(*x.B)
		by, _ := base64.StdEncoding.DecodeString(*y.B)
		return bytes.Compare(bx, by)
	}
	return bytes.Compare(a, b)
}

// sumJSON adds two ConsumedCapacity values: numbers summed, other values kept; arrays (a
// batch's, one element per table) joined by TableName.
func sumJSON(a, b json.RawMessage) json.RawMessage {
	if len(a) == 0 {
		return b
	}
	if len(b) == 0 {
		return a
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return a
	}
	out, _ := json.Marshal(sumAny(x, y))
	return out
}

func sumAny(x, y any) any {
	switch xv := x.(type) {
	case float64:
		if yv, ok := y.(float64); ok {
			return xv + yv
		}
	case map[string]any:
		if yv, ok := y.(map[string]any); ok {
			out := map[string]any{}
			for k, v := range xv {
				out[k] = v
			}
			for k, v := range yv {
				if cur, ok := out[k]; ok {
					out[k] = sumAny(cur, v)
				} else {
					out[k] = v
				}
			}
			return out
		}
	case []any:
		if yv, ok := y.([]any); ok {
			out := slices.Clone(xv)
		next:
			for _, e := range yv {
				em, _ := e.(map[string]any)
				for i, c := range out {
					if cm, ok := c.(map[string]any); ok && em != nil && cm["TableName"] == em["TableName"] {
						out[i] = sumAny(cm, em)
						continue next
					}
				}
				out = append(out, e)
			}
			return out
		}
	}
	return x
}

// partScan reads the engines one after the other.
func (g *Gateway) partScan(w http.ResponseWriter, r *http.Request, req map[string]json.RawMessage) {
	p := g.parts
	s, err := g.partSchema(r.Context(), r, str(req["TableName"]))
	if err != nil {
		b, _ := json.Marshal(req)
		g.noSchema(w, r, err, b)
		return
	}
	limit := -1
	if l, ok := req["Limit"]; ok {
		limit, _ = strconv.Atoi(string(l))
	}
	engine := 0
	var esk map[string]json.RawMessage
	if raw, ok := req["ExclusiveStartKey"]; ok {
		_ = json.Unmarshal(raw, &esk)
		engine = p.owner(esk[s.pk])
	}
	items := []json.RawMessage{}
	count, scanned := 0, 0
	var consumed, lek json.RawMessage
	var hdr http.Header
	for ; engine < len(p.engines); engine++ {
		sub := cloneReq(req)
		delete(sub, "ExclusiveStartKey")
		if esk != nil {
			sub["ExclusiveStartKey"], _ = json.Marshal(esk)
			esk = nil
		}
		if limit >= 0 {
			sub["Limit"] = json.RawMessage(strconv.Itoa(limit - scanned))
		}
		b, _ := json.Marshal(sub)
		status, h, out := g.engineCall(r, p.engines[engine], "", b)
		if status != http.StatusOK {
			writeAnswer(w, status, h, out)
			return
		}
		hdr = h
		var resp struct {
			Items            []json.RawMessage
			Count            int
			ScannedCount     int
			LastEvaluatedKey json.RawMessage
			ConsumedCapacity json.RawMessage
		}
		if err := json.Unmarshal(out, &resp); err != nil {
			writeJSONError(w, http.StatusInternalServerError, "InternalFailure", "the engine's Scan answer: "+err.Error())
			return
		}
		items = append(items, resp.Items...)
		count += resp.Count
		scanned += resp.ScannedCount
		consumed = sumJSON(consumed, resp.ConsumedCapacity)
		if resp.LastEvaluatedKey != nil {
			lek = resp.LastEvaluatedKey
			break
		}
		if limit >= 0 && scanned >= limit {
			if engine+1 < len(p.engines) {
				// The limit is reached at an engine's end: the next page begins at the next
				// engine, which a key of this engine's last item names.
				if len(resp.Items) > 0 {
					lek = keyAttrsOf(itemMap(resp.Items[len(resp.Items)-1]), []string{s.pk, s.sk})
				} else {
					// Nothing answered to name the position by: read one item of the next.
					limit++
					continue
				}
			}
			break
		}
	}
	resp := map[string]any{"Count": count, "ScannedCount": scanned}
	if str(req["Select"]) != "COUNT" {
		resp["Items"] = items
	}
	if lek != nil {
		resp["LastEvaluatedKey"] = lek
	}
	if consumed != nil {
		resp["ConsumedCapacity"] = consumed
	}
	writeJSONAnswer(w, hdr, resp)
}

func itemMap(raw json.RawMessage) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(raw, &m)
	return m
}

// partBatch splits a BatchGetItem (keysField "Keys") or BatchWriteItem ("") by engine and
// joins the answers.
func (g *Gateway) partBatch(w http.ResponseWriter, r *http.Request, req map[string]json.RawMessage, keysField, unprocessedField string) {
	p := g.parts
	ctx := r.Context()
	var tables map[string]json.RawMessage
	if err := json.Unmarshal(req["RequestItems"], &tables); err != nil {
		b, _ := json.Marshal(req)
		g.forward(w, r, iam.DynamoDB, p.engines[0], b)
		return
	}
	parts := make([]map[string]any, len(p.engines))
	for table, raw := range tables {
		s, err := g.partSchema(ctx, r, table)
		if err != nil {
			b, _ := json.Marshal(req)
			g.noSchema(w, r, err, b)
			return
		}
		if keysField != "" { // BatchGetItem: {Keys: [...], ProjectionExpression, ...}
			var spec map[string]json.RawMessage
			var keys []map[string]json.RawMessage
			_ = json.Unmarshal(raw, &spec)
			_ = json.Unmarshal(spec["Keys"], &keys)
			split := make([][]map[string]json.RawMessage, len(p.engines))
			for _, k := range keys {
				i := p.owner(k[s.pk])
				split[i] = append(split[i], k)
			}
			for i, ks := range split {
				if len(ks) == 0 {
					continue
				}
				sub := cloneReq(spec)
				sub["Keys"], _ = json.Marshal(ks)
				if parts[i] == nil {
					parts[i] = map[string]any{}
				}
				parts[i][table] = sub
			}
			continue
		}
		var reqs []struct {
			PutRequest    *struct{ Item map[string]json.RawMessage } `json:",omitempty"`
			DeleteRequest *struct{ Key map[string]json.RawMessage }  `json:",omitempty"`
		}
		var rawReqs []json.RawMessage
		_ = json.Unmarshal(raw, &reqs)
		_ = json.Unmarshal(raw, &rawReqs)
		split := make([][]json.RawMessage, len(p.engines))
		for j, wr := range reqs {
			var k map[string]json.RawMessage
			switch {
			case wr.PutRequest != nil:
				k = wr.PutRequest.Item
			case wr.DeleteRequest != nil:
				k = wr.DeleteRequest.Key
			}
			i := p.owner(k[s.pk])
			split[i] = append(split[i], rawReqs[j])
		}
		for i, rs := range split {
			if len(rs) == 0 {
				continue
			}
			if parts[i] == nil {
				parts[i] = map[string]any{}
			}
			parts[i][table] = rs
		}
	}
	type answer struct {
		status int
		hdr    http.Header
		body   []byte
		sent   map[string]any
	}
	answers := make([]*answer, len(p.engines))
	var wg sync.WaitGroup
	for i, part := range parts {
		if part == nil {
			continue
		}
		sub := cloneReq(req)
		sub["RequestItems"], _ = json.Marshal(part)
		b, _ := json.Marshal(sub)
		wg.Go(func() {
			s, h, out := g.engineCall(r, p.engines[i], "", b)
			answers[i] = &answer{s, h, out, part}
		})
	}
	wg.Wait()
	responses := map[string][]json.RawMessage{}
	unprocessed := map[string]any{}
	var consumed json.RawMessage
	var hdr http.Header
	var refusal *answer
	okCount := 0
	for _, a := range answers {
		if a == nil {
			continue
		}
		if a.status != http.StatusOK {
			if retryable(a.status, a.body) {
				// As DynamoDB answers a part it could not process for want of capacity or by
				// an internal failure: unprocessed, the rest applied.
				for t, v := range a.sent {
					unprocessed[t] = joinUnprocessed(unprocessed[t], v, keysField)
				}
			} else if refusal == nil {
				refusal = a
			}
			continue
		}
		okCount++
		hdr = a.hdr
		var resp struct {
			Responses                         map[string][]json.RawMessage
			UnprocessedKeys, UnprocessedItems map[string]json.RawMessage
			ConsumedCapacity                  json.RawMessage
		}
		if err := json.Unmarshal(a.body, &resp); err != nil {
			writeJSONError(w, http.StatusInternalServerError, "InternalFailure", "the engine's batch answer: "+err.Error())
			return
		}
		for t, items := range resp.Responses {
			responses[t] = append(responses[t], items...)
		}
		un := resp.UnprocessedItems
		if keysField != "" {
			un = resp.UnprocessedKeys
		}
		for t, v := range un {
			var x any
			_ = json.Unmarshal(v, &x)
			unprocessed[t] = joinUnprocessed(unprocessed[t], x, keysField)
		}
		consumed = sumJSON(consumed, resp.ConsumedCapacity)
	}
	if refusal != nil {
		// A refusal the caller must see (a validation error): every engine refuses it alike,
		// the request's shape being the same for each.
		writeAnswer(w, refusal.status, refusal.hdr, refusal.body)
		return
	}
	if okCount == 0 {
		for _, a := range answers {
			if a != nil {
				writeAnswer(w, a.status, a.hdr, a.body) // every part failed: the failure itself
				return
			}
		}
	}
	resp := map[string]any{unprocessedField: unprocessed}
	if keysField != "" {
		resp["Responses"] = responses
	}
	if consumed != nil {
		resp["ConsumedCapacity"] = consumed
	}
	writeJSONAnswer(w, hdr, resp)
}

// retryable: an engine's refusal that DynamoDB would answer as unprocessed items.
func retryable(status int, body []byte) bool {
	return status >= 500 || bytes.Contains(body, []byte("ProvisionedThroughputExceeded")) ||
		bytes.Contains(body, []byte("ThrottlingException")) || bytes.Contains(body, []byte("RequestLimitExceeded"))
}

// joinUnprocessed adds one engine's unprocessed part of a table to what is already there.
func joinUnprocessed(cur, add any, keysField string) any {
	if cur == nil {
		return normalize(add)
	}
	if keysField == "" { // BatchWriteItem: a list of requests
		c, _ := normalize(cur).([]any)
		a, _ := normalize(add).([]any)
		return append(c, a...)
	}
	c, _ := normalize(cur).(map[string]any) // BatchGetItem: {Keys: [...], ...}
	a, _ := normalize(add).(map[string]any)
	ck, _ := c["Keys"].([]any)
	ak, _ := a["Keys"].([]any)
	out := map[string]any{}
	for k, v := range c {
		out[k] = v
	}
	out["Keys"] = append(ck, ak...)
	return out
}

// normalize turns raw JSON parts into plain values.
func normalize(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return v
	}
	return out
}

// Stream shards: a shard id or iterator of engine i > 0 carries the engine.
const iteratorTag = "#sundial-partition-"

func tagShard(id string, i int) string {
	if i == 0 || id == "" {
		return id
	}
	return id + "-p" + strconv.Itoa(i)
}

func untagShard(id string) (int, string) {
	j := strings.LastIndex(id, "-p")
	if j < 0 {
		return 0, id
	}
	i, err := strconv.Atoi(id[j+2:])
	if err != nil || i <= 0 {
		return 0, id
	}
	return i, id[:j]
}

func tagIterator(it string, i int) string {
	if i == 0 || it == "" {
		return it
	}
	return it + iteratorTag + strconv.Itoa(i)
}

func untagIterator(it string) (int, string) {
	j := strings.LastIndex(it, iteratorTag)
	if j < 0 {
		return 0, it
	}
	i, err := strconv.Atoi(it[j+len(iteratorTag):])
	if err != nil || i <= 0 {
		return 0, it
	}
	return i, it[:j]
}

// tagNextIterator tags a GetRecords answer's NextShardIterator. The answer may be hundreds of
// kilobytes, read four times a second per shard: the field is found by its text, not by
// decoding the answer (records cannot hold the text unescaped: their strings' quotes are).
func tagNextIterator(body []byte, i int) []byte {
	field := []byte(`"NextShardIterator":"`)
	j := bytes.LastIndex(body, field)
	if j < 0 {
		return retag(body, "NextShardIterator", func(s string) string { return tagIterator(s, i) })
	}
	start := j + len(field)
	end := bytes.IndexByte(body[start:], '"')
	if end < 0 {
		return body
	}
	end += start
	out := make([]byte, 0, len(body)+len(iteratorTag)+4)
	out = append(out, body[:end]...)
	out = append(out, iteratorTag+strconv.Itoa(i)...)
	return append(out, body[end:]...)
}

// retag rewrites the string value of a top-level field of a JSON answer.
func retag(body []byte, field string, f func(string) string) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return body
	}
	v, ok := m[field]
	if !ok || string(v) == "null" {
		return body
	}
	m[field], _ = json.Marshal(f(str(v)))
	out, err := json.Marshal(m)
	if err != nil {
		return body
	}
	return out
}

// streamARNs returns each engine's stream ARN for the stream arn (the first engine's, in the
// engines' form): the table's latest stream on each.
func (g *Gateway) streamARNs(r *http.Request, arn string) ([]string, error) {
	p := g.parts
	const mark = ":table/"
	i := strings.Index(arn, mark)
	j := strings.Index(arn, "/stream/")
	if i < 0 || j < i {
		return nil, fmt.Errorf("not a stream ARN: %s", arn)
	}
	table := arn[i+len(mark) : j]
	prefix := arn[:j+len("/stream/")]
	p.mu.Lock()
	labels := p.streams[table]
	p.mu.Unlock()
	if labels == nil || labels[0] != arn[j+len("/stream/"):] {
		labels = make([]string, len(p.engines))
		b, _ := json.Marshal(map[string]string{"TableName": table})
		for e := range p.engines {
			status, _, out := g.engineCall(r, p.engines[e], "DescribeTable", b)
			if status != http.StatusOK {
				return nil, fmt.Errorf("DescribeTable %s on engine %d: %s", table, e, out)
			}
			var d struct {
				Table struct{ LatestStreamArn string }
			}
			_ = json.Unmarshal(out, &d)
			k := strings.LastIndex(d.Table.LatestStreamArn, "/stream/")
			if k < 0 {
				return nil, fmt.Errorf("table %s has no stream on engine %d", table, e)
			}
			labels[e] = d.Table.LatestStreamArn[k+len("/stream/"):]
		}
		if labels[0] != arn[j+len("/stream/"):] {
			// An older stream of the table: only the first engine's is known by that name.
			return []string{arn}, nil
		}
		p.mu.Lock()
		p.streams[table] = labels
		p.mu.Unlock()
	}
	out := make([]string, len(labels))
	for e, l := range labels {
		out[e] = prefix + l
	}
	return out, nil
}

// partDescribeStream lists the shards of every engine's stream as the stream's.
func (g *Gateway) partDescribeStream(w http.ResponseWriter, r *http.Request, req map[string]json.RawMessage) {
	arns, err := g.streamARNs(r, str(req["StreamArn"]))
	if err != nil {
		b, _ := json.Marshal(req)
		g.forward(w, r, iam.DynamoDB, g.parts.engines[0], b) // the engine answers the unknown stream
		return
	}
	var desc map[string]json.RawMessage
	var shards []map[string]any
	var hdr http.Header
	for e, arn := range arns {
		var start string
		for {
			sub := map[string]any{"StreamArn": arn}
			if start != "" {
				sub["ExclusiveStartShardId"] = start
			}
			b, _ := json.Marshal(sub)
			status, h, out := g.engineCall(r, g.parts.engines[e], "", b)
			if status != http.StatusOK {
				writeAnswer(w, status, h, out)
				return
			}
			var d struct {
				StreamDescription map[string]json.RawMessage
			}
			if err := json.Unmarshal(out, &d); err != nil {
				writeJSONError(w, http.StatusInternalServerError, "InternalFailure", "the engine's DescribeStream answer: "+err.Error())
				return
			}
			if e == 0 && desc == nil {
				desc, hdr = d.StreamDescription, h
			}
			var page []map[string]any
			_ = json.Unmarshal(d.StreamDescription["Shards"], &page)
			for _, sh := range page {
				for _, f := range []string{"ShardId", "ParentShardId"} {
					if id, ok := sh[f].(string); ok {
						sh[f] = tagShard(id, e)
					}
				}
				shards = append(shards, sh)
			}
			start = str(d.StreamDescription["LastEvaluatedShardId"])
			if start == "" {
				break
			}
		}
	}
	if after := str(req["ExclusiveStartShardId"]); after != "" {
		for k, sh := range shards {
			if sh["ShardId"] == after {
				shards = shards[k+1:]
				break
			}
		}
	}
	delete(desc, "LastEvaluatedShardId")
	if l, ok := req["Limit"]; ok {
		if n, _ := strconv.Atoi(string(l)); n > 0 && n < len(shards) {
			shards = shards[:n]
			desc["LastEvaluatedShardId"], _ = json.Marshal(shards[n-1]["ShardId"])
		}
	}
	if shards == nil {
		shards = []map[string]any{}
	}
	desc["Shards"], _ = json.Marshal(shards)
	desc["StreamArn"] = req["StreamArn"]
	b, _ := json.Marshal(map[string]any{"StreamDescription": desc})
	// The body went out in the engines' form: the translation to the stack's is forward's.
	if out, changed := g.arns.response(b); changed {
		b = out
	}
	writeAnswer(w, http.StatusOK, hdr, b)
}

// partShardIterator opens an iterator on the shard's engine.
func (g *Gateway) partShardIterator(w http.ResponseWriter, r *http.Request, req map[string]json.RawMessage) {
	i, id := untagShard(str(req["ShardId"]))
	arns, err := g.streamARNs(r, str(req["StreamArn"]))
	if err != nil || i >= len(arns) {
		if err == nil {
			err = errors.New("no such shard")
		}
		writeJSONError(w, http.StatusBadRequest, "com.amazonaws.dynamodb.v20120810#ResourceNotFoundException",
			fmt.Sprintf("Requested resource not found: Shard %s of stream %s: %v", str(req["ShardId"]), str(req["StreamArn"]), err))
		return
	}
	req["ShardId"], _ = json.Marshal(id)
	req["StreamArn"], _ = json.Marshal(arns[i])
	b, _ := json.Marshal(req)
	status, hdr, out := g.engineCall(r, g.parts.engines[i], "", b)
	if status == http.StatusOK {
		out = retag(out, "ShardIterator", func(s string) string { return tagIterator(s, i) })
	}
	writeAnswer(w, status, hdr, out)
}
