package chaosrun

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/sundialhq/sundial/client"
	"github.com/sundialhq/sundial/infra/gateway"
	"github.com/sundialhq/sundial/infra/iam"
	"github.com/sundialhq/sundial/infra/lambdarun"
	"github.com/sundialhq/sundial/infra/local"
	"github.com/sundialhq/sundial/internal/chaos"
	"github.com/sundialhq/sundial/internal/config"
	"github.com/sundialhq/sundial/internal/dynamo"
	"github.com/sundialhq/sundial/internal/logwriter/redrive"
	"github.com/sundialhq/sundial/internal/timer"
)

// Config describes a run.
type Config struct {
	Timers int // default 30
	// AsyncTimers are async timers besides them (async.go); default 6, negative: none.
	AsyncTimers int
	Duration    time.Duration // the chaos phase; default 5m
	// Faults are injected into the function processes (their Seed is the run's seed).
	Faults chaos.Config
	// Replica is the index lag and the stale reads the local endpoint answers with, shared
	// by every process (infra/gateway/replica.go; its Seed is the run's seed). Zero: none.
	Replica gateway.ReplicaConfig
	// KillRate is the share of processor invocations killed (fetch and recovery: a third);
	// IdleKillEvery kills an idle processor instance that often (0: never).
	KillRate      float64
	IdleKillEvery time.Duration
	// FreezeRate is the chance that an action's start freezes (SIGSTOP) every busy processor
	// for longer than a lease (25–28 s; timers have a 10 s timeout, 12 s lease); the first
	// action after a quarter of the chaos phase always does (0: only that one). Negative: never.
	FreezeRate float64
	Tick       time.Duration // fetch and recovery interval; default 1s
	// LostAfter is when recovery re-sends a firing nobody claimed (SUNDIAL_LOST_AFTER);
	// default 6s, so that firings of killed batches are not late for long.
	LostAfter time.Duration
	// CatchUp bounds the wait, after the chaos phase, for every firing due during it to be
	// claimed; default 90s.
	CatchUp time.Duration
	Seed    uint64
	// Template, SourceDir: template.yaml and the module to build the functions from.
	Template, SourceDir string
	// WorkDir receives the manifest, the bootstraps, the platform's JSON log (log.jsonl) and
	// the async actions' client's (client.jsonl);
	// default a temporary directory, kept.
	WorkDir string
	// Progress receives a line per phase (nil: none).
	Progress io.Writer
}

// freezeFor is how long a freeze lasts at least (plus up to 3 s): longer than a lease (12 s)
// plus twice the clock skew (4 s) and the longest action, so that a frozen processor always
// wakes up to find its lease recovered, and cannot start an action late in it (the processor
// does not start an action past claim + timeout × 1.1), plus 8 s for recovery to run on a
// loaded machine: with 17 s, a CI run with every test package at once once saw no zombie at
// all (the frozen processors woke before recovery had ended their executions).
const freezeFor = 25 * time.Second

// DefaultReplica is the staleness of `make chaos`: a global secondary index lags up to 1.5 s
// (every other change), an eventually consistent item read answers the item as it was 2 s ago
// (one read in three). The fetch waits SUNDIAL_INDEX_LAG (2 s) for the index.
var DefaultReplica = gateway.ReplicaConfig{IndexLag: 1500 * time.Millisecond, IndexLagRate: 0.5, StaleReads: 2 * time.Second, StaleReadRate: 0.3}

// DefaultFaults are the faults of `make chaos`.
var DefaultFaults = chaos.Config{
	DynamoDB:  chaos.Faults{Throttle: 0.05, Server: 0.02, ServerAfter: 0.01},
	SQS:       chaos.Faults{Throttle: 0.02, Server: 0.02, ServerAfter: 0.01},
	Dup:       0.1,
	ClockSkew: 2 * time.Second,
}

