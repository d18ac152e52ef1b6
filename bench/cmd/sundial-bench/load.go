package main

import (
	"context"
	"fmt"
	"time"

	"github.com/sundialhq/sundial/internal/action"
	"github.com/sundialhq/sundial/internal/cost"
	"github.com/sundialhq/sundial/internal/manifest"
	"github.com/sundialhq/sundial/internal/metrics"
)

// loadSpec is one run of the platform with many timers.
type loadSpec struct {
	Name   string `json:"name"`
	Label  string `json:"label"`
	Timers int    `json:"timers"`
	// Schedule of timer i; Period is how often each timer is due.
	Schedule func(i int) string `json:"-"`
	Period   time.Duration      `json:"-"`
	// Warmup is left out of the measurement (the first backlog builds up); Window is measured.
	Warmup time.Duration `json:"-"`
	Window time.Duration `json:"-"`
	// Params are the stack's template parameters (e.g. P3Concurrency).
	Params map[string]string `json:"params,omitempty"`
}

// loadResult is what one run measured. Everything per firing or per second refers to the
// executions that started (action called) within the window.
type loadResult struct {
	Spec          loadSpec `json:"spec"`
	WarmupSeconds float64  `json:"warmupSeconds"`
	WindowSeconds float64  `json:"windowSeconds"`
	// Lateness (action start − scheduled instant) of the executions in the window, seconds.
	Lateness dist `json:"lateness"`
	// Delivery is when the processor received each firing, relative to its due instant
	// (negative: early, held until due): the queue's share of the lateness; the rest is the
	// claim and the wait for a free processor.
	Delivery dist `json:"delivery"`
	// Concurrency is each queue's processor concurrency in the run (the stack's event sources).
	Concurrency [4]int `json:"concurrency"`
	// Offered is the rate the schedules ask for; Sustained the executions per second achieved.
	Offered   float64 `json:"offeredFiringsPerSecond"`
	Sustained float64 `json:"sustainedFiringsPerSecond"`
	Saturated bool    `json:"saturated"`
	// Instants the schedules hold in the window, and the executions in the window as a
	// fraction of them (a late timer skips instants: its next run is computed from when it
	// finished, never replayed).
	ScheduledInWindow int64   `json:"scheduledInWindow"`
	DeliveredFraction float64 `json:"deliveredFraction"`
	Executions        int64   `json:"executions"` // actions started in the window
	// Recorded are the executions whose fenced finish and log entry were written in the
	// window: the denominator of the window's requests (a batch in flight at either edge of
	// the window has some of its writes outside, so per-firing counts carry an error of about
	// a batch per processor invocation in flight, over Recorded).
	Recorded   int64 `json:"recorded"`
	ClaimsLost int64 `json:"claimsLost"`
	Misfired   int64 `json:"misfired"`
	Failed     int64 `json:"failed"`
	// Requests in the window.
	Calls         metrics.Snapshot            `json:"-"`
	CallsByOp     map[string]int64            `json:"callsByOperation"`
	EmptyReceives int64                       `json:"emptyReceives"`
	Lambda        map[string]cost.Invocations `json:"lambda"`
	BatchSizes    dist                        `json:"recordsPerProcessorInvocation"`
	LogBytes      int64                       `json:"logBytes"`
	Items         cost.ItemSizes              `json:"itemBytes"`
	LoadAvgStart  string                      `json:"loadAvg1mAtWindowStart"`
	LoadAvg       string                      `json:"loadAvg1mAtWindowEnd"`
	// CPUSeconds is the CPU time each process of the benchmark's tree spent in the window, by
	// name: the benchmark itself (the functions, the endpoint, the clients), DynamoDB Local's
	// JVMs (java), fauxqs (node). Where the machine's time went (issue 37, item 2).
	CPUSeconds map[string]float64 `json:"cpuSecondsByProcess,omitempty"`

	// For the plots: every execution's start and lateness, and the window's bounds.
	Samples     []sample  `json:"-"`
	Start       time.Time `json:"-"`
	WindowStart time.Time `json:"-"`
	WindowEnd   time.Time `json:"-"`
}

