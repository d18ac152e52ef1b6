package lambdarun_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/eventfilter"
	"github.com/sundialhq/sundial/infra/lambdarun"
)

// fakeStream is a DynamoDB stream whose shards a test lays out (lineage, closing) and fills.
// Iterators are "ARN|shard|position".
type fakeStream struct {
	arn      string
	pageSize int           // shards per DescribeStream page
	age      time.Duration // how long ago put's records were written

	mu     sync.Mutex
	shards []*fakeShard
	seq    int
}

type fakeShard struct {
	id, parent string
	records    []types.Record
	closed     bool
}

func newFakeStream() *fakeStream {
	return &fakeStream{arn: "arn:aws:dynamodb:us-east-1:000000000000:table/T/stream/2026-01-01T00:00:00.000", pageSize: 2}
}

// shard adds a shard (listed first, so that the listing's order is not the lineage's).
func (f *fakeStream) shard(id, parent string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.shards = append([]*fakeShard{{id: id, parent: parent}}, f.shards...)
}

// put appends records to an open shard and returns their sequence numbers.
func (f *fakeStream) put(shard string, n int) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var seqs []string
	for _, s := range f.shards {
		if s.id != shard {
			continue
		}
		if s.closed {
			panic("put on a closed shard")
		}
		for range n {
			f.seq++
			seq := fmt.Sprintf("%021d", f.seq)
			now := time.Now().Add(-f.age)
			s.records = append(s.records, types.Record{EventID: aws.String("e" + seq), EventName: types.OperationTypeModify,
				EventSource: aws.String("aws:dynamodb"), EventVersion: aws.String("1.1"), AwsRegion: aws.String("ddblocal"),
				Dynamodb: &types.StreamRecord{ApproximateCreationDateTime: &now, SequenceNumber: aws.String(seq), SizeBytes: aws.Int64(10),
					StreamViewType: types.StreamViewTypeNewAndOldImages,
					Keys:           map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: shard}},
					NewImage:       map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: shard}, "n": &types.AttributeValueMemberN{Value: strconv.Itoa(f.seq)}}}})
			seqs = append(seqs, seq)
		}
	}
	return seqs
}

func (f *fakeStream) close(shard string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.shards {
		if s.id == shard {
			s.closed = true
		}
	}
}

func (f *fakeStream) find(id string) *fakeShard {
	for _, s := range f.shards {
		if s.id == id {
			return s
		}
	}
	return nil
}

func (f *fakeStream) DescribeStream(_ context.Context, in *dynamodbstreams.DescribeStreamInput, _ ...func(*dynamodbstreams.Options)) (*dynamodbstreams.DescribeStreamOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	start := 0
	if in.ExclusiveStartShardId != nil {
		start = slices.IndexFunc(f.shards, func(s *fakeShard) bool { return s.id == *in.ExclusiveStartShardId }) + 1
	}
	d := &types.StreamDescription{StreamArn: aws.String(f.arn), StreamStatus: types.StreamStatusEnabled}
	for i := start; i < len(f.shards) && i < start+f.pageSize; i++ {
		s := f.shards[i]
		sh := types.Shard{ShardId: aws.String(s.id), SequenceNumberRange: &types.SequenceNumberRange{StartingSequenceNumber: aws.String("0")}}
		if s.parent != "" {
			sh.ParentShardId = aws.String(s.parent)
		}
		if s.closed {
			sh.SequenceNumberRange.EndingSequenceNumber = aws.String("9")
		}
		d.Shards = append(d.Shards, sh)
		if i == start+f.pageSize-1 && i < len(f.shards)-1 {
			d.LastEvaluatedShardId = aws.String(s.id)
		}
	}
	return &dynamodbstreams.DescribeStreamOutput{StreamDescription: d}, nil
}

func (f *fakeStream) GetShardIterator(_ context.Context, in *dynamodbstreams.GetShardIteratorInput, _ ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.find(*in.ShardId)
	if s == nil {
		return nil, &types.ResourceNotFoundException{Message: aws.String("no shard " + *in.ShardId)}
	}
	pos := 0
	switch in.ShardIteratorType {
	case types.ShardIteratorTypeLatest:
		pos = len(s.records)
	case types.ShardIteratorTypeAfterSequenceNumber, types.ShardIteratorTypeAtSequenceNumber:
		pos = slices.IndexFunc(s.records, func(r types.Record) bool { return *r.Dynamodb.SequenceNumber == *in.SequenceNumber })
		if in.ShardIteratorType == types.ShardIteratorTypeAfterSequenceNumber {
			pos++
		}
	}
	return &dynamodbstreams.GetShardIteratorOutput{ShardIterator: aws.String(fmt.Sprintf("%s|%s|%d", f.arn, s.id, pos))}, nil
}

