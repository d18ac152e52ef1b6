package lambdarun

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/sundialhq/sundial/infra/eventfilter"
)

// StreamsAPI is what a stream event source uses: the DynamoDB Streams client, signed with
// the function's role as Lambda's pollers are.
type StreamsAPI interface {
	DescribeStream(ctx context.Context, in *dynamodbstreams.DescribeStreamInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.DescribeStreamOutput, error)
	GetShardIterator(ctx context.Context, in *dynamodbstreams.GetShardIteratorInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error)
	GetRecords(ctx context.Context, in *dynamodbstreams.GetRecordsInput, optFns ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error)
}

var _ StreamsAPI = (*dynamodbstreams.Client)(nil)

// DestinationAPI is what an on-failure destination needs: SQS SendMessage.
type DestinationAPI interface {
	SendMessage(ctx context.Context, in *sqs.SendMessageInput, optFns ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
}

// DestinationRecord is what Lambda sends a stream event source mapping's on-failure
// destination for a batch it gave up: where the records are, not the records.
type DestinationRecord struct {
	RequestContext struct {
		RequestID              string `json:"requestId"`
		FunctionArn            string `json:"functionArn"`
		Condition              string `json:"condition"` // RetryAttemptsExhausted or RecordAgeExceeded
		ApproximateInvokeCount int    `json:"approximateInvokeCount"`
	} `json:"requestContext"`
	ResponseContext *struct {
		StatusCode      int    `json:"statusCode"`
		ExecutedVersion string `json:"executedVersion"`
		FunctionError   string `json:"functionError,omitempty"`
	} `json:"responseContext,omitempty"`
	Version   string          `json:"version"`
	Timestamp string          `json:"timestamp"`
	BatchInfo StreamBatchInfo `json:"DDBStreamBatchInfo"`
}

// StreamBatchInfo locates the records given up in the stream.
type StreamBatchInfo struct {
	ShardID                         string `json:"shardId"`
	StartSequenceNumber             string `json:"startSequenceNumber"`
	EndSequenceNumber               string `json:"endSequenceNumber"`
	ApproximateArrivalOfFirstRecord string `json:"approximateArrivalOfFirstRecord"`
	ApproximateArrivalOfLastRecord  string `json:"approximateArrivalOfLastRecord"`
	BatchSize                       int    `json:"batchSize"`
	StreamArn                       string `json:"streamArn"`
}

// The conditions of a DestinationRecord.
const (
	ConditionRetriesExhausted = "RetryAttemptsExhausted"
	ConditionRecordAge        = "RecordAgeExceeded"
)

// StreamSource emulates Lambda's event source mapping for a DynamoDB stream: it lists the
// stream's shards (DescribeStream, every page) and reads each with its own poller, a child
// shard only once its parent has been read to its end and every record of it delivered. A
// shard's records are delivered in order, one batch at a time: the records that pass the
// mapping's filter, up to BatchSize, as soon as BatchSize are there or BatchingWindow has
// passed since the first of them was read (and within Lambda's 6 MB payload), as an
// events.DynamoDBEvent exactly as Lambda sends it.
//
// A failed batch is retried, after a backoff, until it succeeds, MaximumRetryAttempts is
// exhausted or its first record is older than MaximumRecordAge (-1 and 0, Lambda's
// defaults, retry until the record leaves the stream, so no record is ever skipped); what
// is given up is reported to the OnFailure destination, as Lambda does, by a metadata
// record only (DestinationRecord: the shard and the sequence numbers of the first and last
// records given up, not the records, which stay in the stream for 24 hours from their
// write): with ReportBatchItemFailures, from the first failed sequence
// number the response lists (an answer naming no record of the batch fails it whole); on a
// function error, the whole batch — split in two halves, each retried on its own, when
// BisectBatchOnFunctionError is set.
//
// Drained waits until every record written before the call has been delivered; Stats
// reports how far behind the source is.
type StreamSource struct {
	Streams   StreamsAPI
	StreamArn string
	Function  Invoker
	// StartingPosition is TRIM_HORIZON (the default) or LATEST: where the shards open when
	// the source starts are read from. Shards that open later are read from their start.
	StartingPosition           string
	BatchSize                  int // default 100
	BatchingWindow             time.Duration
	BisectBatchOnFunctionError bool
	// MaximumRetryAttempts: retries of a failed batch before its records are discarded (0:
	// none). NoRetryLimit (-1, Lambda's default, which provision.StreamSource carries when
	// the template says nothing) never discards.
	MaximumRetryAttempts int
	// MaximumRecordAge: a record older than this (by its ApproximateCreationDateTime) is
	// given up before its next invocation, retried or not. 0: no limit (Lambda's -1).
	MaximumRecordAge time.Duration
	// OnFailure, when set, receives a DestinationRecord (SQS SendMessage to OnFailureURL,
	// with the function's role, as Lambda sends it) for each batch given up; the records
	// count as done only once it is sent. FunctionArn names the function in it.
	OnFailure               DestinationAPI
	OnFailureURL            string
	FunctionArn             string
	ReportBatchItemFailures bool
	// Filter is the mapping's FilterCriteria: records that do not pass are dropped (and
	// count as processed). Nil passes every record.
	Filter *eventfilter.Criteria
	Log    *slog.Logger
	// Positions, when set, keeps the source's position across restarts, as Lambda keeps an
	// event source mapping's: a shard is read on after its last record done, a shard done is
	// not read again. Nil starts from StartingPosition each time.
	Positions Positions

	// PollInterval is how long a shard that had nothing new waits before reading again
	// (Lambda reads each shard four times a second; default 250ms). DiscoverInterval is how
	// often the shards are listed (default 1s). RetryBackoff is the first pause before
	// retrying a failed batch, doubled on each failure up to MaxRetryBackoff (defaults 500ms
	// and 30s).
	PollInterval, DiscoverInterval, RetryBackoff, MaxRetryBackoff time.Duration

	mu       sync.Mutex
	shards   map[string]*shardState
	waiters  []*drainWaiter
	wake     chan struct{}
	stopped  bool
	stats    StreamStats
	lastErr  string
	initOnce sync.Once
}

// NoRetryLimit is MaximumRetryAttempts's value for retrying until the record expires.
const NoRetryLimit = -1

// maxPayload is Lambda's limit on an invocation's payload (6 MB).
const maxPayload = 6 * 1024 * 1024

// getRecordsLimit is the most records one GetRecords returns.
const getRecordsLimit = 1000

// StreamStats is how far a stream event source is.
type StreamStats struct {
	StreamArn string
	// Shards are the shards listed; Done those read to their end and delivered.
	Shards, Done int
	// Read counts the records read, Filtered those the filter dropped, Delivered those in
	// batches the function took, Discarded those given up (MaximumRetryAttempts,
	// MaximumRecordAge); SentToDestination the DestinationRecords sent for them.
	Read, Filtered, Delivered, Discarded, SentToDestination int64
	// Pending are records read and passed but not yet delivered (the batch in flight too).
	Pending int
	// Invocations, FunctionErrors (the whole batch failed) and PartialFailures (the
	// response listed failed records).
	Invocations, FunctionErrors, PartialFailures int64
	// IteratorAge is Lambda's metric: at the last invocation, how long ago the batch's last
	// record was written (ApproximateCreationDateTime, which DynamoDB Local rounds down to
	// the minute: locally it reads up to a minute old).
	IteratorAge time.Duration
	// LastError is the last failure (function error, refused response, read error).
	LastError string
}

type shardState struct {
	id, parent string
	resume     string // read after this sequence number (a kept position)
	closed     bool   // DescribeStream gives the shard an ending sequence number
	started    bool
	done       bool // read to its end and every record delivered (or never to be read)
	latest     bool // start at LATEST rather than TRIM_HORIZON
	lastRead   string
	head       string // sequence number of the first pending record; "" when none is
	pending    int
	exhausted  bool // read to its end (NextShardIterator null)
}

// drainWaiter is one Drained call: shards are those listed by a DescribeStream that began
// after since, and targets each shard's last record read by its first read that began
// after since and came back short of records (it had read everything written before).
type drainWaiter struct {
	since   time.Time
	shards  map[string]bool
	targets map[string]string
}

// record is a stream record as Lambda delivers it, encoded once.
type record struct {
	seq     string
	prev    string // the record read before it (delivered or not): done up to there when it is first
	json    []byte
	created time.Time
}

func (s *StreamSource) init() {
	s.initOnce.Do(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.shards = map[string]*shardState{}
		s.wake = make(chan struct{})
		s.stats.StreamArn = s.StreamArn
		if s.Log == nil {
			s.Log = slog.New(slog.DiscardHandler)
		}
		if s.BatchSize <= 0 {
			s.BatchSize = 100
		}
		if s.StartingPosition == "" {
			s.StartingPosition = string(types.ShardIteratorTypeTrimHorizon)
		}
		s.PollInterval = cmp0(s.PollInterval, 250*time.Millisecond)
		s.DiscoverInterval = cmp0(s.DiscoverInterval, time.Second)
		s.RetryBackoff = cmp0(s.RetryBackoff, 500*time.Millisecond)
		s.MaxRetryBackoff = cmp0(s.MaxRetryBackoff, 30*time.Second)
	})
}

