package alerts

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/sundialhq/sundial/internal/timer"
)

// History reads an instance's recent executions, newest first (dynamo.Store.Logs): the
// samples of runningOver's "Nx p95".
type History interface {
	Logs(ctx context.Context, q timer.LogQuery) ([]timer.Execution, error)
}

// p95Runs is how many of an instance's latest executions its recent p95 duration is taken
// over (the successful ones among them); p95MinRuns is how many successes make it known.
const (
	p95Runs    = 20
	p95MinRuns = 5
)

// p95Cache keeps each instance's recent p95 with the last run it was taken after, so that
// a run in flight is read once per warm sweeper, not once per sweep.
type p95Cache struct {
	mu sync.Mutex
	m  map[timer.Key]p95Entry
}

type p95Entry struct {
	after time.Time
	p95   time.Duration
}

// SweepDeadlines raises and resolves the deadline rules (timer.Deadlines: startBy, finishBy,
// runningOver) of watched, the instances with deadlines that recovery's sweep read from the
// due index (a run pending or in flight: engine.Recoverer.Deadlines), so that the rules cost
// no read of the instances of their own. Each alert is raised once while its rule holds and
// resolved once: the open alerts are read (one Query of their partition), and an open
// deadline alert of an instance not among watched (its run finished, it was deactivated,
// or the sweep was cut short) reads that instance and is resolved unless its rule still
// holds. A p95 runningOver rule reads the instance's recent log once per run (History).
func (a *Alerter) SweepDeadlines(ctx context.Context, watched []timer.Instance) error {
	now := a.Now()
	list, err := a.Store.Alerts(ctx, "")
	if err != nil {
		return err
	}
	b := &Batch{a: a, open: map[string]bool{}}
	var others []timer.Key
	seen := map[timer.Key]bool{}
	for _, in := range watched {
		seen[in.Key] = true
	}
	for _, al := range list {
		if !slices.Contains(timer.DeadlineRuleNames, al.Rule) {
			continue
		}
		b.open[openKey(al.Key, al.Rule)] = true
		if !seen[al.Key] {
			seen[al.Key] = true
			others = append(others, al.Key)
		}
	}
	var errs []error
	for _, in := range watched {
		errs = append(errs, a.deadlines(ctx, b, in, now, false))
	}
	for _, k := range others {
		in, err := a.get(ctx, k)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		errs = append(errs, a.deadlines(ctx, b, in, now, true))
	}
	if err := a.Events.Publish(ctx, b.Events); err != nil {
		return errors.Join(append(errs, err)...)
	}
	return errors.Join(append(errs, b.Finish(ctx))...)
}

// get reads an instance (strongly consistent); a gone one is a zero instance of k, whose
// alerts are resolved.
func (a *Alerter) get(ctx context.Context, k timer.Key) (timer.Instance, error) {
	in, err := a.Store.Get(ctx, k)
	if errors.Is(err, timer.ErrNotFound) {
		return timer.Instance{Key: k}, nil
	}
	return in, err
}

// deadlines raises the deadline rules that hold for in at now and resolves the open ones
// that do not. An instance the sweep read from the due index (an eventually consistent read,
// which may miss a start that just happened) is read again, strongly consistent, before an
// alert is raised for it (fresh: it was).
func (a *Alerter) deadlines(ctx context.Context, b *Batch, in timer.Instance, now time.Time, fresh bool) error {
	var p95 time.Duration
	if in.Deadlines.RunningOverP95 > 0 && in.Running() && in.DeadlinesMatter(now) {
		var err error
		if p95, err = a.recentP95(ctx, in); err != nil {
			a.Log.Error("alerts: runningOver: the recent p95 duration was not read; the rule waits for the next sweep",
				"app", in.AppName(), "timer", in.Timer, "tenant", in.Tenant, "error", err)
		}
	}
	breaches, err := in.DeadlineBreaches(now, p95)
	if err != nil {
		return fmt.Errorf("deadlines of %s: %w", in.Key, err)
	}
	if !fresh && slices.ContainsFunc(breaches, func(br timer.Breach) bool { return !b.open[openKey(in.Key, br.Rule)] }) {
		if in, err = a.get(ctx, in.Key); err != nil {
			return err
		}
		return a.deadlines(ctx, b, in, now, true)
	}
	var errs []error
	for _, rule := range timer.DeadlineRuleNames {
		i := slices.IndexFunc(breaches, func(br timer.Breach) bool { return br.Rule == rule })
		if i < 0 {
			errs = append(errs, b.resolve(ctx, in.Key, rule, in.Alerts.Notify, nil, now, false))
			continue
		}
		br := breaches[i]
		al := timer.Alert{Key: in.Key, Rule: rule, Since: br.Since.UTC(), ExecutionID: in.ExecutionID, Detail: br.Detail}
		errs = append(errs, b.raise(ctx, al, rule+"@"+strconv.FormatInt(br.Since.UnixMilli(), 10), in.Alerts.Notify, nil, now))
	}
	return errors.Join(errs...)
}

// recentP95 is the p95 duration of in's latest successful runs (zero: fewer than
// p95MinRuns, or no History), read once per last run of the instance.
func (a *Alerter) recentP95(ctx context.Context, in timer.Instance) (time.Duration, error) {
	if a.History == nil {
		return 0, nil
	}
	a.p95s.mu.Lock()
	e, ok := a.p95s.m[in.Key]
	a.p95s.mu.Unlock()
	if ok && e.after.Equal(in.LastRun) {
		return e.p95, nil
	}
	k := in.Key
	runs, err := a.History.Logs(ctx, timer.LogQuery{Key: &k, Limit: p95Runs})
	if err != nil {
		return 0, err
	}
	var ds []time.Duration
	for _, r := range runs {
		if r.Outcome.Succeeded() && !r.Backfill && r.ExecutionID != in.ExecutionID {
			ds = append(ds, r.Duration)
		}
	}
	p := P95(ds)
	a.p95s.mu.Lock()
	if a.p95s.m == nil {
		a.p95s.m = map[timer.Key]p95Entry{}
	}
	a.p95s.m[in.Key] = p95Entry{after: in.LastRun, p95: p}
	a.p95s.mu.Unlock()
	return p, nil
}

// P95 is the nearest-rank 95th percentile of ds (zero when fewer than p95MinRuns).
func P95(ds []time.Duration) time.Duration {
	if len(ds) < p95MinRuns {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[(95*len(s)+99)/100-1]
}