func (f *fakeStream) GetRecords(_ context.Context, in *dynamodbstreams.GetRecordsInput, _ ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	parts := strings.Split(*in.ShardIterator, "|")
	s := f.find(parts[1])
	pos, _ := strconv.Atoi(parts[2])
	end := min(len(s.records), pos+int(aws.ToInt32(in.Limit)))
	out := &dynamodbstreams.GetRecordsOutput{Records: slices.Clone(s.records[pos:end])}
	if !s.closed || end < len(s.records) {
		out.NextShardIterator = aws.String(fmt.Sprintf("%s|%s|%d", f.arn, s.id, end))
	}
	return out, nil
}

// recorder is a stream handler that records each batch's sequence numbers, and fails as
// the test says.
type recorder struct {
	mu      sync.Mutex
	batches [][]string
	events  []events.DynamoDBEvent
	// fail decides each invocation: an error fails it, sequence numbers are reported as failed.
	fail func(n int, seqs []string) ([]string, error)
}

func (r *recorder) handle(_ context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var seqs []string
	for _, rec := range ev.Records {
		seqs = append(seqs, rec.Change.SequenceNumber)
	}
	r.batches = append(r.batches, seqs)
	r.events = append(r.events, ev)
	if r.fail != nil {
		failed, err := r.fail(len(r.batches), seqs)
		if err != nil {
			return events.DynamoDBEventResponse{}, err
		}
		var resp events.DynamoDBEventResponse
		for _, f := range failed {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: f})
		}
		return resp, nil
	}
	return events.DynamoDBEventResponse{}, nil
}

func (r *recorder) snapshot() [][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.batches)
}

// delivered is every sequence number in the order of the batches, without the repeats a
// retry makes of what was already delivered.
func (r *recorder) delivered() []string {
	var out []string
	seen := map[string]bool{}
	for _, b := range r.snapshot() {
		for _, s := range b {
			if !seen[s] {
				seen[s] = true
				out = append(out, s)
			}
		}
	}
	return out
}

func fastSource(f *fakeStream, fn lambdarun.Invoker) *lambdarun.StreamSource {
	return &lambdarun.StreamSource{Streams: f, StreamArn: f.arn, Function: fn, BatchSize: 100,
		MaximumRetryAttempts: lambdarun.NoRetryLimit, PollInterval: 5 * time.Millisecond,
		DiscoverInterval: 10 * time.Millisecond, RetryBackoff: 2 * time.Millisecond, MaxRetryBackoff: 20 * time.Millisecond}
}

func run(t *testing.T, s *lambdarun.StreamSource) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
}

func drained(t *testing.T, s *lambdarun.StreamSource) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, s.Drained(ctx))
}

// A child shard is read only after its parent has been read to its end and delivered, across
// generations and DescribeStream pages; shards of different lineages are read side by side,
// each in order.
func TestStreamSourceLineage(t *testing.T) {
	t.Parallel()
	f := newFakeStream()
	f.shard("A", "")
	a := f.put("A", 5)
	f.close("A")
	f.shard("B", "A")
	b := f.put("B", 3)
	f.close("B")
	f.shard("C", "B")
	c := f.put("C", 2)
	f.shard("D", "")
	d := f.put("D", 3)
	f.shard("E", "gone") // its parent has left the stream (trimmed): read at once
	e := f.put("E", 1)
	rec := &recorder{}
	s := fastSource(f, lambdarun.NewFunction("lineage", rec.handle, time.Second))
	s.BatchSize = 2
	run(t, s)
	drained(t, s)
	got := rec.delivered()
	require.ElementsMatch(t, slices.Concat(a, b, c, d, e), got, "every record once")
	pos := func(seq string) int { return slices.Index(got, seq) }
	for _, lineage := range [][]string{slices.Concat(a, b, c), d} {
		for i := 1; i < len(lineage); i++ {
			require.Less(t, pos(lineage[i-1]), pos(lineage[i]), "in order along a lineage: %v", got)
		}
	}
	for _, batch := range rec.snapshot() {
		require.LessOrEqual(t, len(batch), 2)
		require.Equal(t, 1, len(slices.CompactFunc(slices.Clone(batch), func(x, y string) bool { return shardOf(f, x) == shardOf(f, y) })),
			"a batch holds one shard's records: %v", batch)
	}

	// C is open: what is written to it later is delivered too, and a child of it once C closes.
	c2 := f.put("C", 2)
	f.close("C")
	f.shard("F", "C")
	f2 := f.put("F", 1)
	drained(t, s)
	got = rec.delivered()
	require.Equal(t, slices.Concat(c2, f2), got[len(got)-3:])
	st := s.Stats()
	require.Equal(t, 6, st.Shards)
	require.Equal(t, 3, st.Done, "A, B and C are closed and read; D, E and F are open")
	require.Zero(t, st.Pending)
	require.EqualValues(t, 17, st.Read)
	require.EqualValues(t, 17, st.Delivered)
}

