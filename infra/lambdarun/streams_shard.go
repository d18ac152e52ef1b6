package lambdarun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

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

// shortShard is the end of a shard ID, for request IDs.
func shortShard(id string) string {
	if i := strings.LastIndexByte(id, '-'); i >= 0 && i < len(id)-1 {
		return id[i+1:]
	}
	return id
}