// Run lists and reads the stream until ctx is cancelled, then waits for the invocations in
// flight to finish.
func (s *StreamSource) Run(ctx context.Context) {
	s.init()
	var wg sync.WaitGroup
	defer func() {
		wg.Wait()
		s.mu.Lock()
		s.stopped = true
		s.mu.Unlock()
	}()
	for first := true; ctx.Err() == nil; {
		wake := s.wakeChan()
		began := time.Now()
		shards, err := s.describe(ctx)
		if err != nil {
			if ctx.Err() == nil {
				s.fail("describe stream", err)
			}
			sleep(ctx, s.DiscoverInterval, wake)
			continue
		}
		s.mu.Lock()
		listed := map[string]bool{}
		for _, sh := range shards {
			id := aws.ToString(sh.ShardId)
			listed[id] = true
			closed := sh.SequenceNumberRange != nil && sh.SequenceNumberRange.EndingSequenceNumber != nil
			st := s.shards[id]
			if st == nil {
				st = &shardState{id: id, parent: aws.ToString(sh.ParentShardId)}
				s.shards[id] = st
				if s.Positions != nil {
					st.resume, st.done = s.Positions.Position(s.StreamArn, id)
					st.lastRead = st.resume
				}
				if st.resume == "" && !st.done && first && s.StartingPosition == string(types.ShardIteratorTypeLatest) {
					// LATEST: what the stream holds when the mapping starts is not read.
					st.latest = true
					st.done = closed
				}
			}
			st.closed = closed
		}
		for _, w := range s.waiters {
			if w.shards == nil && began.After(w.since) {
				w.shards = listed
			}
		}
		for _, id := range sortedKeys(s.shards) {
			st := s.shards[id]
			if st.started || st.done {
				continue
			}
			if p := s.shards[st.parent]; p != nil && !p.done {
				continue // the parent's records come first
			}
			st.started = true
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.readShard(ctx, st)
			}()
		}
		s.updateCounts()
		s.mu.Unlock()
		first = false
		sleep(ctx, s.DiscoverInterval, wake)
	}
}