func (c *Config) defaults() {
	c.Timers = cmpOr(c.Timers, 30)
	c.AsyncTimers = max(cmpOr(c.AsyncTimers, 6), 0)
	c.Duration = cmpOr(c.Duration, 5*time.Minute)
	c.Tick = cmpOr(c.Tick, time.Second)
	c.LostAfter = cmpOr(c.LostAfter, 6*time.Second)
	c.CatchUp = cmpOr(c.CatchUp, 90*time.Second)
	c.Template = cmpOr(c.Template, "template.yaml")
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	c.Faults.Seed = c.Seed
	c.Replica.Seed = c.Seed
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// Report is a run's outcome.
type Report struct {
	Config Config
	Result Result
	// IAM is what the IAM check saw: a denied call is a problem of the run.
	IAM     iam.Report
	Started time.Time
	// ChaosEnd is when the kills stopped; CaughtUp when every firing due before it had been
	// claimed (zero if the catch-up wait ran out).
	ChaosEnd, CaughtUp time.Time
	Kills              struct{ Processor, Fetch, Recovery, LogWriter, Idle int64 }
	Freezes            struct{ Events, Processes int64 }
	Processes          struct{ ColdStarts, Exits, Timeouts int64 }
	Faults             map[string]int // "service operation fault" -> injected
	Replica            gateway.ReplicaStats
	ClaimsLost         int // duplicate or stale messages whose claim lost (acknowledged)
	Requeued           int // firings recovery re-sent because nobody claimed them
	// RecoveriesRefused: recoveries of a lease a heartbeat had extended since recovery read it
	// (a race with a stale replica read; without the write's condition each would take a live lease).
	RecoveriesRefused int
	NotRecorded       int // results a processor could not write (recovered later)
	FailedBatches     int // processor invocations that failed (killed): batch redelivered
	Offsets           []time.Duration
	// Streams are the stream event sources' counts at the end (the log writer's).
	Streams []lambdarun.StreamStats
	// Redriven is what `sundial logs redrive` wrote at the end from the log writer's failure
	// queue (batches it gave up during the chaos), as an operator answers LogWriterFailed.
	Redriven redrive.Report
	WorkDir  string
}

// Run performs a chaos run and checks it. The error is about the run itself (it could not
// start, or read its evidence); the invariants' verdict is Report.Result.
func Run(ctx context.Context, c Config) (*Report, error) {
	c.defaults()
	dir := c.WorkDir
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "sundial-chaos-"); err != nil {
			return nil, err
		}
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	rep := &Report{Config: c, WorkDir: dir}
	rec, err := StartRecorder(c.Seed)
	if err != nil {
		return nil, err
	}
	defer rec.Close()
	manifest := filepath.Join(dir, "timers.yaml")
	if err := os.WriteFile(manifest, []byte(Manifest(c.Timers, c.AsyncTimers, rec.URL)), 0o644); err != nil {
		return nil, err
	}
	logFile, err := os.Create(filepath.Join(dir, "log.jsonl"))
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	obs := newObserver(logFile)
	kill := newKiller(c.KillRate, c.Seed)
	if c.FreezeRate >= 0 {
		kill.freezeRate, kill.freezeFor = c.FreezeRate, freezeFor
	}
	rec.OnStart = kill.onAction
	progress := func(format string, args ...any) {
		fmt.Fprintf(c.Progress, "%s  %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
	}

	var replica *gateway.Replica
	settings := map[string]string{"SUNDIAL_LOST_AFTER": c.LostAfter.String(), "SUNDIAL_FAILED_BACKOFF": "1s"}
	if c.Replica.Enabled() {
		if replica, err = gateway.NewReplica(c.Replica); err != nil {
			return nil, err
		}
		if c.Replica.IndexLag > config.DefaultIndexLag {
			settings["SUNDIAL_INDEX_LAG"] = c.Replica.IndexLag.String() // the fetch waits for the lag emulated
		}
	}
	progress("building the functions and starting the platform (DynamoDB Local, fauxqs, the stack, %d timers)…", c.Timers)
	p, err := local.Up(ctx, local.Options{
		Template: c.Template, Manifest: manifest, Stack: "sundial-chaos", SourceDir: c.SourceDir, Log: obs,
		FunctionOptions: local.FunctionOptions{Tick: c.Tick, Processes: true, BootstrapDir: filepath.Join(dir, "bin"),
			Chaos: c.Faults.String(), OnInvoke: kill.onInvoke, Settings: settings},
		AWSOptions: local.AWSOptions{Replica: replica},
		Params:     map[string]string{"ProcessorTimeoutSeconds": "60"},
	})
	if err != nil {
		return nil, err
	}
	defer p.Stop()
	// The async workers report as an application would, through the client package, signed
	// with the platform's administrator key (the identity the local endpoint grants the CLI,
	// tests and clients; on AWS an action would use its own role).
	clientLog, err := os.Create(filepath.Join(dir, "client.jsonl"))
	if err != nil {
		return nil, err
	}
	defer clientLog.Close()
	cl, err := client.New(ctx, p.AWS, "sundial-chaos", client.Output(slog.New(slog.NewJSONHandler(clientLog, nil)), clientLog))
	if err != nil {
		return nil, fmt.Errorf("the async actions' client: %w", err)
	}
	rec.SetClient(cl)
	initial, err := instances(ctx, p.App.Store)
	if err != nil {
		return nil, err
	}
	rep.Started = time.Now()
	kill.firstFreeze.Store(rep.Started.Add(c.Duration / 4).UnixNano())
	kill.start(p.Functions)
	progress("chaos for %s: faults %s, killing %.0f%% of processor invocations; index lag %s, stale reads %s", c.Duration, c.Faults, 100*c.KillRate,
		c.Replica.IndexLag, c.Replica.StaleReads)
	chaosPhase(ctx, c, kill, progress, rec)
	kill.stop()
	rep.ChaosEnd = time.Now()

	progress("chaos over; waiting (at most %s) until every firing due before it has been claimed…", c.CatchUp)
	if caughtUp(ctx, p.App.Store, rep.ChaosEnd, c.CatchUp) {
		rep.CaughtUp = time.Now()
	}
	// From here async starts are left to recovery; the workers going report (or go silent
	// and report late) before the log is read, so that nothing writes after it.
	rec.Quiesce()
	progress("waiting for %d async workers to report…", rec.AsyncPending())
	for deadline := time.Now().Add(90 * time.Second); rec.AsyncPending() > 0 && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
	}
	asyncLeft := rec.AsyncPending()
	progress("stopping the platform (in-flight executions finish first)…")
	for deadline := time.Now().Add(30 * time.Second); rec.InFlight() > 0 && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
	}
	// The log comes from the timers table's stream: stop the schedules and queues, let the
	// invocations in progress end (a recovery sweep still writing), then wait until the log
	// writer has delivered every record written (it retries through the chaos), so that the
	// log is complete.
	progress("stopping the schedules and queues; waiting until the log writer has read the timers table's stream to its end…")
	drainCtx, cancel := context.WithTimeout(ctx, c.CatchUp)
	drainErr := p.Quiesce(drainCtx)
	cancel()
	for _, fn := range p.Functions {
		st := fn.Stats()
		rep.Processes.ColdStarts += st.ColdStarts
		rep.Processes.Exits += st.Exits
		rep.Processes.Timeouts += st.Timeouts
	}
	if err := p.StopFunctions(); err != nil {
		return nil, fmt.Errorf("stop the functions: %w", err)
	}
	rep.Streams = p.Streams()
	// Batches the log writer gave up (its retry limit, through kills and faults) are in its
	// failure queue, not the log: the operator's redrive writes them, as LogWriterFailed asks.
	rd, err := redrive.New(p.AWS, p.App.Store, p.Outputs.Values["LogWriterFailureQueueUrl"], nil).Run(ctx, 10000)
	rep.Redriven = rd
	if err != nil {
		return nil, fmt.Errorf("redrive the log writer's failure queue: %w", err)
	}
	ev, err := evidence(ctx, p.App.Store, rec, obs.snapshot(), c)
	if err != nil {
		return nil, err
	}
	ev.ChaosEnd, ev.Initial = rep.ChaosEnd, initial
	rep.Result = Check(ev)
	rep.IAM = p.IAM()
	for _, d := range rep.IAM.Denied {
		rep.Result.problem("IAM: %s (AWS would answer AccessDenied)", d)
	}
	if asyncLeft > 0 {
		rep.Result.problem("%d async workers had not reported 90 s after the run caught up", asyncLeft)
	}
	if rep.CaughtUp.IsZero() {
		rep.Result.problem("the run did not catch up within %s after the chaos ended", c.CatchUp)
	}
	for _, k := range rd.Kept {
		rep.Result.problem("log writer batch given up and not redriven (shard %s, %s..%s): %s", k.Shard, k.Start, k.End, k.Reason)
	}
	if drainErr != nil {
		rep.Result.problem("the log writer did not catch up with the timers table's stream: %v", drainErr)
	}
	rep.count(kill, obs.snapshot())
	if replica != nil {
		rep.Replica = replica.Stats()
	}
	return rep, nil
}