func shardOf(f *fakeStream, seq string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.shards {
		for _, r := range s.records {
			if *r.Dynamodb.SequenceNumber == seq {
				return s.id
			}
		}
	}
	return ""
}

// LATEST skips what the stream holds when the source starts (closed shards entirely), and
// reads the shards that open later from their start.
func TestStreamSourceLatest(t *testing.T) {
	t.Parallel()
	f := newFakeStream()
	f.shard("A", "")
	f.put("A", 3)
	f.close("A")
	f.shard("B", "A")
	f.put("B", 2)
	rec := &recorder{}
	s := fastSource(f, lambdarun.NewFunction("latest", rec.handle, time.Second))
	s.StartingPosition = "LATEST"
	run(t, s)
	drained(t, s)
	require.Empty(t, rec.snapshot())
	b := f.put("B", 2)
	drained(t, s)
	require.Equal(t, b, rec.delivered())
	f.close("B")
	f.shard("C", "B")
	c := f.put("C", 2)
	drained(t, s)
	require.Equal(t, slices.Concat(b, c), rec.delivered())
}

// With BisectBatchOnFunctionError a failing batch is split until the failing record is alone;
// past MaximumRetryAttempts it is discarded and the rest delivered, in order.
func TestStreamSourceBisects(t *testing.T) {
	t.Parallel()
	f := newFakeStream()
	f.shard("A", "")
	seqs := f.put("A", 8)
	poison := seqs[4]
	rec := &recorder{fail: func(_ int, batch []string) ([]string, error) {
		if slices.Contains(batch, poison) {
			return nil, errors.New("poison")
		}
		return nil, nil
	}}
	s := fastSource(f, lambdarun.NewFunction("bisect", rec.handle, time.Second))
	s.BisectBatchOnFunctionError, s.MaximumRetryAttempts = true, 2
	run(t, s)
	drained(t, s)
	require.Equal(t, [][]string{seqs, seqs[:4], seqs[4:], seqs[4:6], seqs[4:5], seqs[5:6], seqs[6:]}, rec.snapshot())
	st := s.Stats()
	require.EqualValues(t, 1, st.Discarded)
	require.EqualValues(t, 7, st.Delivered)
	require.EqualValues(t, 4, st.FunctionErrors)
	require.Contains(t, st.LastError, "poison")
}

// By default (MaximumRetryAttempts -1) a failing record is retried until it succeeds, and
// nothing after it is delivered before it.
func TestStreamSourceRetriesUntilSuccess(t *testing.T) {
	t.Parallel()
	f := newFakeStream()
	f.shard("A", "")
	seqs := f.put("A", 4)
	failures := 0
	rec := &recorder{fail: func(_ int, batch []string) ([]string, error) {
		if batch[0] == seqs[1] && failures < 5 {
			failures++
			return nil, errors.New("not yet")
		}
		return nil, nil
	}}
	s := fastSource(f, lambdarun.NewFunction("retry", rec.handle, time.Second))
	s.BatchSize = 1
	run(t, s)
	drained(t, s)
	want := [][]string{{seqs[0]}}
	for range 6 {
		want = append(want, []string{seqs[1]})
	}
	want = append(want, []string{seqs[2]}, []string{seqs[3]})
	require.Equal(t, want, rec.snapshot())
	require.Zero(t, s.Stats().Discarded)
}

