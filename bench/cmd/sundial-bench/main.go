// Command sundial-bench measures Sundial on the local emulator and writes a report:
// precision under load, AWS requests and dollars per firing, throughput against the
// emulator's own ceiling, the engine's throughput without I/O, the idle cost of the periodic
// functions, and the processor's peak memory. `make bench` runs it; see README "Benchmarks".
//
// Everything is measured in one run on one emulator, and compared within the run: the
// machine is small and shared, so absolute rates are noisy and the report gives ratios and
// distributions.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/sundialhq/sundial/infra/emulator"
	"github.com/sundialhq/sundial/internal/timer"
)

// smallCeilingWorkers: batches in flight in the small-queue ceiling (the P3 default).
const smallCeilingWorkers = 2

type options struct {
	out, template, goBench   string
	timers                   int
	concurrency              int
	only                     string
	warmup, window           time.Duration
	sweepWindow, sweepWarmup time.Duration
	sweep                    sweepPlan
	ceilingEach              time.Duration
	smallCeilingEach         time.Duration
	ceilingWorkers           []int
	idleLarge                int
	memoryBatches            int
	engineTimers             int
	engineRounds             int
	emulatorLog              bool
	scale                    int
	operatorScale            int    // operator_scale: instances (0: scale)
	operatorSteps            string // operator_scale: the steps to run (operatorStepNames, comma-separated; "": all)
}