// describe lists every shard of the stream, page by page.
func (s *StreamSource) describe(ctx context.Context) ([]types.Shard, error) {
	var out []types.Shard
	var start *string
	for {
		d, err := s.Streams.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(s.StreamArn), ExclusiveStartShardId: start})
		if err != nil {
			return nil, err
		}
		if d.StreamDescription == nil {
			return nil, errors.New("DescribeStream answered no description")
		}
		out = append(out, d.StreamDescription.Shards...)
		start = d.StreamDescription.LastEvaluatedShardId
		if start == nil {
			return out, nil
		}
	}
}

// shardReader is one shard's poller: what it read and has not delivered yet, in order.
type shardReader struct {
	s        *StreamSource
	st       *shardState
	iter     *string
	pending  []record
	firstAt  time.Time // when the first pending record was read (the batching window)
	lastRead string    // the last record read
	saved    string    // the position last kept (Positions)
	plan     []int     // sizes of the next batches after a bisection
	attempts int       // failed invocations at the current first pending record
	fnError  bool      // the last failure was a function error (not a partial failure)
	n        int
}

func (s *StreamSource) readShard(ctx context.Context, st *shardState) {
	r := &shardReader{s: s, st: st, lastRead: st.resume, saved: st.resume}
	typ, after := types.ShardIteratorTypeTrimHorizon, ""
	switch {
	case st.resume != "":
		typ, after = types.ShardIteratorTypeAfterSequenceNumber, st.resume
	case st.latest:
		typ = types.ShardIteratorTypeLatest
	}
	if !r.open(ctx, typ, after) {
		return
	}
	nextRead := time.Time{}
	for ctx.Err() == nil {
		wake := s.wakeChan()
		now := time.Now()
		if r.iter != nil && len(r.pending) < s.BatchSize && !now.Before(nextRead) {
			nextRead = r.read(ctx)
			continue
		}
		if len(r.pending) > 0 && r.ready(now) {
			r.deliver(ctx)
			continue
		}
		if r.iter == nil && len(r.pending) == 0 {
			s.keep(st.id, r.lastRead, true)
			s.mu.Lock()
			st.done = true
			s.updateCounts()
			s.mu.Unlock()
			s.nudge() // children may start
			return
		}
		wait := time.Until(nextRead)
		if r.iter == nil || len(r.pending) >= s.BatchSize {
			wait = time.Hour // nothing to read: the window (below) or a nudge
		}
		if len(r.pending) > 0 {
			wait = min(wait, time.Until(r.firstAt.Add(s.BatchingWindow)))
		}
		if sleep(ctx, wait, wake) {
			nextRead = time.Time{} // woken (Drained): read now rather than at the next poll
		}
	}
}

