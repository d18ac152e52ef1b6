package dynamo

import (
	"cmp"
	"context"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/timer"
)

// The all-timers log without an index write per execution.
//
// An execution's log item is keyed by its instance (one timer's history is a Query of the
// table). Listing every timer's executions, newest first, used to need a second copy of each
// item in a global secondary index (byDay, one more write unit per firing: a quarter of what
// a firing wrote). Instead the log writer, which writes executions in batches anyway, also
// writes one *page* per batch, app and minute: an item in the log table that lists the keys
// of the executions of that batch that started in that minute. A page of 100 references is a
// few KB, so a firing's share of it is a small fraction of a write unit.
//
// A page's partition is its app and day (pagePK); its sort key is the largest Ref (start time
// and execution id) among its entries, then "|" and the smallest, so that two pages holding
// different sets never share a key (a batch delivered again with the same records writes the
// same pages again; one delivered in other groupings writes other pages, and a reader drops
// the second reference to an execution). Every entry of a page started within the page's
// minute (pageSpan), so:
//
//   - a page whose sort key is below a cursor's time + pageSpan holds every entry before the
//     cursor that any page holds (reading from there, nothing before the cursor is missed);
//   - reading pages in descending sort key order, an entry whose Ref is above the next
//     page's largest Ref can be given out: no page not yet read holds a later one. So the
//     listing is exactly newest first by start time, as one timer's history is, and a page of
//     the listing resumes from the last entry's Ref.
//
// The entries themselves are then read with BatchGetItem. The failed executions keep their
// sparse index (errorsByDay): they are few, and its items are the entries.

// pageSpan bounds how far apart the start times of one page's entries are.
const pageSpan = time.Minute

// maxPageRefs bounds a page's references so that the item stays far below DynamoDB's 400 KB
// (a reference is at most ~300 bytes: names of 128 characters, tenant and app).
const maxPageRefs = 500

// pageItem is one page of the all-timers log.
type pageItem struct {
	PK        string `dynamodbav:"pk"`
	SK        string `dynamodbav:"sk"`
	Refs      string `dynamodbav:"refs"` // "<instance>\t<Ref>" lines, newest first
	ExpiresAt int64  `dynamodbav:"expiresAt"`
}

// pagePK is the partition of an app's pages of one day ("2006-01-02").
func pagePK(app, day string) string { return "D#" + app + "#" + day }

// errPK is the errorsByDay partition of an app's failed executions of one day; errShardPK
// one of its errShards write shards. A failed entry goes to the shard of its execution id, so
// one app's failures spread over errShards index partitions: a partition takes 1,000 write
// units a second, a failed entry writes 1 on the index (TestErrorsByDayUnitsPerFailure),
// and one app may fail about errShards × 1,000 times a second before the index throttles the
// log writer. A reader merges the shards, and the unsharded key of entries written before.
func errPK(app, day string) string { return app + "#" + day }

const errShards = 4

func errShardPK(app, day, execID string) string {
	h := fnv.New32a()
	_, _ = h.Write([]byte(execID))
	return errPK(app, day) + "#" + strconv.Itoa(int(h.Sum32()%errShards))
}

// errPKs are every errorsByDay partition of an app's day: the shards, then the unsharded key.
func errPKs(app, day string) []string {
	out := make([]string, 0, errShards+1)
	for k := range errShards {
		out = append(out, errPK(app, day)+"#"+strconv.Itoa(k))
	}
	return append(out, errPK(app, day))
}

type pageRef struct {
	instance string // the log item's partition key (timer.Key.String())
	ref      string // its sort key (timer.Execution.Ref())
}

// newestFirst orders references by Ref, descending (then instance, for a total order).
func newestFirst(a, b pageRef) int {
	return cmp.Or(strings.Compare(b.ref, a.ref), strings.Compare(b.instance, a.instance))
}