// ReportBatchItemFailures: the next batch starts at the first record reported; a report
// naming no record of the batch fails it whole.
func TestStreamSourceReportBatchItemFailures(t *testing.T) {
	t.Parallel()
	f := newFakeStream()
	f.shard("A", "")
	seqs := f.put("A", 6)
	rec := &recorder{fail: func(n int, batch []string) ([]string, error) {
		switch n {
		case 1:
			return []string{seqs[4], seqs[2]}, nil // the first of them is where the next batch starts
		case 2:
			return []string{"not-a-sequence-number"}, nil
		}
		return nil, nil
	}}
	s := fastSource(f, lambdarun.NewFunction("rbif", rec.handle, time.Second))
	s.ReportBatchItemFailures = true
	run(t, s)
	drained(t, s)
	require.Equal(t, [][]string{seqs, seqs[2:], seqs[2:]}, rec.snapshot())
	st := s.Stats()
	require.EqualValues(t, 1, st.PartialFailures)
	require.EqualValues(t, 1, st.FunctionErrors, "the report naming no record of the batch failed it whole")
	require.EqualValues(t, 6, st.Delivered)
}

// Without ReportBatchItemFailures the response is not read: the batch succeeded.
func TestStreamSourceIgnoresReportsUnlessAsked(t *testing.T) {
	t.Parallel()
	f := newFakeStream()
	f.shard("A", "")
	seqs := f.put("A", 3)
	rec := &recorder{fail: func(int, []string) ([]string, error) { return []string{seqs[0]}, nil }}
	s := fastSource(f, lambdarun.NewFunction("noreport", rec.handle, time.Second))
	run(t, s)
	drained(t, s)
	require.Equal(t, [][]string{seqs}, rec.snapshot())
}

// The filter drops records before batching; dropped records count as processed.
func TestStreamSourceFilters(t *testing.T) {
	t.Parallel()
	f := newFakeStream()
	f.shard("A", "")
	seqs := f.put("A", 6)
	crit, err := eventfilter.Parse([]string{`{"dynamodb":{"NewImage":{"n":{"N":["2","5"]}}}}`})
	require.NoError(t, err)
	rec := &recorder{}
	s := fastSource(f, lambdarun.NewFunction("filter", rec.handle, time.Second))
	s.Filter = crit
	run(t, s)
	drained(t, s)
	require.Equal(t, [][]string{{seqs[1], seqs[4]}}, rec.snapshot())
	st := s.Stats()
	require.EqualValues(t, 4, st.Filtered)
	require.EqualValues(t, 2, st.Delivered)
}

// The batching window gathers records; a full batch goes at once.
func TestStreamSourceBatchingWindow(t *testing.T) {
	t.Parallel()
	f := newFakeStream()
	f.shard("A", "")
	rec := &recorder{}
	s := fastSource(f, lambdarun.NewFunction("window", rec.handle, time.Second))
	s.BatchSize, s.BatchingWindow = 3, 300*time.Millisecond
	run(t, s)
	drained(t, s)
	first := f.put("A", 1)
	time.Sleep(50 * time.Millisecond)
	second := f.put("A", 1)
	began := time.Now()
	drained(t, s)
	require.Equal(t, [][]string{slices.Concat(first, second)}, rec.snapshot(), "one batch: the window gathered both")
	require.Greater(t, time.Since(began), 150*time.Millisecond, "it waited for the window")
	full := f.put("A", 3)
	began = time.Now()
	drained(t, s)
	require.Less(t, time.Since(began), 200*time.Millisecond, "a full batch does not wait")
	require.Equal(t, full, rec.snapshot()[1])
}

// Drained waits for a batch in flight, and reports what it waits for when it gives up.
func TestStreamSourceDrainedWaits(t *testing.T) {
	t.Parallel()
	f := newFakeStream()
	f.shard("A", "")
	release := make(chan struct{})
	var calls sync.WaitGroup
	calls.Add(1)
	var once sync.Once
	fn := lambdarun.NewFunction("slow", func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		once.Do(calls.Done)
		<-release
		return events.DynamoDBEventResponse{}, nil
	}, 10*time.Second)
	s := fastSource(f, fn)
	run(t, s)
	var released sync.Once
	t.Cleanup(func() { released.Do(func() { close(release) }) }) // before run's cleanup waits for the invocation
	f.put("A", 2)
	calls.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err := s.Drained(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	// The batch went before the call: the shard reads again (and finds the end) once it is
	// delivered.
	require.ErrorContains(t, err, "shard A has not read to the end of the stream yet")
	released.Do(func() { close(release) })
	drained(t, s)
}

