package engine_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/action"
	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/timer"
)

// fakeMetrics records what the engine reports, one line per call. Like emf.Recorder, it keeps
// firings back until Flush: a firing the engine did not flush never shows in Lines.
type fakeMetrics struct {
	mu      sync.Mutex
	lines   []string
	pending []string
}

var _ engine.Metrics = (*fakeMetrics)(nil)

func (m *fakeMetrics) add(format string, args ...any) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.lines = append(m.lines, fmt.Sprintf(format, args...))
}

func (m *fakeMetrics) Firing(outcome string, priority int, ran bool, lateness, duration time.Duration) {
	line := fmt.Sprintf("firing %s p%d", outcome, priority)
	if ran {
		line += fmt.Sprintf(" late=%s took=%s", lateness, duration)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.pending = append(m.pending, line)
}

func (m *fakeMetrics) Flush() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.lines = append(m.lines, m.pending...)
	m.pending = nil
}
func (m *fakeMetrics) ClaimLost()          { m.add("claim lost") }
func (m *fakeMetrics) ZombieDiscarded()    { m.add("zombie discarded") }
func (m *fakeMetrics) MessageRejected()    { m.add("rejected") }
func (m *fakeMetrics) FiringsResent(n int) { m.add("resent %d", n) }
func (m *fakeMetrics) FetchTick(sent int)  { m.add("tick sent=%d", sent) }

func (m *fakeMetrics) Lines() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.lines...)
}

func TestMetrics(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("ProcessorReportsOutcomeLatenessAndDurationByPriority", func(t *testing.T) {
		t.Parallel()
		f := newFakes(t)
		m := &fakeMetrics{}
		p := f.processor()
		p.Metrics = m
		ok, bad := instance("Ok", t0), instance("Bad", t0)
		bad.Priority, bad.MaxRetries = 1, 0
		f.put(ok, bad)
		f.Clock.Set(t0.Add(2 * time.Second)) // both start 2 s late
		f.Invoker.fn = func(_ context.Context, pl action.Payload) (action.Result, error) {
			if pl.Timer == "Bad" {
				return action.Result{}, errors.New("boom")
			}
			return action.Result{Status: 200}, nil
		}

		handle(t, p, event(t, scheduled(ok)))
		handle(t, p, event(t, scheduled(bad)))

		require.Equal(t, []string{"firing success p3 late=2s took=0s", "firing error p1 late=2s took=0s"}, m.Lines())
	})

	t.Run("ProcessorReportsLostClaimsAndRejectedMessages", func(t *testing.T) {
		t.Parallel()
		f := newFakes(t)
		m := &fakeMetrics{}
		p := f.processor()
		p.Metrics = m
		in := instance("Dup", t0)
		f.put(in)

		handle(t, p, event(t, scheduled(in)))
		handle(t, p, event(t, scheduled(in))) // redelivery: the claim is lost
		resp, err := p.Handle(ctx, events.SQSEvent{Records: []events.SQSMessage{{MessageId: "junk", Body: "{not json"}}})
		require.NoError(t, err)
		require.Len(t, resp.BatchItemFailures, 1)

		require.Equal(t, []string{"firing success p3 late=0s took=0s", "claim lost", "rejected"}, m.Lines())
	})

	t.Run("ZombieResultIsReportedAndRecoveryReportsTheRecoveredFiring", func(t *testing.T) {
		t.Parallel()
		f := newFakes(t)
		m := &fakeMetrics{}
		p, rec := f.processor(), f.recoverer()
		p.Metrics, rec.Metrics = m, m
		in := instance("Slow", t0)
		f.put(in)
		f.Invoker.fn = func(ctx context.Context, _ action.Payload) (action.Result, error) {
			f.Clock.Advance(in.Lease() + time.Second)
			_, err := rec.Run(ctx)
			return action.Result{Status: 200}, err
		}

		handle(t, p, event(t, scheduled(in)))

		require.Equal(t, []string{"resent 0", "firing recovered p3", "zombie discarded"}, m.Lines())
	})

	t.Run("RecoveryReportsResentFirings", func(t *testing.T) {
		t.Parallel()
		f := newFakes(t)
		m := &fakeMetrics{}
		rec := f.recoverer()
		rec.Metrics = m
		f.put(instance("Lost", t0))
		f.Clock.Set(t0.Add(10 * time.Minute))

		st, err := rec.Run(ctx)
		require.NoError(t, err)
		require.Equal(t, 1, st.Requeued)
		require.Equal(t, []string{"resent 1"}, m.Lines())
	})

	t.Run("FetchReportsEachCompletedTickAndTheFiringsItSent", func(t *testing.T) {
		t.Parallel()
		f := newFakes(t)
		m := &fakeMetrics{}
		fetch := f.fetcher()
		fetch.Metrics = m
		f.put(instance("A", t0.Add(time.Minute)), instance("B", t0.Add(time.Minute)))

		_, err := fetch.Run(ctx)
		require.NoError(t, err)
		_, err = fetch.Run(ctx) // the window is covered already: still a completed tick
		require.NoError(t, err)
		require.Equal(t, []string{"tick sent=2", "tick sent=0"}, m.Lines())
	})

	t.Run("AsyncCompletionIsReportedAsAFiring", func(t *testing.T) {
		t.Parallel()
		f := newFakes(t)
		m := &fakeMetrics{}
		p := f.processor()
		in := instance("Async", t0)
		in.Async = true
		f.put(in)
		var token string
		f.Invoker.fn = func(_ context.Context, pl action.Payload) (action.Result, error) {
			token = pl.Token
			return action.Result{Status: 202, Accepted: true}, nil
		}
		handle(t, p, event(t, scheduled(in)))
		require.NotEmpty(t, token)

		r := &engine.Reporter{Store: f.Store, Queue: f.Queue, Clock: f.Clock, Log: f.Log, Metrics: m}
		f.Clock.Advance(4 * time.Second)
		require.NoError(t, r.Complete(ctx, token, nil))
		require.Equal(t, []string{"firing success p3 late=0s took=4s"}, m.Lines())
		require.Equal(t, timer.OutcomeSuccess, f.get(t, in.Key).LastOutcome)
	})
}
