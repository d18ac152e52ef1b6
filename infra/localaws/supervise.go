package localaws

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/sundialhq/sundial/infra/emulator"
	"github.com/sundialhq/sundial/infra/provision"
)

// Supervision restarts the engines Start started when one dies (a crash, a kill -9, the OOM
// killer): on the same port, since the gateway forwards there, with DynamoDB Local's data on
// disk kept, and fauxqs's queues (it keeps them in memory only) re-created from the stacks'
// SAM translation. An engine that dies MaxRestarts times within Window is given up: Failed
// then receives the reason.
type Supervision struct {
	// Delay is the wait before a restart (default 500 ms).
	Delay time.Duration
	// MaxRestarts within Window before giving up (default 5 in a minute).
	MaxRestarts int
	Window      time.Duration
	// Report, when set, is told of every death, restart and failure, from the supervising
	// goroutine: it must not block long (a restart waits for it).
	Report func(EngineEvent)
}

// EngineEventKind says what happened to an engine.
type EngineEventKind string

const (
	EngineDied          EngineEventKind = "died"
	EngineRestarted     EngineEventKind = "restarted"
	EngineRestartFailed EngineEventKind = "restart-failed"
	EngineGaveUp        EngineEventKind = "gave-up"
)

// EngineEvent is one thing that happened to a supervised engine.
type EngineEvent struct {
	Kind     EngineEventKind
	Engine   string // "DynamoDB Local", "fauxqs"
	Endpoint string
	// Detail says how it ended (EngineDied), what the restart kept or re-created
	// (EngineRestarted), or why it failed.
	Detail string
	Err    error
	// Took is how long the engine was down (EngineRestarted).
	Took time.Duration
	// QueuesLost is set when the engine was the SQS one: the messages it held are gone.
	QueuesLost bool
}

// String is the event as one line for a terminal.
func (ev EngineEvent) String() string {
	switch ev.Kind {
	case EngineDied:
		return fmt.Sprintf("engine     %s at %s died (%s); restarting it on the same port", ev.Engine, ev.Endpoint, ev.Detail)
	case EngineRestarted:
		return fmt.Sprintf("engine     %s restarted at %s after %s; %s", ev.Engine, ev.Endpoint, ev.Took.Round(10*time.Millisecond), ev.Detail)
	case EngineRestartFailed:
		return fmt.Sprintf("engine     %s: restart failed: %v", ev.Engine, ev.Err)
	default:
		return fmt.Sprintf("engine     %s: giving up: %v", ev.Engine, ev.Err)
	}
}

func (s Supervision) withDefaults() Supervision {
	if s.Delay <= 0 {
		s.Delay = 500 * time.Millisecond
	}
	if s.MaxRestarts <= 0 {
		s.MaxRestarts = 5
	}
	if s.Window <= 0 {
		s.Window = time.Minute
	}
	return s
}

// Failed receives, once, why the supervision gave up an engine (the local AWS no longer
// works); nil when the engines are not supervised.
func (e *Env) Failed() <-chan error { return e.failed }

// supervise watches the engines Start started until Stop.
func (e *Env) supervise(s Supervision, dbPath string) {
	s = s.withDefaults()
	e.failed = make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	e.stopSupervision = cancel
	for _, srv := range append(slices.Clone(e.dynamo), e.queues) {
		after := func(context.Context) (string, error) { return "its data on disk kept (" + dbPath + ")", nil }
		inMemory := srv != e.queues && dbPath == ""
		if srv == e.queues {
			after = e.recreateQueues
		}
		e.supervising.Go(func() { e.watch(ctx, s, srv, inMemory, after) })
	}
}

// watch restarts srv each time it dies, until ctx ends or it is given up.
func (e *Env) watch(ctx context.Context, s Supervision, srv *emulator.Server, inMemory bool, after func(context.Context) (string, error)) {
	report := func(ev EngineEvent) {
		ev.Engine, ev.Endpoint, ev.QueuesLost = srv.Name, srv.Endpoint, srv == e.queues
		if s.Report != nil {
			s.Report(ev)
		}
	}
	giveUp := func(err error) {
		report(EngineEvent{Kind: EngineGaveUp, Err: err})
		select {
		case e.failed <- fmt.Errorf("%s at %s: %w", srv.Name, srv.Endpoint, err):
		default:
		}
	}
	var restarts []time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-srv.Exited():
		}
		if ctx.Err() != nil {
			return // stopped on purpose
		}
		died := time.Now()
		report(EngineEvent{Kind: EngineDied, Detail: srv.Exit()})
		if inMemory {
			giveUp(errors.New("it kept its data in memory (no --data directory), so its tables and timers died with it; not restarting it empty"))
			return
		}
		for {
			restarts = slices.DeleteFunc(restarts, func(t time.Time) bool { return time.Since(t) > s.Window })
			if len(restarts) >= s.MaxRestarts {
				giveUp(fmt.Errorf("it died or failed to start %d times within %s", len(restarts), s.Window))
				return
			}
			restarts = append(restarts, time.Now())
			select {
			case <-ctx.Done():
				return
			case <-time.After(s.Delay):
			}
			err := srv.Restart(ctx)
			if errors.Is(err, emulator.ErrStopped) || ctx.Err() != nil {
				return
			}
			var detail string
			if err == nil {
				if detail, err = after(ctx); err != nil {
					// Not usable as it is: end it, and start it afresh.
					err = fmt.Errorf("restarted, but %w", err)
					report(EngineEvent{Kind: EngineRestartFailed, Err: err})
					e.killForRestart(srv)
					continue
				}
			}
			if err != nil {
				report(EngineEvent{Kind: EngineRestartFailed, Err: err})
				continue
			}
			report(EngineEvent{Kind: EngineRestarted, Detail: detail, Took: time.Since(died)})
			break
		}
	}
}

// killForRestart kills srv's process (a restart that could not be completed) and waits for
// its exit, so that the next Restart may start it again.
func (e *Env) killForRestart(srv *emulator.Server) {
	_ = srv.Kill()
	<-srv.Exited()
}

// recreateQueues creates every provisioned stack's queues again on a restarted fauxqs and says
// what was lost.
func (e *Env) recreateQueues(ctx context.Context) (string, error) {
	e.mu.Lock()
	stacks := slices.Collect(maps.Values(e.stacks))
	e.mu.Unlock()
	slices.SortFunc(stacks, func(a, b *provision.Stack) int { return strings.Compare(a.Name, b.Name) })
	n := 0
	var names []string
	for _, st := range stacks {
		created, err := provision.RecreateQueues(ctx, e.sqs, st)
		n += created
		if err != nil {
			return "", err
		}
		names = append(names, st.Name)
	}
	return fmt.Sprintf("it keeps queues in memory only: re-created %d queues of stack %s from the SAM translation; the messages they held are lost",
		n, strings.Join(names, ", ")), nil
}