func main() {
	var o options
	flag.StringVar(&o.out, "out", "bench/out", "directory for report.md, results.json and the plots")
	flag.StringVar(&o.template, "template", "template.yaml", "the SAM template the stacks are created from")
	flag.StringVar(&o.goBench, "gobench", "", "output of `go test -bench` to quote in the report (optional)")
	flag.IntVar(&o.timers, "timers", 1000, "timers on `every 5s` in the precision run")
	flag.IntVar(&o.concurrency, "concurrency", 0, "the precision and throughput runs' P3Concurrency (the timers' queue): 0 sizes it for the load")
	flag.DurationVar(&o.warmup, "warmup", 40*time.Second, "precision run: time before the measured window (the backlog builds up)")
	flag.DurationVar(&o.window, "window", 3*time.Minute, "precision run: measured window")
	flag.DurationVar(&o.sweepWindow, "sweep-window", 40*time.Second, "measured window of each sweep run")
	flag.DurationVar(&o.sweepWarmup, "sweep-warmup", 20*time.Second, "warm-up of each sweep run")
	flag.DurationVar(&o.ceilingEach, "ceiling-each", 12*time.Second, "ceiling: duration of each concurrency level")
	flag.DurationVar(&o.smallCeilingEach, "small-ceiling", 8*time.Second, "duration of the small-queue ceiling")
	flag.IntVar(&o.idleLarge, "idle-timers", 10_000, "idle cost: the large number of idle timers")
	flag.IntVar(&o.memoryBatches, "memory-batches", 40, "memory: batches of ten the processor handles")
	flag.IntVar(&o.engineTimers, "engine-timers", 1000, "engine-only: timers")
	flag.IntVar(&o.engineRounds, "engine-rounds", 20, "engine-only: rounds of all timers")
	flag.BoolVar(&o.emulatorLog, "emulator-log", false, "write moto_server's output to OUT/moto.log")
	flag.DurationVar(&o.sweep.Budget, "sweep-budget", 9*time.Minute, "the sweep's time bound: no step starts that would end after it")
	flag.IntVar(&o.sweep.Max, "sweep-max", 1000, "the sweep's highest rate (firings/s)")
	deadline := flag.Duration("deadline", 40*time.Minute, "give up (and stop the emulator) after this long")
	flag.IntVar(&o.scale, "scale", 50_000, "scale phases: firings in the fetch window, overdue instances for recovery, timers published")
	flag.IntVar(&o.operatorScale, "operator-scale", 0, "operator_scale: instances (50 multi-tenant timers × N/50 tenants); 0: -scale")
	flag.StringVar(&o.operatorSteps, "operator-steps", "", "operator_scale: run only these steps, comma-separated ("+strings.Join(operatorStepNames, ", ")+"); empty: all")
	flag.StringVar(&o.only, "only", "", "run only this phase (precision, spread (one sweep step at -timers/5 a second), endpoint, "+strings.Join(scalePhases, ", ")+", "+phaseOperatorScale+" (-scale instances)), for trying changes out; no report")
	cpuProfile := flag.String("cpuprofile", "", "write this process's CPU profile (the local endpoint, the functions run in process, the SDK) to the file")
	quick := flag.Bool("quick", false, "a small, fast run for trying the benchmark out (not the issue's sizes)")
	flag.Parse()
	o.ceilingWorkers = []int{1, 2, 4, 8}
	o.sweep.First, o.sweep.Step = []int{100, 200, 300}, 50
	if *quick {
		o.timers, o.warmup, o.window, o.sweepWindow, o.sweepWarmup = 100, 15*time.Second, 30*time.Second, 15*time.Second, 10*time.Second
		o.sweep.First, o.sweep.Step, o.sweep.Max, o.sweep.Budget = []int{20, 40}, 20, 60, 2*time.Minute
		o.timers = 100
		o.ceilingEach, o.smallCeilingEach, o.idleLarge, o.memoryBatches, o.engineRounds = 4*time.Second, 4*time.Second, 1000, 5, 5
		o.scale = 5_000
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if os.Getenv("GOGC") == "" {
		// This process is the local AWS endpoint and every function at once: a fifth of its
		// CPU went to the collector at the default, CPU the engines beside it then lacked
		// (on AWS each function is its own process). Memory is plentiful here.
		debug.SetGCPercent(400)
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			log.Error("cpu profile", "error", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *deadline)
	defer cancel()
	if err := run(ctx, o, log); err != nil {
		log.Error("benchmark failed", "error", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options, log *slog.Logger) (err error) {
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	started := time.Now()
	res := &results{Date: started.UTC().Format(time.RFC3339), Machine: machine(), Options: o.describe()}

	if o.only == "endpoint" {
		e, err := startEnv(ctx, o.template, nil, log)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, e.stop()) }()
		c, err := e.measureEndpointCost(ctx, o.timers, o.ceilingWorkers[len(o.ceilingWorkers)-1], 3, o.ceilingEach*2/3)
		if err != nil {
			return err
		}
		fmt.Printf("endpoint: %d batches in flight, %d rounds: via the endpoint %.1f firings/s, direct %.1f firings/s, ratio %.2f\n",
			c.Workers, c.Rounds, c.ViaEndpoint, c.Direct, c.Ratio)
		return nil
	}
	if o.only == "precision" || o.only == "spread" {
		e, err := startEnv(ctx, o.template, nil, log)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, e.stop()) }()
		spec := loadSpec{Name: "precision", Timers: o.timers, Period: 5 * time.Second, Params: o.params(o.timers),
			Schedule: func(int) string { return "every 5s" }, Warmup: o.warmup, Window: o.window}
		if o.only == "spread" { // one step of the sweep, at -timers/5 firings a second
			spec.Name, spec.Schedule = "spread", func(i int) string { return fmt.Sprintf("%d/5 * * * * ?", i%5) }
		}
		r, err := e.runLoad(ctx, spec)
		if err != nil {
			return err
		}
		fmt.Printf("%s: %d timers every 5s, %d executions, %.1f/s, lateness p50 %.3f s p99 %.3f s max %.3f s\n",
			spec.Name, o.timers, r.Recorded, float64(r.Recorded)/r.WindowSeconds, r.Lateness.P50, r.Lateness.P99, r.Lateness.Max)
		fmt.Printf("  delivered to the processor: p50 %+.3f s p99 %+.3f s (relative to due)\n", r.Delivery.P50, r.Delivery.P99)
		if inv := r.Lambda["processor"]; inv.Count > 0 {
			fmt.Printf("  processor: %d invocations, %.1f records each, %.3f billed s per firing\n", inv.Count, r.BatchSizes.Mean, float64(inv.BilledMs)/1000/float64(max(r.Recorded, 1)))
		}
		for _, name := range slices.Sorted(maps.Keys(r.CPUSeconds)) {
			fmt.Printf("  CPU %-32s %8.1f s (%.2f cores)\n", name, r.CPUSeconds[name], r.CPUSeconds[name]/r.WindowSeconds)
		}
		for _, op := range r.Calls.Ops() {
			st := r.Calls[op]
			fmt.Printf("  %-36s %8d calls %6.3f/firing  %6.2f ms avg  WU %.2f/firing RU %.2f/firing\n", op, st.Calls,
				float64(st.Calls)/float64(max(r.Recorded, 1)), float64(st.Time.Microseconds())/1000/float64(max(st.Calls, 1)),
				st.WriteUnits/float64(max(r.Recorded, 1)), st.ReadUnits/float64(max(r.Recorded, 1)))
		}
		return nil
	}
	steps, err := parseOperatorSteps(o.operatorSteps)
	if err != nil {
		return err
	}
	if o.only == phaseOperatorScale {
		bins, err := operatorBootstraps(ctx, o.out)
		if err != nil {
			return err
		}
		e, err := startEnv(ctx, o.template, nil, log)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, e.stop()) }()
		r, err := e.operatorScale(ctx, o.out, bins, o.operatorInstances(), steps)
		b, merr := json.MarshalIndent(r, "", "  ")
		if merr != nil {
			return errors.Join(err, merr)
		}
		fmt.Printf("%s: %s\n%s\n", o.only, b, r.summary())
		return err
	}
	if slices.Contains(scalePhases, o.only) {
		bins, err := scaleBootstraps(ctx, o.out)
		if err != nil {
			return err
		}
		e, err := startEnv(ctx, o.template, nil, log)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, e.stop()) }()
		r, err := e.scale(ctx, o.only, o.out, bins, o.scale)
		if err != nil {
			return err
		}
		b, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return err
		}
		fmt.Printf("%s: %s\n", o.only, b)
		return nil
	}
	log.Info("building the processor bootstrap")
	bootstrap, err := buildBootstrap(ctx, o.out)
	if err != nil {
		return err
	}
	scaleBins, err := scaleBootstraps(ctx, o.out)
	if err != nil {
		return err
	}
	log.Info("engine only", "timers", o.engineTimers, "rounds", o.engineRounds)
	for _, w := range []int{1, runtime.GOMAXPROCS(0)} {
		for range 3 {
			r, err := engineOnly(o.engineTimers, o.engineRounds, w)
			if err != nil {
				return err
			}
			res.Engine = append(res.Engine, r)
		}
	}

	var emuLog io.Writer
	if o.emulatorLog {
		f, err := os.Create(filepath.Join(o.out, "engines.log"))
		if err != nil {
			return err
		}
		defer f.Close()
		emuLog = f
	}
	// Every phase runs on engines of its own. DynamoDB Local slows down every write to a table
	// whose stream was created after many stream records were kept for other tables (measured:
	// a new table wrote 4x slower after 24,000 records elsewhere, and the precision run after
	// the ceiling's ~50,000 records collapsed to 10 firings/s; see docs/local.md). On AWS a
	// table's stream costs its neighbours nothing, so a phase must not inherit another's records.
	withEnv := func(phase string, fn func(e *env) error) (err error) {
		e, err := startEnv(ctx, o.template, emuLog, log)
		if err != nil {
			return fmt.Errorf("%s: %w", phase, err)
		}
		defer func() { err = errors.Join(err, e.stop()) }()
		res.DynamoDBPartitions = len(e.local.DynamoDBPartitions())
		return fn(e)
	}
	res.Machine.Emulator = "DynamoDB Local (" + emulator.DynamoDBLocalPackage + ") and " + emulator.FauxqsPackage

	// Two ceilings. The like-for-like one circulates as many firings as the precision run has
	// timers; the small one, on a stack of its own, sizes the lower-load run. The like-for-like
	// one runs again after the precision run, on fresh engines too, to show the machine did not
	// change in between.
	ceilingAt := func(tag string) (runs []ceilingRun, err error) {
		err = withEnv("ceiling "+tag, func(e *env) error {
			ceilingStack, err := e.deploy(ctx, "bench-ceiling", time.Minute, nil)
			if err != nil {
				return err
			}
			cb, err := e.newCeiling(ctx, ceilingStack, timer.DefaultPriority, o.timers)
			if err != nil {
				return err
			}
			for _, w := range o.ceilingWorkers {
				r, err := cb.run(ctx, w, o.ceilingEach)
				if err != nil {
					return err
				}
				log.Info("ceiling", "when", tag, "workers", w, "circulating", o.timers, "firings_per_s", fmt.Sprintf("%.1f", r.PerSecond), "load_avg", loadAvg())
				runs = append(runs, r)
			}
			if tag == "before" {
				res.Ceiling.ProbeLarge, err = cb.probe(ctx, 2)
			}
			return err
		})
		return runs, err
	}
	err = withEnv("small ceiling", func(e *env) error {
		smallStack, err := e.deploy(ctx, "bench-ceiling-small", time.Minute, nil)
		if err != nil {
			return err
		}
		small, err := e.newCeiling(ctx, smallStack, timer.DefaultPriority, 10*smallCeilingWorkers)
		if err != nil {
			return err
		}
		if res.Ceiling.Small, err = small.run(ctx, smallCeilingWorkers, o.smallCeilingEach); err != nil {
			return err
		}
		log.Info("ceiling", "workers", smallCeilingWorkers, "circulating", 10*smallCeilingWorkers, "firings_per_s", fmt.Sprintf("%.1f", res.Ceiling.Small.PerSecond))
		res.Ceiling.ProbeSmall, err = small.probe(ctx, 2)
		return err
	})
	if err != nil {
		return err
	}
	if res.Ceiling.Before, err = ceilingAt("before"); err != nil {
		return err
	}
	err = withEnv("endpoint cost", func(e *env) error {
		c, err := e.measureEndpointCost(ctx, o.timers, o.ceilingWorkers[len(o.ceilingWorkers)-1], 3, o.ceilingEach*2/3)
		res.Endpoint = &c
		return err
	})
	if err != nil {
		return err
	}

	log.Info("precision", "timers", o.timers, "schedule", "every 5s", "warmup", o.warmup, "window", o.window)
	err = withEnv("precision", func(e *env) error {
		precision, err := e.runLoad(ctx, loadSpec{Name: "precision", Timers: o.timers, Period: 5 * time.Second, Params: o.params(o.timers),
			Label:    fmt.Sprintf("%d timers on `every 5s` (the issue's load)", o.timers),
			Schedule: func(int) string { return "every 5s" }, Warmup: o.warmup, Window: o.window})
		res.Precision = &precision
		return err
	})
	if err != nil {
		return err
	}

	if res.Ceiling.After, err = ceilingAt("after"); err != nil {
		return err
	}
	res.Ceiling.summarize()

	// The sustained rate: timers every 5 s with their phases spread over the seconds, at
	// increasing rates, until a rate does not hold or the sweep's bound ends it (sweeper).
	sw := &sweeper{plan: o.sweep}
	sw.plan.Estimate = o.sweepWarmup + o.sweepWindow + 20*time.Second // engines, deploy and sync
	sweepStart := time.Now()
	for {
		rate, ok := sw.next(time.Since(sweepStart))
		if !ok {
			break
		}
		n := 5 * rate
		log.Info("sweep", "firings_per_s", rate, "timers", n)
		stepStart := time.Now()
		// A step is bounded (three times the longest step expected): one that overruns it
		// (a publish or a drain crawling above the ceiling) ends the sweep, not the benchmark.
		stepCtx, cancelStep := context.WithTimeout(ctx, 3*sw.estimate())
		err := withEnv(fmt.Sprintf("sweep %d/s", rate), func(e *env) error {
			l, err := e.runLoad(stepCtx, loadSpec{Name: fmt.Sprintf("spread-%d", rate), Timers: n, Period: 5 * time.Second, Params: o.params(n),
				Label:    fmt.Sprintf("%d timers every 5 s, phases spread (Quartz `k/5 * * * * ?`, k = i mod 5): %d due each second", n, rate),
				Schedule: func(i int) string { return fmt.Sprintf("%d/5 * * * * ?", i%5) }, Warmup: o.sweepWarmup, Window: o.sweepWindow})
			if err == nil {
				res.Sweep = append(res.Sweep, l)
			}
			return err
		})
		cancelStep()
		if err != nil && ctx.Err() == nil && stepCtx.Err() != nil {
			sw.overran(rate, time.Since(stepStart))
			log.Warn("sweep step cut by its bound", "firings_per_s", rate, "took", time.Since(stepStart).Round(time.Second), "error", err)
			break
		}
		if err != nil {
			return err
		}
		l := res.Sweep[len(res.Sweep)-1]
		sw.record(sweepStep{Offered: l.Offered, Sustained: l.Sustained, P99: l.Lateness.P99, Took: time.Since(stepStart)})
	}
	res.SweepStoppedBy, res.SweepLimitReached = sw.stop, sw.limit
	if i := sw.held(); i >= 0 {
		res.Throughput = &res.Sweep[i]
	}
	log.Info("sweep done", "stopped_by", sw.stop, "limit_reached", sw.limit, "took", time.Since(sweepStart).Round(time.Second))

	err = withEnv("idle and memory", func(e *env) error {
		for _, n := range []int{10, o.idleLarge} {
			r, err := e.idle(ctx, n, 3)
			if err != nil {
				return err
			}
			res.Idle = append(res.Idle, r)
		}
		mem, err := e.memory(ctx, o.out, bootstrap, o.memoryBatches)
		res.Memory = &mem
		return err
	})
	if err != nil {
		return err
	}

	// Scale: one invocation of the fetch, recovery and publish over o.scale firings or
	// instances each, on fresh engines.
	for _, phase := range scalePhases {
		log.Info("scale", "phase", phase, "of", o.scale)
		err := withEnv("scale "+phase, func(e *env) error {
			r, err := e.scale(ctx, phase, o.out, scaleBins, o.scale)
			res.setScale(phase, &r)
			return err
		})
		if err != nil {
			return err
		}
	}

	// The operator's side at the same size: the API function over o.scale instances.
	err = withEnv(phaseOperatorScale, func(e *env) error {
		bins, err := operatorBootstraps(ctx, o.out)
		if err != nil {
			return err
		}
		r, err := e.operatorScale(ctx, o.out, bins, o.operatorInstances(), steps)
		res.OperatorScale = &r
		return err
	})
	if err != nil {
		return err
	}

	res.finish(time.Since(started))
	if o.goBench != "" {
		if b, err := os.ReadFile(o.goBench); err == nil {
			res.GoBench = string(b)
		} else {
			log.Warn("no Go benchmark output to quote", "file", o.goBench, "error", err)
		}
	}
	if err := res.write(o.out); err != nil {
		return err
	}
	log.Info("report written", "dir", o.out, "took", time.Since(started).Round(time.Second))
	fmt.Println(res.summaryLines())
	return nil
}