// logPages groups a batch's executions into pages: one per app and minute of start (more
// when a group has over maxPageRefs), each listing its entries newest first, once each.
func logPages(es []timer.Execution, retention time.Duration) []pageItem {
	type group struct {
		app    string
		minute time.Time
	}
	groups := map[group][]pageRef{}
	seen := map[pageRef]bool{}
	for _, e := range es {
		r := pageRef{instance: e.Key.String(), ref: logSortKey(e)}
		if seen[r] {
			continue
		}
		seen[r] = true
		g := group{app: appAttr(e.App), minute: e.StartedAt.UTC().Truncate(pageSpan)}
		groups[g] = append(groups[g], r)
	}
	var out []pageItem
	for g, refs := range groups {
		slices.SortFunc(refs, newestFirst)
		for len(refs) > 0 {
			n := min(len(refs), maxPageRefs)
			chunk := refs[:n]
			refs = refs[n:]
			lines := make([]string, len(chunk))
			for i, r := range chunk {
				lines[i] = r.instance + "\t" + r.ref
			}
			out = append(out, pageItem{
				PK: pagePK(g.app, g.minute.Format(time.DateOnly)),
				SK: chunk[0].ref + "|" + chunk[len(chunk)-1].ref, Refs: strings.Join(lines, "\n"),
				ExpiresAt: g.minute.Add(retention).Unix(),
			})
		}
	}
	slices.SortFunc(out, func(a, b pageItem) int { return cmp.Or(strings.Compare(a.PK, b.PK), strings.Compare(a.SK, b.SK)) })
	return out
}

// refs reads a page's references; a malformed line is an error (no writer of Sundial's
// writes one), not skipped silently.
func (p pageItem) refs() ([]pageRef, error) {
	if p.Refs == "" {
		return nil, nil
	}
	lines := strings.Split(p.Refs, "\n")
	out := make([]pageRef, 0, len(lines))
	for _, l := range lines {
		inst, ref, ok := strings.Cut(l, "\t")
		if !ok || inst == "" || len(ref) < len(logSortLayout) {
			return nil, fmt.Errorf("log page %s/%s: malformed reference %q", p.PK, p.SK, l)
		}
		out = append(out, pageRef{instance: inst, ref: ref})
	}
	return out, nil
}

// maxRef is the largest Ref a page holds (the part of its sort key before "|").
func (p pageItem) maxRef() string {
	r, _, _ := strings.Cut(p.SK, "|")
	return r
}

// allTimersQuery selects entries of every instance (of the apps) from the pages.
type allTimersQuery struct {
	apps   []string
	before string               // entries whose Ref is below this (a Ref, or RefBefore of a time)
	days   int                  // how many days back from before's day
	keep   func(timer.Key) bool // nil: every instance
	limit  int
}

// allTimers reads up to q.limit entries, newest first.
func (s *Store) allTimers(ctx context.Context, q allTimersQuery) ([]timer.Execution, error) {
	from, err := cursorTime(q.before)
	if err != nil {
		return nil, err
	}
	bound := from.Add(pageSpan).Format(logSortLayout)
	var (
		picked  []pageRef
		pending []pageRef // read, not yet given out: every one's Ref is below q.before
		seen    = map[pageRef]bool{}
	)
	// give hands out the pending references above ref (all of them when ref is ""), newest
	// first, and reports whether the listing is full.
	give := func(ref string) bool {
		slices.SortFunc(pending, newestFirst)
		n := 0
		for n < len(pending) && (ref == "" || pending[n].ref > ref) && len(picked) < q.limit {
			picked = append(picked, pending[n])
			n++
		}
		pending = pending[n:]
		return len(picked) >= q.limit
	}
	day := from.UTC()
	full := false
	for d := 0; d < q.days && !full; d++ {
		pages, err := s.dayPages(ctx, q.apps, day.Format(time.DateOnly), bound)
		if err != nil {
			return nil, err
		}
		for {
			p, ok, err := pages.next(ctx)
			if err != nil {
				return nil, err
			}
			if !ok {
				break
			}
			if full = give(p.maxRef()); full {
				break
			}
			refs, err := p.refs()
			if err != nil {
				return nil, err
			}
			for _, r := range refs {
				if r.ref >= q.before || seen[r] {
					continue
				}
				seen[r] = true
				if q.keep != nil {
					k, err := timer.ParseKey(r.instance)
					if err != nil || !q.keep(k) {
						continue
					}
				}
				pending = append(pending, r)
			}
		}
		day = day.AddDate(0, 0, -1)
	}
	if !full {
		give("")
	}
	return s.getEntries(ctx, picked)
}

