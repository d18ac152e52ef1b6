package events

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/timer"
)

// fakeBus records the requests and takes or refuses entries as fail says.
type fakeBus struct {
	mu       sync.Mutex
	requests [][]types.PutEventsRequestEntry
	taken    map[string]int // by detail
	fail     func(call int, detail string) (whole bool, refuse bool)
}

func (b *fakeBus) PutEvents(_ context.Context, in *eventbridge.PutEventsInput, _ ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	call := len(b.requests)
	b.requests = append(b.requests, in.Entries)
	if len(in.Entries) > MaxEntries {
		return nil, errors.New("ValidationException: more than 10 entries")
	}
	size := 0
	for _, e := range in.Entries {
		size += EntrySize(e)
	}
	if size > MaxRequestBytes {
		return nil, errors.New("ValidationException: over 256 KB")
	}
	out := &eventbridge.PutEventsOutput{}
	for _, e := range in.Entries {
		whole, refuse := false, false
		if b.fail != nil {
			whole, refuse = b.fail(call, aws.ToString(e.Detail))
		}
		if whole {
			return nil, errors.New("InternalException")
		}
		if refuse {
			out.FailedEntryCount++
			out.Entries = append(out.Entries, types.PutEventsResultEntry{ErrorCode: aws.String("InternalFailure")})
			continue
		}
		if b.taken == nil {
			b.taken = map[string]int{}
		}
		b.taken[aws.ToString(e.Detail)]++
		out.Entries = append(out.Entries, types.PutEventsResultEntry{EventId: aws.String("id")})
	}
	return out, nil
}

type memOutbox struct{ items map[string][]byte }

func (m *memOutbox) PutPendingEvents(_ context.Context, ids []string, bodies [][]byte) error {
	for i, id := range ids {
		m.items[id] = bodies[i]
	}
	return nil
}

func (m *memOutbox) PendingEvents(_ context.Context, limit int) (ids []string, bodies [][]byte, _ error) {
	for id, b := range m.items {
		if len(ids) == limit {
			break
		}
		ids, bodies = append(ids, id), append(bodies, b)
	}
	return ids, bodies, nil
}

func (m *memOutbox) DeletePendingEvents(_ context.Context, ids []string) error {
	for _, id := range ids {
		delete(m.items, id)
	}
	return nil
}

func failedRuns(n int, errText string) []Event {
	var evs []Event
	for i := range n {
		ev, ok := FromExecution(timer.Execution{Key: timer.Key{Timer: "T"}, ExecutionID: fmt.Sprintf("E%03d", i), Outcome: timer.OutcomeError,
			ScheduledAt: time.Unix(1000, 0), StartedAt: time.Unix(1001, 0), Attempt: 1, Error: errText})
		if !ok {
			panic("not an event")
		}
		evs = append(evs, ev)
	}
	return evs
}

func TestEventsOfExecutions(t *testing.T) {
	for o, dt := range map[timer.Outcome]string{timer.OutcomeError: ExecutionFailed, timer.OutcomeTimeout: ExecutionTimedOut,
		timer.OutcomeRecovered: ExecutionRecovered, timer.OutcomeMissed: ExecutionMissed} {
		ev, ok := FromExecution(timer.Execution{Key: timer.Key{App: "billing", Timer: "Close", Tenant: "acme"}, ExecutionID: "X", Outcome: o,
			ScheduledAt: time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC), Attempt: 2, Error: "boom"})
		require.True(t, ok)
		require.Equal(t, dt, ev.DetailType)
		d, err := ev.DetailJSON()
		require.NoError(t, err)
		require.JSONEq(t, `{"app":"billing","timer":"Close","tenant":"acme","executionId":"X","scheduledAt":"2026-11-25T10:00:00Z","attempt":2,"outcome":"`+string(o)+`","error":"boom"}`, d)
	}
	_, ok := FromExecution(timer.Execution{Outcome: timer.OutcomeSuccess})
	require.False(t, ok, "a success is no event")
	// The error is cut to 512 bytes, never inside a character, and escaped in the JSON.
	long := strings.Repeat("é", 300) + "\x1b[31m"
	ev := failedRuns(1, long)[0]
	require.LessOrEqual(t, len(ev.Detail.Error), MaxErrorBytes)
	require.Equal(t, strings.Repeat("é", 256), ev.Detail.Error)
	ev = failedRuns(1, "a\x1b[2J\"b")[0]
	d, _ := ev.DetailJSON()
	require.Contains(t, d, `a\u001b[2J\"b`)
}