// params are the stack parameters of a load of n timers on the P3 queue: its processor
// concurrency (the event source's maximum concurrency, P3Concurrency) is what a user with such
// a load would set — a batch of ten in flight per ten timers, enough to hold every firing of a
// second at once, or a second's firings while the previous ones finish — unless -concurrency
// sets it.
func (o options) params(n int) map[string]string {
	c := o.concurrency
	if c <= 0 {
		c = max(2, min(200, (n+9)/10))
	}
	return map[string]string{"P3Concurrency": fmt.Sprint(c)}
}

func (o options) describe() map[string]string {
	return map[string]string{
		"timers": fmt.Sprint(o.timers), "warmup": o.warmup.String(), "window": o.window.String(),
		"sweepWindow": o.sweepWindow.String(), "sweepRates": fmt.Sprintf("%s, then +%d/s up to %d/s", strings.Trim(fmt.Sprint(o.sweep.First), "[]"), o.sweep.Step, o.sweep.Max), "sweepBudget": o.sweep.Budget.String(), "ceilingEach": o.ceilingEach.String(),
		"ceilingWorkers": strings.Trim(fmt.Sprint(o.ceilingWorkers), "[]"), "idleTimers": fmt.Sprint(o.idleLarge),
		"memoryBatches": fmt.Sprint(o.memoryBatches), "scale": fmt.Sprint(o.scale), "engine": fmt.Sprintf("%d timers x %d rounds", o.engineTimers, o.engineRounds),
	}
}