// dayPages merges the pages of the apps' partitions of one day, in descending sort key order.
func (s *Store) dayPages(ctx context.Context, apps []string, day, bound string) (*merge[pageItem], error) {
	m := &merge[pageItem]{key: func(p pageItem) string { return p.SK }}
	for _, app := range apps {
		kc := expression.Key("pk").Equal(expression.Value(pagePK(app, day))).And(expression.Key("sk").LessThan(expression.Value(bound)))
		// A few pages a request: a listing of 50 entries needs one or two pages, not the
		// megabyte a Query reads without a limit.
		src, err := logSource[pageItem](s, "", kc, nil, 4)
		if err != nil {
			return nil, err
		}
		m.srcs = append(m.srcs, src)
	}
	return m, nil
}

// logSource is a descending Query of the log table (or one of its indexes), read a request
// at a time as the merge needs it.
func logSource[T any](s *Store, index string, kc expression.KeyConditionBuilder, filt *expression.ConditionBuilder, perRequest int32) (*source[T], error) {
	b := expression.NewBuilder().WithKeyCondition(kc)
	if filt != nil {
		b = b.WithFilter(*filt)
	}
	expr, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("build log query: %w", err)
	}
	in := &dynamodb.QueryInput{
		TableName: &s.logs, KeyConditionExpression: expr.KeyCondition(), FilterExpression: expr.Filter(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
		ScanIndexForward: aws.Bool(false), Limit: aws.Int32(perRequest),
	}
	if index != "" {
		in.IndexName = aws.String(index)
	}
	return &source[T]{p: dynamodb.NewQueryPaginator(s.api, in)}, nil
}

// source is one Query's items, decoded a request at a time.
type source[T any] struct {
	p   *dynamodb.QueryPaginator
	buf []T
}

// head is the source's next item, reading the next request's items when none is left.
func (src *source[T]) head(ctx context.Context) (T, bool, error) {
	for len(src.buf) == 0 && src.p.HasMorePages() {
		out, err := src.p.NextPage(ctx)
		if err != nil {
			var zero T
			return zero, false, fmt.Errorf("query log: %w", err)
		}
		if err := attributevalue.UnmarshalListOfMaps(out.Items, &src.buf); err != nil {
			var zero T
			return zero, false, fmt.Errorf("decode log: %w", err)
		}
	}
	if len(src.buf) == 0 {
		var zero T
		return zero, false, nil
	}
	return src.buf[0], true, nil
}

// merge takes, each time, the item with the largest key among its sources' next items: the
// union of descending queries, in descending order.
type merge[T any] struct {
	srcs []*source[T]
	key  func(T) string
}

func (m *merge[T]) next(ctx context.Context) (T, bool, error) {
	var (
		top  T
		best = -1
	)
	for i, src := range m.srcs {
		it, ok, err := src.head(ctx)
		if err != nil {
			return top, false, err
		}
		if ok && (best < 0 || m.key(it) > m.key(top)) {
			best, top = i, it
		}
	}
	if best < 0 {
		return top, false, nil
	}
	m.srcs[best].buf = m.srcs[best].buf[1:]
	return top, true, nil
}

// cursorTime is the instant a log cursor (a Ref, or RefBefore of a time) starts with.
func cursorTime(before string) (time.Time, error) {
	t, err := time.Parse(logSortLayout, before[:min(len(before), len(logSortLayout))])
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: log cursor %q", errkind.Invalid, before)
	}
	return t, nil
}

// allTimersLog lists the executions of every instance of app ("": of every app), tenant ("":
// every tenant), only the failed ones if errorsOnly, whose Ref is below before, newest first,
// up to limit, walking days back from before's day. An app's listing reads only that app's
// partitions; every app's merges them.
func (s *Store) allTimersLog(ctx context.Context, app, tenant string, errorsOnly bool, before string, days, limit int) ([]timer.Execution, error) {
	if days <= 0 {
		days = 31
	}
	apps := []string{app} // a selector: the app as stored
	if app == "" {
		var err error
		if apps, err = s.LogApps(ctx); err != nil {
			return nil, err
		}
	}
	if !errorsOnly {
		return s.allTimers(ctx, allTimersQuery{apps: apps, before: before, days: days, keep: tenantKeep(tenant), limit: limit})
	}
	from, err := cursorTime(before)
	if err != nil {
		return nil, err
	}
	var filt *expression.ConditionBuilder
	if tenant != "" {
		f := expression.Name("tenant").Equal(expression.Value(tenant))
		filt = &f
	}
	var out []timer.Execution
	day := from.UTC()
	for d := 0; d < days && len(out) < limit; d++ {
		m := &merge[logItem]{key: func(it logItem) string { return it.SK }}
		for _, a := range apps {
			for _, pk := range errPKs(a, day.Format(time.DateOnly)) {
				kc := expression.Key("errDay").Equal(expression.Value(pk)).And(expression.Key("sk").LessThan(expression.Value(before)))
				src, err := logSource[logItem](s, indexErrors, kc, filt, int32(min(limit, 100)))
				if err != nil {
					return nil, err
				}
				m.srcs = append(m.srcs, src)
			}
		}
		if out, err = takeEntries(ctx, m, out, limit); err != nil {
			return nil, err
		}
		day = day.AddDate(0, 0, -1)
	}
	return out, nil
}