// An execution that skipped instants leaves an Instants Skipped event beside its outcome's
// (none for a plain success); one that skipped none leaves none.
func TestEventsOfSkippedInstants(t *testing.T) {
	start := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	e := timer.Execution{Key: timer.Key{App: "billing", Timer: "Close"}, ExecutionID: "X", Outcome: timer.OutcomeSuccess,
		ScheduledAt: start, StartedAt: start, Duration: 3 * time.Minute, Attempt: 1, Skipped: 3}
	evs := FromExecutions([]timer.Execution{e, {Key: e.Key, ExecutionID: "Y", Outcome: timer.OutcomeSuccess}})
	require.Len(t, evs, 1)
	require.Equal(t, InstantsSkipped, evs[0].DetailType)
	require.Equal(t, start.Add(3*time.Minute), evs[0].Time)
	d, err := evs[0].DetailJSON()
	require.NoError(t, err)
	require.JSONEq(t, `{"app":"billing","timer":"Close","tenant":"","executionId":"X","scheduledAt":"2026-11-25T10:00:00Z","attempt":1,"outcome":"success","skipped":3}`, d)
	e.Outcome = timer.OutcomeError
	evs = FromExecutions([]timer.Execution{e})
	require.Len(t, evs, 2)
	require.Equal(t, []string{ExecutionFailed, InstantsSkipped}, []string{evs[0].DetailType, evs[1].DetailType})
	require.NotEqual(t, evs[0].ID(), evs[1].ID(), "two events, kept apart by the outbox")
}

// Put batches as PutEvents takes them: 10 entries, 256 KB.
func TestPutBatches(t *testing.T) {
	bus := &fakeBus{}
	p := &Publisher{API: bus, Bus: "ops"}
	left, err := p.Put(context.Background(), failedRuns(25, "x"))
	require.NoError(t, err)
	require.Empty(t, left)
	require.Len(t, bus.requests, 3)
	require.Len(t, bus.requests[0], 10)
	require.Len(t, bus.requests[2], 5)
	require.Equal(t, "ops", aws.ToString(bus.requests[0][0].EventBusName))
	require.Equal(t, Source, aws.ToString(bus.requests[0][0].Source))

	// Entries near 26 KB each (a padded detail): fewer than 10 fit in 256 KB.
	bus = &fakeBus{}
	p = &Publisher{API: bus}
	big := failedRuns(12, "x")
	for i := range big {
		big[i].Detail.Timer = strings.Repeat("t", 26*1024)
	}
	left, err = p.Put(context.Background(), big)
	require.NoError(t, err)
	require.Empty(t, left)
	require.Len(t, bus.taken, 12)
	for _, r := range bus.requests {
		require.Less(t, len(r), 10)
	}
}

// A failed call and refused entries are retried; only those are sent again; what never gets
// through goes to the outbox, and Drain puts it once EventBridge takes it.
func TestPublishRetriesAndKeeps(t *testing.T) {
	evs := failedRuns(12, "x")
	var dead string
	bus := &fakeBus{fail: func(call int, detail string) (bool, bool) {
		switch {
		case call == 0:
			return true, false // the first request fails whole
		case strings.Contains(detail, "E003"):
			return false, call < 3 // refused once more, then taken
		case dead != "" && strings.Contains(detail, dead):
			return false, true // refused until the outbox's drain
		}
		return false, false
	}}
	dead = "E007"
	box := &memOutbox{items: map[string][]byte{}}
	p := &Publisher{API: bus, Outbox: box, Backoff: time.Millisecond}
	require.NoError(t, p.Publish(context.Background(), evs))
	require.Len(t, bus.taken, 11)
	for d, n := range bus.taken {
		require.Equal(t, 1, n, "taken once: %s", d)
	}
	require.Len(t, box.items, 1, "the event never taken is kept")
	require.Contains(t, box.items, evs[7].ID())

	put, kept, err := p.Drain(context.Background())
	require.NoError(t, err)
	require.Equal(t, [2]int{0, 1}, [2]int{put, kept}, "still refused: kept")
	dead = ""
	put, kept, err = p.Drain(context.Background())
	require.NoError(t, err)
	require.Equal(t, [2]int{1, 0}, [2]int{put, kept})
	require.Empty(t, box.items)
	require.Len(t, bus.taken, 12)
	for d, n := range bus.taken {
		require.Equal(t, 1, n, "taken once: %s", d)
	}
}

// An execution named twice in a batch (a record delivered twice) is one event.
func TestPublishOncePerEvent(t *testing.T) {
	bus := &fakeBus{}
	evs := failedRuns(3, "x")
	p := &Publisher{API: bus, Outbox: &memOutbox{items: map[string][]byte{}}}
	require.NoError(t, p.Publish(context.Background(), append(evs, evs[1])))
	require.Len(t, bus.requests, 1)
	require.Len(t, bus.requests[0], 3)
}

// Drain goes on while EventBridge takes whole pages: an outbox of 250 is emptied by one sweep.
func TestDrainPages(t *testing.T) {
	bus := &fakeBus{}
	box := &memOutbox{items: map[string][]byte{}}
	p := &Publisher{API: bus, Outbox: box}
	ids, bodies, err := encode(failedRuns(250, "x"))
	require.NoError(t, err)
	require.NoError(t, box.PutPendingEvents(context.Background(), ids, bodies))
	put, kept, err := p.Drain(context.Background())
	require.NoError(t, err)
	require.Equal(t, 250, put)
	require.Zero(t, kept)
	require.Empty(t, box.items)
	require.Len(t, bus.taken, 250)
}