// open gets an iterator of the given type (after seq for AFTER_SEQUENCE_NUMBER), retrying
// until it has one or ctx ends.
func (r *shardReader) open(ctx context.Context, typ types.ShardIteratorType, seq string) bool {
	s := r.s
	for ctx.Err() == nil {
		in := &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(s.StreamArn), ShardId: aws.String(r.st.id), ShardIteratorType: typ}
		if seq != "" {
			in.SequenceNumber = aws.String(seq)
		}
		out, err := s.Streams.GetShardIterator(ctx, in)
		if err == nil {
			r.iter = out.ShardIterator
			return true
		}
		if _, trimmed := errors.AsType[*types.TrimmedDataAccessException](err); trimmed && seq != "" {
			s.Log.Error("stream event source: records after the last one read have left the stream (older than 24 hours); reading on from the oldest kept",
				"stream", s.StreamArn, "shard", r.st.id, "after", seq)
			typ, seq = types.ShardIteratorTypeTrimHorizon, ""
			continue
		}
		if ctx.Err() == nil {
			s.fail("get shard iterator", err)
		}
		sleep(ctx, s.PollInterval*4, nil)
	}
	return false
}

// read reads once from the shard's iterator and returns when to read next.
func (r *shardReader) read(ctx context.Context) time.Time {
	s, st := r.s, r.st
	began := time.Now()
	out, err := s.Streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: r.iter, Limit: aws.Int32(getRecordsLimit)})
	if err != nil {
		if ctx.Err() != nil {
			return time.Time{}
		}
		_, expired := errors.AsType[*types.ExpiredIteratorException](err)
		_, trimmed := errors.AsType[*types.TrimmedDataAccessException](err)
		if expired || trimmed {
			// Iterators last 15 minutes (a long retry outlives one): carry on from the last
			// record read.
			s.mu.Lock()
			last := st.lastRead
			s.mu.Unlock()
			typ, seq := types.ShardIteratorTypeAfterSequenceNumber, last
			if last == "" {
				typ = types.ShardIteratorTypeTrimHorizon
				if st.latest {
					typ = types.ShardIteratorTypeLatest
				}
			}
			r.open(ctx, typ, seq)
			return time.Time{}
		}
		s.fail("get records", err)
		return time.Now().Add(s.PollInterval * 4)
	}
	var passed []record
	var filtered int64
	prev := r.lastRead
	for _, rec := range out.Records {
		before := prev
		prev = aws.ToString(rec.Dynamodb.SequenceNumber)
		er := s.eventRecord(rec)
		b, err := json.Marshal(er)
		if err != nil {
			s.fail("encode record", err) // cannot happen: plain strings and numbers
			return time.Now().Add(s.PollInterval)
		}
		ok, err := s.Filter.MatchJSON(b)
		if err != nil {
			s.fail("filter record", err)
			return time.Now().Add(s.PollInterval)
		}
		if !ok {
			filtered++
			continue
		}
		passed = append(passed, record{seq: er.Change.SequenceNumber, prev: before, json: b, created: er.Change.ApproximateCreationDateTime.Time})
	}
	if n := len(out.Records); n > 0 {
		r.lastRead = aws.ToString(out.Records[n-1].Dynamodb.SequenceNumber)
	}
	if len(r.pending) == 0 && len(passed) > 0 {
		r.firstAt = time.Now()
	}
	r.pending = append(r.pending, passed...)
	r.iter = out.NextShardIterator
	short := len(out.Records) < getRecordsLimit
	s.mu.Lock()
	if n := len(out.Records); n > 0 {
		st.lastRead = aws.ToString(out.Records[n-1].Dynamodb.SequenceNumber)
	}
	s.stats.Read += int64(len(out.Records))
	s.stats.Filtered += filtered
	st.exhausted = r.iter == nil
	r.publish()
	if short {
		// DynamoDB Local answers every record it holds, up to the limit: a short answer read
		// everything written before the read began.
		for _, w := range s.waiters {
			if _, ok := w.targets[st.id]; !ok && began.After(w.since) {
				w.targets[st.id] = st.lastRead
			}
		}
	}
	s.mu.Unlock()
	r.keep()
	if !short {
		return time.Time{} // more to read at once
	}
	return time.Now().Add(s.PollInterval)
}