// takeEntries appends the merged log items' executions to out until it holds limit.
func takeEntries(ctx context.Context, m *merge[logItem], out []timer.Execution, limit int) ([]timer.Execution, error) {
	for len(out) < limit {
		it, ok, err := m.next(ctx)
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		out = append(out, it.execution())
	}
	return out, nil
}

// tenantKeep keeps one tenant's instances (nil: all).
func tenantKeep(tenant string) func(timer.Key) bool {
	if tenant == "" {
		return nil
	}
	return func(k timer.Key) bool { return k.Tenant == tenant }
}

// appsKey is the timers table's item naming every app that ever published (its "apps" string
// set; the default app is not listed: it is always there). An every-app listing of the log
// reads the pages of these apps, so an app's history stays listed after it is deactivated.
var appsKey = map[string]types.AttributeValue{
	"pk": &types.AttributeValueMemberS{Value: "META"},
	"sk": &types.AttributeValueMemberS{Value: "APPS"},
}

// RegisterApps adds apps to the registry (idempotent: a string set).
func (s *Store) RegisterApps(ctx context.Context, apps []string) error {
	var add []string
	for _, a := range apps {
		if a != "" && !slices.Contains(add, a) {
			add = append(add, a)
		}
	}
	if len(add) == 0 {
		return nil
	}
	expr, err := expression.NewBuilder().WithUpdate(expression.Add(expression.Name("apps"), expression.Value(&types.AttributeValueMemberSS{Value: add}))).Build()
	if err != nil {
		return fmt.Errorf("build app registration: %w", err)
	}
	_, err = s.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.timers, Key: appsKey, UpdateExpression: expr.Update(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	})
	if err != nil {
		return fmt.Errorf("register apps %v: %w", add, err)
	}
	return nil
}

// LogApps are the apps whose log an every-app listing reads: the default app, then every
// registered one, by name.
func (s *Store) LogApps(ctx context.Context) ([]string, error) {
	out, err := s.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.timers, Key: appsKey})
	if err != nil {
		return nil, fmt.Errorf("read the apps: %w", err)
	}
	var it struct {
		Apps []string `dynamodbav:"apps,stringset"`
	}
	if err := attributevalue.UnmarshalMap(out.Item, &it); err != nil {
		return nil, fmt.Errorf("decode the apps: %w", err)
	}
	slices.Sort(it.Apps)
	return append([]string{appAttr("")}, slices.DeleteFunc(it.Apps, func(a string) bool { return a == appAttr("") })...), nil
}

// getEntries reads the log items the references name, in their order (BatchGetItem, 100 a
// request). An entry a page names that is not there (expired, or its put still being retried
// by the log writer) is left out.
func (s *Store) getEntries(ctx context.Context, refs []pageRef) ([]timer.Execution, error) {
	keys := make([]map[string]types.AttributeValue, len(refs))
	for i, r := range refs {
		keys[i] = map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: r.instance},
			"sk": &types.AttributeValueMemberS{Value: r.ref},
		}
	}
	found, err := s.batchGet(ctx, s.logs, keys, false) // a log listing; no decision rests on it
	if err != nil {
		return nil, err
	}
	var items []logItem
	if err := attributevalue.UnmarshalListOfMaps(found, &items); err != nil {
		return nil, fmt.Errorf("decode log entries: %w", err)
	}
	got := make(map[pageRef]timer.Execution, len(items))
	for _, it := range items {
		got[pageRef{instance: it.PK, ref: it.SK}] = it.execution()
	}
	out := make([]timer.Execution, 0, len(refs))
	for _, r := range refs {
		if e, ok := got[r]; ok {
			out = append(out, e)
		}
	}
	return out, nil
}
