// Command sundial-chaos runs the chaos test (infra/chaosrun) and prints its table; it exits 1
// if an invariant was violated, 2 on bad flags, 3 if the run itself could not be done.
//
//	go run ./cmd/sundial-chaos --duration 5m --timers 30 --seed 42
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/sundialhq/sundial/infra/chaosrun"
	"github.com/sundialhq/sundial/internal/chaos"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sundial-chaos", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := chaosrun.Config{Progress: stderr}
	fs.IntVar(&c.Timers, "timers", 30, "timers on second-level schedules")
	fs.IntVar(&c.AsyncTimers, "async-timers", 6, "async timers besides them, whose workers heartbeat and report through the client (0: 6; negative: none)")
	fs.DurationVar(&c.Duration, "duration", 5*time.Minute, "length of the chaos phase")
	faults := fs.String("faults", chaosrun.DefaultFaults.String(), "faults injected into the function processes ("+chaos.EnvVar+" syntax; its seed is --seed)")
	fs.Float64Var(&c.KillRate, "kill-rate", 0.15, "share of processor invocations killed mid-invocation")
	fs.DurationVar(&c.IdleKillEvery, "idle-kill-every", 7*time.Second, "kill an idle processor instance this often (0: never)")
	fs.Float64Var(&c.FreezeRate, "freeze-rate", 0.005, "chance that an action's start freezes every busy processor for longer than a lease (negative: never)")
	c.Replica = chaosrun.DefaultReplica
	fs.DurationVar(&c.Replica.IndexLag, "index-lag", c.Replica.IndexLag, "the due index (any GSI) shows a change up to this late (0: never)")
	fs.Float64Var(&c.Replica.IndexLagRate, "index-lag-rate", c.Replica.IndexLagRate, "share of index changes that lag")
	fs.DurationVar(&c.Replica.StaleReads, "stale-reads", c.Replica.StaleReads, "an eventually consistent item read answers the item as it was this long ago (0: never)")
	fs.Float64Var(&c.Replica.StaleReadRate, "stale-read-rate", c.Replica.StaleReadRate, "share of eventually consistent item reads answered stale")
	fs.Uint64Var(&c.Seed, "seed", 42, "seed of every random draw")
	fs.DurationVar(&c.CatchUp, "catch-up", 90*time.Second, "longest wait, after the chaos, for every due firing to be claimed")
	fs.StringVar(&c.Template, "template", "template.yaml", "SAM template of the stack")
	fs.StringVar(&c.WorkDir, "dir", "", "where to keep the manifest, bootstraps and log (default: a temporary directory)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	var err error
	if c.Faults, err = chaos.Parse(*faults); err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	if err := c.Replica.Validate(); err != nil {
		fmt.Fprintln(stderr, "sundial-chaos: --index-lag, --stale-reads:", err)
		return 2
	}
	rep, err := chaosrun.Run(ctx, c)
	if err != nil {
		fmt.Fprintln(stderr, "chaos run:", err)
		return 3
	}
	rep.Print(stdout)
	if !rep.Result.OK() {
		return 1
	}
	return 0
}