// publish shares the reader's position (s.mu held).
func (r *shardReader) publish() {
	r.st.head, r.st.pending = "", len(r.pending)
	if len(r.pending) > 0 {
		r.st.head = r.pending[0].seq
	}
	r.s.updateCounts()
}

// ready: a batch goes when it is full, when the window has passed, when the shard has
// nothing more to give, or when it is a retry.
func (r *shardReader) ready(now time.Time) bool {
	s := r.s
	return len(r.pending) >= s.BatchSize || len(r.plan) > 0 || r.attempts > 0 || r.iter == nil ||
		!now.Before(r.firstAt.Add(s.BatchingWindow))
}

// batch is the next batch's size: the next bisected part, or up to BatchSize records within
// the payload limit.
func (r *shardReader) batch() int {
	if len(r.plan) > 0 {
		return min(r.plan[0], len(r.pending))
	}
	n, size := 0, len(`{"Records":[]}`)
	for _, rec := range r.pending {
		if n == r.s.BatchSize || (n > 0 && size+len(rec.json)+1 > maxPayload) {
			break
		}
		size += len(rec.json) + 1
		n++
	}
	return n
}

// deliver invokes the function with the next batch and acts on the outcome.
func (r *shardReader) deliver(ctx context.Context) {
	s := r.s
	if s.MaximumRecordAge > 0 {
		old := 0
		for old < len(r.pending) && time.Since(r.pending[old].created) > s.MaximumRecordAge {
			old++
		}
		if old > 0 {
			if r.giveUp(ctx, old, ConditionRecordAge) {
				r.attempts, r.plan = 0, nil
			}
			return
		}
	}
	n := r.batch()
	recs := r.pending[:n]
	var payload strings.Builder
	payload.WriteString(`{"Records":[`)
	for i, rec := range recs {
		if i > 0 {
			payload.WriteByte(',')
		}
		payload.Write(rec.json)
	}
	payload.WriteString(`]}`)
	r.n++
	id := fmt.Sprintf("%s-%s-%d", functionName(s.Function), shortShard(r.st.id), r.n)
	s.mu.Lock()
	s.stats.Invocations++
	s.stats.IteratorAge = time.Since(recs[n-1].created)
	s.mu.Unlock()
	// An invocation in progress finishes even if we are asked to stop, as on Lambda.
	out, err := s.Function.Invoke(context.WithoutCancel(ctx), id, []byte(payload.String()))
	if err != nil && (ctx.Err() != nil || errors.Is(err, ErrStopped)) {
		return // stopping: the batch is not done, and is not retried here
	}
	failedAt := -1
	if err == nil && s.ReportBatchItemFailures {
		failedAt, err = firstFailure(out, recs)
		if err != nil {
			err = fmt.Errorf("%s: %w", id, err)
		}
	}
	switch {
	case err == nil && failedAt < 0:
		r.fnError = false
		r.done(n, false)
		r.attempts = 0
		if len(r.plan) > 0 {
			r.plan = r.plan[1:]
		}
	case err == nil: // the response listed failed records: retry from the first
		r.fnError = false
		s.mu.Lock()
		s.stats.PartialFailures++
		s.lastErr = fmt.Sprintf("%s: the function reported record %s (and %d after it) as failed", id, recs[failedAt].seq, n-failedAt-1)
		s.stats.LastError = s.lastErr
		s.mu.Unlock()
		if failedAt > 0 {
			r.done(failedAt, false)
			r.attempts = 0
			if len(r.plan) > 0 {
				r.plan[0] -= failedAt
			}
		}
		r.failed(ctx, n-failedAt, false)
	default:
		s.mu.Lock()
		s.stats.FunctionErrors++
		s.mu.Unlock()
		s.fail("invocation "+id, err)
		r.fnError = true
		r.failed(ctx, n, s.BisectBatchOnFunctionError)
	}
}