// window returns the cost model's view of the run's window. Every timer of a run has the
// same period: the share of finishes that move the due-index key, and the time each
// instance's key spends in the past (recovery rereads it), follow from it and the tick
// (cost.MoveProbability).
func (r loadResult) window() cost.Window {
	move := cost.MoveProbability(r.Spec.Period, benchTick)
	return cost.Window{Firings: r.Recorded, Failed: r.Failed, Calls: r.Calls, EmptyReceives: r.EmptyReceives,
		IndexMoves: float64(r.Recorded) * move, StaleKeyMinutes: float64(r.Spec.Timers) * (1 - move) * r.WindowSeconds / 60,
		Lambda: r.Lambda, LogBytes: r.LogBytes, Items: r.Items, MemoryMB: lambdaMemoryMB, LogRetentionDays: logRetentionDays}
}

// publishEstimate is how long a publish of n timers is expected to take with the platform
// idle: 1,000 took 14-16 s on the quiet machine, 1,500 took 26-38 s loaded (2026-11-28). A
// publish that ends later lets its first timers fire while it runs (logged).
func publishEstimate(n int) time.Duration {
	return 5*time.Second + time.Duration(n)*20*time.Millisecond
}

// startRamp is how long a load of n timers takes to start, one after the other (runLoad):
// about as long as their publish took when they fired from it (14 s for 1,000).
func startRamp(n int) time.Duration { return 5*time.Second + time.Duration(n)*10*time.Millisecond }

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// benchTick is the fetch tick of the load runs' stacks (runLoad).
const benchTick = time.Minute

// template.yaml: Globals.Function.MemorySize and the LogRetentionDays default.
const (
	lambdaMemoryMB   = 128
	logRetentionDays = 30
)

