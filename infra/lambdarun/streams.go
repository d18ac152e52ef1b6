package lambdarun

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

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