// done removes the first n pending records: delivered, or discarded.
func (r *shardReader) done(n int, discarded bool) {
	s := r.s
	r.pending = r.pending[n:]
	if len(r.pending) > 0 {
		r.firstAt = time.Now()
	}
	s.mu.Lock()
	if discarded {
		s.stats.Discarded += int64(n)
	} else {
		s.stats.Delivered += int64(n)
	}
	r.publish()
	s.mu.Unlock()
	r.keep()
}

// keep records the shard's position when it moved: everything up to the record before the
// first pending one is done (delivered, filtered out or discarded).
func (r *shardReader) keep() {
	at := r.lastRead
	if len(r.pending) > 0 {
		at = r.pending[0].prev
	}
	if at == r.saved || at == "" {
		return
	}
	r.saved = at
	r.s.keep(r.st.id, at, false)
}

// keep stores a shard's position (Positions).
func (s *StreamSource) keep(shard, seq string, done bool) {
	if s.Positions == nil {
		return
	}
	if err := s.Positions.SetPosition(s.StreamArn, shard, seq, done); err != nil {
		s.fail("keep the stream position", err)
	}
}

// failed handles a failed attempt at the first n pending records: give them up past the
// retry limit, else split them (bisect) or wait before trying them again.
func (r *shardReader) failed(ctx context.Context, n int, bisect bool) {
	s := r.s
	r.attempts++
	if s.MaximumRetryAttempts >= 0 && r.attempts > s.MaximumRetryAttempts {
		if r.giveUp(ctx, n, ConditionRetriesExhausted) {
			r.attempts = 0
			if len(r.plan) > 0 {
				r.plan = r.plan[1:]
			}
		}
		return
	}
	if bisect && n > 1 {
		halves := []int{n / 2, n - n/2}
		if len(r.plan) > 0 {
			r.plan = append(halves, r.plan[1:]...)
		} else {
			r.plan = halves
		}
		return
	}
	backoff := s.RetryBackoff
	for i := 1; i < r.attempts && backoff < s.MaxRetryBackoff; i++ {
		backoff *= 2
	}
	sleep(ctx, min(backoff, s.MaxRetryBackoff), nil)
}

// giveUp discards the first n pending records, after sending their DestinationRecord to
// the OnFailure destination when there is one (retried until it is sent: until then the
// records are not done, and ctx ending leaves them to be read again). It reports whether
// they were discarded.
func (r *shardReader) giveUp(ctx context.Context, n int, condition string) bool {
	s := r.s
	first, last := r.pending[0], r.pending[n-1]
	s.Log.Error("stream event source: records given up", "stream", s.StreamArn, "shard", r.st.id, "condition", condition,
		"records", n, "first", first.seq, "last", last.seq, "attempts", r.attempts, "destination", s.OnFailureURL)
	if s.OnFailure != nil {
		var rec DestinationRecord
		rec.RequestContext.RequestID = requestID()
		rec.RequestContext.FunctionArn = s.FunctionArn
		rec.RequestContext.Condition = condition
		rec.RequestContext.ApproximateInvokeCount = r.attempts
		if r.attempts > 0 {
			rec.ResponseContext = &struct {
				StatusCode      int    `json:"statusCode"`
				ExecutedVersion string `json:"executedVersion"`
				FunctionError   string `json:"functionError,omitempty"`
			}{StatusCode: 200, ExecutedVersion: "$LATEST"}
			if r.fnError {
				rec.ResponseContext.FunctionError = "Unhandled"
			}
		}
		rec.Version, rec.Timestamp = "1.0", time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
		rec.BatchInfo = StreamBatchInfo{ShardID: r.st.id, StartSequenceNumber: first.seq, EndSequenceNumber: last.seq,
			ApproximateArrivalOfFirstRecord: first.created.UTC().Format(time.RFC3339),
			ApproximateArrivalOfLastRecord:  last.created.UTC().Format(time.RFC3339), BatchSize: n, StreamArn: s.StreamArn}
		body, err := json.Marshal(rec)
		if err != nil {
			s.fail("encode the destination record", err) // cannot happen: strings and numbers
			return false
		}
		for backoff := s.RetryBackoff; ; backoff = min(backoff*2, s.MaxRetryBackoff) {
			_, err := s.OnFailure.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(s.OnFailureURL), MessageBody: aws.String(string(body))})
			if err == nil {
				break
			}
			if ctx.Err() != nil {
				return false
			}
			s.fail("send to the on-failure destination", err)
			if sleep(ctx, backoff, nil); ctx.Err() != nil {
				return false
			}
		}
		s.mu.Lock()
		s.stats.SentToDestination++
		s.mu.Unlock()
	}
	r.done(n, true)
	return true
}