// evidence reads what the run left: the timers' final state and log, the action server's
// records, and from the functions' logs the clock offsets and the discarded results.
func evidence(ctx context.Context, s *dynamo.Store, rec *Recorder, seen snapshot, c Config) (Evidence, error) {
	final, err := instances(ctx, s)
	if err != nil {
		return Evidence{}, err
	}
	logs := map[timer.Key][]timer.Execution{}
	for k := range final {
		if logs[k], err = s.Logs(ctx, dynamo.LogQuery{Key: &k, Before: time.Now().Add(24 * time.Hour), Limit: 1 << 30}); err != nil {
			return Evidence{}, err
		}
	}
	offset := func(node string) time.Duration {
		if d, ok := seen.offsets[node]; ok {
			return d
		}
		return chaos.Skew(c.Seed, node, c.Faults.ClockSkew) // a process killed before it logged
	}
	return Evidence{Final: final, Logs: logs, Calls: rec.Calls(), Offset: offset, Zombies: seen.zombies}, nil
}

// count fills in what the chaos did and what the functions logged about it.
func (rep *Report) count(kill *killer, seen snapshot) {
	rep.Kills.Processor, rep.Kills.Fetch, rep.Kills.Recovery = kill.killsOf(local.FnProcessor), kill.killsOf(local.FnFetch), kill.killsOf(local.FnRecovery)
	rep.Kills.LogWriter = kill.killsOf(local.FnLogWriter)
	rep.Kills.Idle = kill.idle.Load()
	rep.Freezes.Events, rep.Freezes.Processes = kill.freezes.Load(), kill.frozen.Load()
	rep.Faults = seen.faults
	rep.ClaimsLost, rep.Requeued = seen.msgs[msgClaimLost], seen.msgs[msgRequeued]
	rep.RecoveriesRefused = seen.msgs[msgLeaseLive]
	rep.NotRecorded, rep.FailedBatches = seen.msgs[msgNotRecorded], seen.msgs[msgBatchFailed]
	for _, d := range seen.offsets {
		rep.Offsets = append(rep.Offsets, d)
	}
}

