// Command orders-demo runs one of the order-push design note's scenarios on the local platform
// (`make run-orders`, SCENARIO=1..5): the emulator and the stack with its examples, the timers
// of examples/orders.yaml with the chosen scenario's active, the example Lambda action served
// as Lambda would serve it, a local third party to push to, and orders to push. It prints
// each execution and, every few seconds, where the orders stand. Ctrl-C stops.
//
// Make the third party fail from another terminal (its address is --third-party, make
// run-orders THIRD_PARTY=…; 127.0.0.1:9100 by default):
//
//	curl -X POST 'http://127.0.0.1:9100/control?fail=all'        # every push fails
//	curl -X POST 'http://127.0.0.1:9100/control?order=7&times=2' # order 7's next two pushes fail
//	curl -X POST 'http://127.0.0.1:9100/control?rate=0.3'        # 30% fail at random
//	curl -X POST 'http://127.0.0.1:9100/control?fail=none'       # recover
//	curl http://127.0.0.1:9100/stats
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/sundialhq/sundial/examples/orders"
	"github.com/sundialhq/sundial/infra/local"
	"github.com/sundialhq/sundial/internal/manifest"
	"github.com/sundialhq/sundial/internal/timer"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "orders-demo:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("orders-demo", flag.ContinueOnError)
	scenario := fs.Int("scenario", 5, "the order-push design note's scenario to run, 1..5")
	manifestPath := fs.String("manifest", "examples/orders.yaml", "the example manifest")
	completed := fs.Int("orders", 30, "completed orders to push")
	paid := fs.Int("paid", 5, "orders that are only paid (never pushed)")
	tick := fs.Duration("tick", 10*time.Second, "fetch and recovery interval")
	logPath := fs.String("log", ".sundial/orders-demo.log", "JSON log of every function")
	every := fs.Duration("status", 5*time.Second, "how often to print where the orders stand")
	spread := fs.Duration("spread", 2*time.Minute, "the completed orders fall due one after another over this time (0: all at once), so the third party's failure controls have pushes left to act on")
	thirdParty := fs.String("third-party", "127.0.0.1:9100", "serve the local third party on this address: the manifest's ${SUNDIAL_ACTIONS}, which its timers push to")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := os.Setenv(manifest.ActionsVar, *thirdParty); err != nil {
		return err
	}
	if *scenario < 1 || *scenario > 5 {
		return fmt.Errorf("--scenario %d: want 1..5", *scenario)
	}
	if *spread < 0 || *spread > 24*time.Hour {
		return fmt.Errorf("--spread %s: want 0..24h", *spread)
	}
	if *completed < 0 || *paid < 0 || *completed+*paid > 100_000 {
		return errors.New("--orders and --paid: want counts >= 0, at most 100000 in all")
	}
	m, err := manifest.Load(*manifestPath)
	if err != nil {
		return err
	}
	entry := fmt.Sprintf("PushOrders%02d", *scenario)
	var chosen *manifest.Timer
	for i := range m.Timers {
		if m.Timers[i].Name == entry {
			chosen = &m.Timers[i]
		}
	}
	if chosen == nil {
		return fmt.Errorf("%s has no timer %s", *manifestPath, entry)
	}
	endpoint, err := url.Parse(chosen.Properties[orders.PropEndpoint])
	if err != nil || endpoint.Host == "" {
		return fmt.Errorf("%s: %s has no usable endpoint property", *manifestPath, entry)
	}

	tp := orders.NewThirdParty(uint64(time.Now().UnixNano()))
	if _, err := tp.Start(endpoint.Host); err != nil {
		return fmt.Errorf("%w (the timers push to %s, from %s; move the third party with --third-party ADDR, or make run-orders THIRD_PARTY=127.0.0.1:9101)", err, endpoint, *manifestPath)
	}
	defer tp.Close()
	fmt.Fprintf(stdout, "third party  %s (orders to %s)\n", tp.URL(), tp.PushURL())

	if err := os.MkdirAll(filepath.Dir(*logPath), 0o755); err != nil {
		return err
	}
	logFile, err := os.Create(*logPath)
	if err != nil {
		return err
	}
	defer logFile.Close()
	// It records its endpoint in .sundial/local.json: it owns .sundial while it runs, as
	// sundial up does (a running make run refuses it, and it refuses a later make run).
	lock, err := local.LockStateDir(local.DefaultStateDir)
	if err != nil {
		return err
	}
	defer lock.Release()
	fmt.Fprintln(stdout, "starting the local platform with the examples…")
	p, err := local.Up(ctx, local.Options{Template: "template.yaml", Manifest: *manifestPath, FunctionOptions: local.FunctionOptions{Tick: *tick},
		Examples: true, Out: stdout, Log: logFile, StateFile: local.DefaultStateFile, ActionsAddr: endpoint.Host})
	if err != nil {
		return err
	}
	stopped := false
	defer func() {
		if !stopped {
			_ = p.Stop()
		}
	}()
	store := orders.NewStore(dynamodb.NewFromConfig(p.AWS), p.Outputs.Values[orders.TableOutput])
	fmt.Fprintf(stdout, "endpoint     %s\norders table %s\naction       lambda %s on %s\nlogs         %s\n",
		p.Endpoint, store.Table, orders.FunctionName, p.LambdaEndpoint(), *logPath)

	// Only the chosen scenario runs: the timers share the table (see examples/orders.yaml).
	// The orders are written first, so that its first run finds them.
	var mine []string
	for _, t := range m.Timers {
		for _, d := range t.Expand(nil, manifest.Defaults{}) {
			if t.Name == entry {
				mine = append(mine, d.Key.Timer)
			} else if _, err := p.App.Admin.SetActive(ctx, d.Key, false); err != nil {
				return err
			}
		}
	}
	if err := store.PutAll(ctx, seedOrders(time.Now(), *completed, *paid, *spread)); err != nil {
		return err
	}
	for _, name := range mine {
		if _, err := p.App.Admin.SetActive(ctx, timer.Key{Timer: name}, true); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "scenario %d   %s (%s): %d completed orders to push, due over %s, %d paid ones to leave alone\n",
		*scenario, entry, strings.Join(mine, ", "), *completed, *spread, *paid)
	fmt.Fprintf(stdout, "fail pushes  curl -X POST '%[1]s/control?fail=all'  |  '%[1]s/control?order=7&times=2'  |  '%[1]s/control?rate=0.3'  |  '%[1]s/control?fail=none'\n", tp.URL())
	fmt.Fprintf(stdout, "watch        curl %s/stats   ./bin/sundial timers list   ./bin/sundial logs   (Ctrl-C stops)\n", tp.URL())

	t := time.NewTicker(*every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			fmt.Fprintln(stdout, "stopping: in-flight executions finish first…")
			stopped = true
			return p.Stop()
		case <-t.C:
			status(ctx, stdout, store, tp)
		}
	}
}

