package engine_test

import (
	"bytes"
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/engine"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// The attack: a firing message due in year 9999 was re-sent "arrived early" every 15 minutes
// for ever, even for a timer that does not exist. A message due further ahead than the fetch
// ever sends (its look-ahead and a minute), or for an unknown timer, now fails (SQS
// redelivers it until maxReceiveCount moves it to the dead-letter queue) with the reason
// logged, and is never re-sent.
func TestProcessorRefusesFiringsThatCanNeverBeDue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	setup := func(t *testing.T) (*engine.Processor, *fakes, *lockedBuffer) {
		p, f := setupProcessor(t)
		p.MaxAhead = engine.MaxAheadFor(f.fetcher().Lookahead) // 2 minutes + 1
		var logs lockedBuffer
		p.Log = slog.New(slog.NewTextHandler(&logs, nil))
		return p, f, &logs
	}
	refused := func(t *testing.T, p *engine.Processor, f *fakes, rec events.SQSMessage) {
		t.Helper()
		resp, err := p.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{rec}})
		require.NoError(t, err)
		require.Equal(t, []events.SQSBatchItemFailure{{ItemIdentifier: rec.MessageId}}, resp.BatchItemFailures, "failed: redelivered, then dead-lettered")
		require.Empty(t, f.Queue.Drain(), "not re-sent")
		require.Zero(t, p.Stats().Requeued.Load())
		require.Equal(t, int64(1), p.Stats().Rejected.Load())
		require.Empty(t, f.Invoker.Calls())
	}

	t.Run("Year9999", func(t *testing.T) {
		t.Parallel()
		p, f, logs := setup(t)
		in := instance("Forever", time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC))
		f.put(in)
		refused(t, p, f, record(t, "far", scheduled(in), 3))
		require.Contains(t, logs.String(), "processor: message due too far ahead; it will go to the dead-letter queue")
		require.Contains(t, logs.String(), "no Sundial component sends a firing due more than 3m0s ahead")
		require.Equal(t, in.NextRun, f.get(t, in.Key).NextRun, "the timer is untouched")
	})

	t.Run("JustPastTheLookAhead", func(t *testing.T) {
		t.Parallel()
		p, f, _ := setup(t)
		in := instance("Past", t0.Add(3*time.Minute+time.Second))
		f.put(in)
		refused(t, p, f, record(t, "past", scheduled(in), 3))
	})

	t.Run("UnknownTimer", func(t *testing.T) {
		t.Parallel()
		p, f, logs := setup(t)
		ghost := instance("Ghost", t0.Add(40*time.Second)) // never stored
		refused(t, p, f, record(t, "ghost", scheduled(ghost), 3))
		require.Contains(t, logs.String(), "processor: message arrived early for an unknown timer; it will go to the dead-letter queue")
	})

	t.Run("WithinTheLookAheadIsResent", func(t *testing.T) {
		t.Parallel()
		p, f, _ := setup(t)
		in := instance("Soon", t0.Add(3*time.Minute-time.Second))
		f.put(in)
		firing := scheduled(in)
		resp, err := p.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{record(t, "soon", firing, 3)}})
		require.NoError(t, err)
		require.Empty(t, resp.BatchItemFailures)
		require.Equal(t, []engine.Outgoing{{Firing: firing, Priority: 3, Delay: 3*time.Minute - time.Second}}, f.Queue.Drain())
		require.Zero(t, p.Stats().Rejected.Load())
	})

	t.Run("DefaultBoundIsSQSLongestDelay", func(t *testing.T) {
		t.Parallel()
		require.Equal(t, engine.MaxDelay+engine.AheadSlack, engine.MaxAheadFor(time.Hour))
		p, f := setupProcessor(t) // MaxAhead unset
		in := instance("Unset", t0.Add(engine.MaxDelay+engine.AheadSlack+time.Second))
		f.put(in)
		refused(t, p, f, record(t, "unset", scheduled(in), 3))
	})
}