// requestID is a random request ID in a UUID's shape.
func requestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}

// firstFailure reads a ReportBatchItemFailures response: the index of the first record it
// lists as failed (-1: none). A response that cannot be read, or names no record of the
// batch, fails the whole batch, as on Lambda.
func firstFailure(out []byte, recs []record) (int, error) {
	if len(out) == 0 || string(out) == "null" {
		return -1, nil
	}
	var resp struct {
		BatchItemFailures []map[string]any `json:"batchItemFailures"`
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		return -1, fmt.Errorf("response is not a batch item failures report: %w", err)
	}
	first := -1
	for _, f := range resp.BatchItemFailures {
		id, _ := f["itemIdentifier"].(string)
		if id == "" {
			return -1, fmt.Errorf("batch item failure without an itemIdentifier: %v", f)
		}
		i := indexOf(recs, id)
		if i < 0 {
			return -1, fmt.Errorf("batch item failure %q is no sequence number of the batch", id)
		}
		if first < 0 || i < first {
			first = i
		}
	}
	return first, nil
}

func indexOf(recs []record, seq string) int {
	for i, r := range recs {
		if r.seq == seq {
			return i
		}
	}
	return -1
}

// eventRecord is the stream record as Lambda puts it in an events.DynamoDBEvent.
func (s *StreamSource) eventRecord(r types.Record) events.DynamoDBEventRecord {
	er := events.DynamoDBEventRecord{
		AWSRegion: arnRegion(s.StreamArn), EventID: aws.ToString(r.EventID), EventName: string(r.EventName),
		EventSource: aws.ToString(r.EventSource), EventVersion: aws.ToString(r.EventVersion), EventSourceArn: s.StreamArn,
	}
	if er.EventSource == "" {
		er.EventSource = "aws:dynamodb"
	}
	if u := r.UserIdentity; u != nil {
		er.UserIdentity = &events.DynamoDBUserIdentity{Type: aws.ToString(u.Type), PrincipalID: aws.ToString(u.PrincipalId)}
	}
	if d := r.Dynamodb; d != nil {
		er.Change = events.DynamoDBStreamRecord{Keys: eventImage(d.Keys), NewImage: eventImage(d.NewImage), OldImage: eventImage(d.OldImage),
			SequenceNumber: aws.ToString(d.SequenceNumber), SizeBytes: aws.ToInt64(d.SizeBytes), StreamViewType: string(d.StreamViewType)}
		if d.ApproximateCreationDateTime != nil {
			er.Change.ApproximateCreationDateTime = events.SecondsEpochTime{Time: *d.ApproximateCreationDateTime}
		}
	}
	return er
}

func eventImage(m map[string]types.AttributeValue) map[string]events.DynamoDBAttributeValue {
	if m == nil {
		return nil
	}
	out := make(map[string]events.DynamoDBAttributeValue, len(m))
	for k, v := range m {
		out[k] = eventValue(v)
	}
	return out
}

func eventValue(v types.AttributeValue) events.DynamoDBAttributeValue {
	switch x := v.(type) {
	case *types.AttributeValueMemberS:
		return events.NewStringAttribute(x.Value)
	case *types.AttributeValueMemberN:
		return events.NewNumberAttribute(x.Value)
	case *types.AttributeValueMemberB:
		return events.NewBinaryAttribute(x.Value)
	case *types.AttributeValueMemberBOOL:
		return events.NewBooleanAttribute(x.Value)
	case *types.AttributeValueMemberSS:
		return events.NewStringSetAttribute(x.Value)
	case *types.AttributeValueMemberNS:
		return events.NewNumberSetAttribute(x.Value)
	case *types.AttributeValueMemberBS:
		return events.NewBinarySetAttribute(x.Value)
	case *types.AttributeValueMemberL:
		l := make([]events.DynamoDBAttributeValue, len(x.Value))
		for i, e := range x.Value {
			l[i] = eventValue(e)
		}
		return events.NewListAttribute(l)
	case *types.AttributeValueMemberM:
		return events.NewMapAttribute(eventImage(x.Value))
	}
	return events.NewNullAttribute()
}

// arnRegion is an ARN's region (arn:aws:SERVICE:REGION:…).
func arnRegion(arn string) string {
	parts := strings.SplitN(arn, ":", 5)
	if len(parts) < 5 {
		return ""
	}
	return parts[3]
}