// The event is Lambda's: the record's fields, the stream's ARN and region.
func TestStreamSourceEventShape(t *testing.T) {
	t.Parallel()
	f := newFakeStream()
	f.shard("A", "")
	seqs := f.put("A", 1)
	var payload []byte
	fn := invokerFunc(func(_ context.Context, _ string, p []byte) ([]byte, error) {
		payload = p
		return []byte(`{}`), nil
	})
	s := fastSource(f, fn)
	run(t, s)
	drained(t, s)
	var ev map[string]any
	require.NoError(t, json.Unmarshal(payload, &ev))
	recs := ev["Records"].([]any)
	require.Len(t, recs, 1)
	r := recs[0].(map[string]any)
	require.ElementsMatch(t, []string{"eventID", "eventName", "eventVersion", "eventSource", "awsRegion", "dynamodb", "eventSourceARN"}, keys(r))
	require.Equal(t, "us-east-1", r["awsRegion"], "the stream's region, not the engine's")
	require.Equal(t, f.arn, r["eventSourceARN"])
	ddb := r["dynamodb"].(map[string]any)
	require.ElementsMatch(t, []string{"ApproximateCreationDateTime", "Keys", "NewImage", "SequenceNumber", "SizeBytes", "StreamViewType"}, keys(ddb))
	require.Equal(t, seqs[0], ddb["SequenceNumber"])
	require.Equal(t, map[string]any{"pk": map[string]any{"S": "A"}}, ddb["Keys"])
}

type invokerFunc func(ctx context.Context, id string, payload []byte) ([]byte, error)

func (f invokerFunc) Invoke(ctx context.Context, id string, payload []byte) ([]byte, error) {
	return f(ctx, id, payload)
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// With Positions, a restarted source reads on where the last one stopped: a record is not
// delivered again once done (filtered ones included), a shard done is not read again, and a
// record that was failing when the source stopped is the first one delivered after.
func TestStreamSourcePositionsSurviveARestart(t *testing.T) {
	t.Parallel()
	f := newFakeStream()
	f.shard("A", "")
	a := f.put("A", 3)
	f.close("A")
	f.shard("B", "A")
	b := f.put("B", 4)
	path := filepath.Join(t.TempDir(), "positions.json")
	crit, err := eventfilter.Parse([]string{`{"dynamodb":{"NewImage":{"n":{"N":[{"exists":true}]}}}}`})
	require.NoError(t, err)
	start := func(fail func(int, []string) ([]string, error)) (*recorder, context.CancelFunc, chan struct{}) {
		pos, err := lambdarun.OpenPositions(path)
		require.NoError(t, err)
		rec := &recorder{fail: fail}
		s := fastSource(f, lambdarun.NewFunction("positions", rec.handle, time.Second))
		s.Positions, s.Filter, s.BatchSize = pos, crit, 2
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			s.Run(ctx)
		}()
		t.Cleanup(func() { cancel(); <-done })
		drainedOr := func() {
			dctx, dcancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
			defer dcancel()
			_ = s.Drained(dctx)
		}
		drainedOr()
		return rec, cancel, done
	}
	// First run: B's third record keeps failing.
	rec, stop, done := start(func(_ int, batch []string) ([]string, error) {
		if slices.Contains(batch, b[2]) {
			return nil, errors.New("failing")
		}
		return nil, nil
	})
	stop()
	<-done
	got := rec.snapshot()
	require.GreaterOrEqual(t, len(got), 4, "%v", got)
	require.Equal(t, [][]string{a[:2], a[2:], b[:2]}, got[:3])
	for _, batch := range got[3:] {
		require.Equal(t, b[2:], batch, "the batch still failing when the source stopped")
	}
	// Second run: from the failing record on, nothing before it again; A is done.
	more := f.put("B", 1)
	rec, stop, done = start(nil)
	require.Equal(t, slices.Concat(b[2:], more), rec.delivered())
	stop()
	<-done
	// Third run: nothing new, nothing delivered.
	rec, stop, done = start(nil)
	require.Empty(t, rec.snapshot())
	stop()
	<-done
	kept, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Contains(t, string(kept), `"done": true`, "A is kept as done:\n%s", kept)
}