// chaosPhase lets the run go on for its duration, killing idle instances now and then.
func chaosPhase(ctx context.Context, c Config, kill *killer, progress func(string, ...any), rec *Recorder) {
	end := time.After(c.Duration)
	status := time.NewTicker(30 * time.Second)
	defer status.Stop()
	var idle <-chan time.Time
	if c.IdleKillEvery > 0 {
		t := time.NewTicker(c.IdleKillEvery)
		defer t.Stop()
		idle = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-end:
			return
		case <-idle:
			kill.killIdle()
		case <-status.C:
			progress("… %d action calls, %d invocations killed", len(rec.Calls()), kill.invocations.Load())
		}
	}
}

// caughtUp waits until no idle instance has a next run due before `since` and every
// execution claimed before it has ended, or until `limit` passes.
func caughtUp(ctx context.Context, s *dynamo.Store, since time.Time, limit time.Duration) bool {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		ins, err := s.List(ctx)
		if err == nil && settled(ins, since) {
			return true
		}
		time.Sleep(500 * time.Millisecond)
	}
	return false
}

func settled(ins []timer.Instance, since time.Time) bool {
	for _, in := range ins {
		if !in.Running() && !in.NextRun.IsZero() && in.NextRun.Before(since) {
			return false
		}
		// An execution claimed before the chaos ended may belong to a killed processor: wait
		// for recovery to end it (its lease expires), so that every kill is seen through.
		if in.Running() && in.IsRunningSince.Before(since.Add(3*time.Second)) {
			return false
		}
	}
	return true
}

func instances(ctx context.Context, s *dynamo.Store) (map[timer.Key]timer.Instance, error) {
	ins, err := s.List(ctx)
	if err != nil {
		return nil, err
	}
	out := map[timer.Key]timer.Instance{}
	for _, in := range ins {
		out[in.Key] = in
	}
	if len(out) == 0 {
		return nil, errors.New("chaos: no timers in the table")
	}
	return out, nil
}