// seedOrders makes orders 1..completed (completed) and the next paid ones (paid only). The
// completed ones fall due one after another over spread from now (the first at once): pushed
// all on the first run, they would leave the third party's failure controls nothing to act on.
func seedOrders(now time.Time, completed, paid int, spread time.Duration) []orders.Order {
	all := make([]orders.Order, 0, completed+paid)
	for i := range completed + paid {
		due := now
		if i < completed && completed > 0 {
			due = now.Add(spread * time.Duration(i) / time.Duration(completed))
		}
		o := orders.Order{ID: int64(i + 1), Desc: fmt.Sprintf("demo order %d", i+1), State: orders.StateCompleted,
			ScheduledPushTime: orders.Ms(due), CreateTime: orders.Ms(now)}
		if i >= completed {
			o.State = orders.StatePaid
		}
		all = append(all, o)
	}
	return all
}

func status(ctx context.Context, w io.Writer, s *orders.Store, tp *orders.ThirdParty) {
	all, err := s.All(ctx)
	if err != nil {
		fmt.Fprintln(w, "orders: ", err)
		return
	}
	var pushed, waiting, delayed, failed int
	for _, o := range all {
		switch {
		case o.PushState == orders.PushDone:
			pushed++
		case o.PushState == orders.PushFailed:
			failed++
		case o.Pushable():
			waiting++
			if o.RetryCount > 0 {
				delayed++
			}
		}
	}
	st := tp.Stats()
	fmt.Fprintf(w, "orders       pushed %d, waiting %d (%d after a failed push), failed %d | third party: %d requests, %d accepted, %d refused, %d duplicates\n",
		pushed, waiting, delayed, failed, st.Requests, st.Accepted, st.Refused, st.Duplicates)
}