// shortShard is the end of a shard ID, for request IDs.
func shortShard(id string) string {
	if i := strings.LastIndexByte(id, '-'); i >= 0 && i < len(id)-1 {
		return id[i+1:]
	}
	return id
}

// Drained returns once every record written to the stream before the call has been
// delivered to the function (or dropped by the filter, or discarded past
// MaximumRetryAttempts), or with an error when ctx ends first or the source has stopped.
func (s *StreamSource) Drained(ctx context.Context) error {
	s.init()
	w := &drainWaiter{since: time.Now(), targets: map[string]string{}}
	s.mu.Lock()
	s.waiters = append(s.waiters, w)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		for i, x := range s.waiters {
			if x == w {
				s.waiters = append(s.waiters[:i], s.waiters[i+1:]...)
				break
			}
		}
		s.mu.Unlock()
	}()
	s.nudge() // the pollers read now rather than after their pause
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		s.mu.Lock()
		ok, stopped, why := s.drainedLocked(w), s.stopped, s.behindLocked(w)
		s.mu.Unlock()
		if ok {
			return nil
		}
		if stopped {
			return fmt.Errorf("stream %s: the event source has stopped before delivering every record (%s)", s.StreamArn, why)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("stream %s: %w before every record written was delivered (%s)", s.StreamArn, ctx.Err(), why)
		case <-t.C:
		}
	}
}

func (s *StreamSource) drainedLocked(w *drainWaiter) bool {
	if w.shards == nil {
		return false
	}
	for id := range w.shards {
		st := s.shards[id]
		if st == nil || st.done {
			continue
		}
		target, ok := w.targets[id]
		if st.exhausted {
			target, ok = st.lastRead, true
		}
		if !ok || (st.head != "" && !seqLess(target, st.head)) {
			return false
		}
	}
	return true
}

// behindLocked says what a Drained call still waits for.
func (s *StreamSource) behindLocked(w *drainWaiter) string {
	var parts []string
	if w.shards == nil {
		parts = append(parts, "the shards have not been listed since the call")
	}
	for _, id := range sortedKeys(w.shards) {
		st := s.shards[id]
		if st == nil || st.done {
			continue
		}
		switch _, caught := w.targets[id]; {
		case !st.started:
			parts = append(parts, fmt.Sprintf("shard %s waits for its parent %s", id, st.parent))
		case !caught && !st.exhausted:
			parts = append(parts, fmt.Sprintf("shard %s has not read to the end of the stream yet (last read %s)", id, st.lastRead))
		default:
			parts = append(parts, fmt.Sprintf("shard %s has %d records to deliver from %s", id, st.pending, st.head))
		}
	}
	if s.lastErr != "" {
		parts = append(parts, "last error: "+s.lastErr)
	}
	return strings.Join(parts, "; ")
}

// Stats reports the source's progress.
func (s *StreamSource) Stats() StreamStats {
	s.init()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// updateCounts refreshes the shard and pending counts (s.mu held).
func (s *StreamSource) updateCounts() {
	s.stats.Shards, s.stats.Done, s.stats.Pending = len(s.shards), 0, 0
	for _, st := range s.shards {
		if st.done {
			s.stats.Done++
		}
		s.stats.Pending += st.pending
	}
}

// fail records a failure, and logs it unless it repeats the last one (a stream the role may
// not read is refused every second).
func (s *StreamSource) fail(what string, err error) {
	msg := what + ": " + err.Error()
	s.mu.Lock()
	repeat := msg == s.lastErr
	s.lastErr = msg
	s.stats.LastError = msg
	s.mu.Unlock()
	if !repeat {
		s.Log.Warn("stream event source: "+what+" failed", "stream", s.StreamArn, "error", err)
	}
}

func (s *StreamSource) wakeChan() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.wake
}

// nudge wakes the pollers and the shard listing from their pauses.
func (s *StreamSource) nudge() {
	s.mu.Lock()
	close(s.wake)
	s.wake = make(chan struct{})
	s.mu.Unlock()
}

// sleep pauses for d, or until ctx ends or wake is closed (then it reports true).
func sleep(ctx context.Context, d time.Duration, wake <-chan struct{}) bool {
	if d <= 0 {
		return false
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	case <-wake:
		return true
	}
	return false
}

// seqLess compares sequence numbers (decimal strings, of any length and leading zeros).
func seqLess(a, b string) bool {
	a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