// runLoad deploys a stack, syncs the timers, runs the platform for warmup + window and
// measures the window.
func (e *env) runLoad(ctx context.Context, s loadSpec) (loadResult, error) {
	d, err := e.deploy(ctx, "bench-"+s.Name, benchTick, s.Params)
	if err != nil {
		return loadResult{}, err
	}
	adm, err := e.adminOf(d)
	if err != nil {
		return loadResult{}, err
	}
	// The platform runs while the timers are published, as on AWS, where the functions run
	// before and during a publish: started after it, the platform would begin with every
	// instant that fell due during the publish (12 s for 1,000 timers here) overdue, and the
	// measured window would hold that backlog's draining, which no deployed stack has. The
	// timers start (manifest `start`) once the publish is expected to be over: a publish
	// while they fire competes with them, and above the engines' ceiling it crawled (1,500
	// timers not published after 17 minutes at 300/s, 2026-11-28; activating them after an
	// inactive publish crawled the same way). Their starts ramp (startRamp), as they did
	// while they were published: all starting at once, 1,000 timers at 200/s woke 100
	// processor instances in the same second, and the cold starts' backlog (p99 5.1 s)
	// outlived the warm-up at a rate so close to the ceiling. The warm-up counts from the
	// ramp's end.
	p, err := e.startPlatform(d)
	if err != nil {
		return loadResult{}, err
	}
	first := time.Now().Add(publishEstimate(s.Timers)).Truncate(time.Second)
	m := manifest.Manifest{}
	for i := range s.Timers {
		start := first.Add(startRamp(s.Timers) * time.Duration(i) / time.Duration(s.Timers))
		m.Timers = append(m.Timers, manifest.Timer{Name: fmt.Sprintf("L%04d", i), Schedule: s.Schedule(i), Start: &manifest.Time{Time: start},
			Action: action.Spec{HTTP: &action.HTTPSpec{URL: "http://127.0.0.1:9/bench"}}})
	}
	t := time.Now()
	if _, err := adm.Sync(ctx, m); err != nil {
		p.stop()
		return loadResult{}, fmt.Errorf("sync %d timers: %w", s.Timers, err)
	}
	e.log.Info("timers created", "phase", s.Name, "timers", s.Timers, "took", time.Since(t).Round(time.Millisecond),
		"first_firings", first.Format(time.TimeOnly), "early_by", time.Until(first).Round(time.Millisecond))
	if time.Now().After(first) {
		e.log.Warn("the publish ended after the timers' start: the first timers fired while it ran", "phase", s.Name, "late_by", time.Since(first).Round(time.Millisecond))
	}
	r := loadResult{Spec: s, Start: latest(time.Now(), first.Add(startRamp(s.Timers))), Concurrency: d.concurrency}
	r.WindowStart = r.Start.Add(s.Warmup)
	r.WindowEnd = r.WindowStart.Add(s.Window)
	if err := sleepUntil(ctx, r.WindowStart); err != nil {
		p.stop()
		return loadResult{}, err
	}
	before, emptyBefore, logsBefore := e.counter.Snapshot(), p.sqs.empty.Load(), p.logs.n.Load()
	st0 := statsOf(p)
	cpu0 := cpuNow()
	r.LoadAvgStart = loadAvg()
	e.log.Info("measuring", "phase", s.Name, "window", s.Window, "load_avg", r.LoadAvgStart)
	if err := sleepUntil(ctx, r.WindowEnd); err != nil {
		p.stop()
		return loadResult{}, err
	}
	r.Calls = e.counter.Snapshot().Sub(before)
	r.EmptyReceives = p.sqs.empty.Load() - emptyBefore
	r.LogBytes = p.logs.n.Load() - logsBefore
	st1 := statsOf(p)
	r.CPUSeconds = cpuNow().secondsSince(cpu0)
	r.LoadAvg = loadAvg()
	p.stop()

	r.WarmupSeconds, r.WindowSeconds = s.Warmup.Seconds(), s.Window.Seconds()
	r.ClaimsLost, r.Misfired, r.Failed = st1.claimsLost-st0.claimsLost, st1.misfired-st0.misfired, st1.failed-st0.failed
	r.Recorded = st1.executed - st0.executed
	r.Samples = p.actions.all()
	var lateness []float64
	for _, x := range r.Samples {
		if !x.At.Before(r.WindowStart) && x.At.Before(r.WindowEnd) {
			lateness = append(lateness, x.At.Sub(x.ScheduledAt).Seconds())
		}
	}
	r.Executions = int64(len(lateness))
	r.Lateness = summarize(lateness)
	var delivery []float64
	for _, x := range p.deliveries.all() {
		if !x.At.Before(r.WindowStart) && x.At.Before(r.WindowEnd) {
			delivery = append(delivery, x.At.Sub(x.ScheduledAt).Seconds())
		}
	}
	r.Delivery = summarize(delivery)
	r.Offered = float64(s.Timers) / s.Period.Seconds()
	r.Sustained = float64(r.Executions) / s.Window.Seconds()
	r.Saturated = r.Offered > 1.1*r.Sustained
	r.ScheduledInWindow = int64(float64(s.Timers) * s.Window.Seconds() / s.Period.Seconds())
	if r.ScheduledInWindow > 0 {
		r.DeliveredFraction = min(1, float64(r.Executions)/float64(r.ScheduledInWindow))
	}
	var inv []invocation
	r.Lambda, inv = p.lambdaIn(r.WindowStart, r.WindowEnd)
	var sizes []float64
	for _, i := range inv {
		if i.Function == "processor" {
			sizes = append(sizes, float64(i.Records))
		}
	}
	r.BatchSizes = summarize(sizes)
	r.CallsByOp = map[string]int64{}
	for _, op := range r.Calls.Ops() {
		r.CallsByOp[op.String()] = r.Calls[op].Calls
	}
	if r.Items, err = e.itemSizes(ctx, d); err != nil {
		return loadResult{}, err
	}
	e.log.Info("phase done", "phase", s.Name, "executions", r.Executions, "sustained_per_s", fmt.Sprintf("%.1f", r.Sustained),
		"lateness_p50_s", fmt.Sprintf("%.3f", r.Lateness.P50), "lateness_p99_s", fmt.Sprintf("%.3f", r.Lateness.P99))
	return r, nil
}

type procStats struct{ executed, claimsLost, misfired, failed int64 }

func statsOf(p *platform) procStats {
	s := p.app.Processor.Stats()
	return procStats{executed: s.Executed.Load(), claimsLost: s.ClaimsLost.Load(), misfired: s.Misfired.Load(), failed: s.Failed.Load()}
}

func sleepUntil(ctx context.Context, t time.Time) error {
	select {
	case <-time.After(time.Until(t)):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// logBatch is how many executions the log writer's invocations held on average in the
// window (1 when it is not known).
func (r loadResult) logBatch() float64 {
	n := r.Lambda["logwriter"].Count
	if n <= 0 || r.Recorded <= 0 {
		return 1
	}
	return float64(r.Recorded) / float64(n)
}
