package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/sundialhq/sundial/internal/action"
	"github.com/sundialhq/sundial/internal/app"
	"github.com/sundialhq/sundial/internal/manifest"
	"github.com/sundialhq/sundial/internal/metrics"
	"github.com/sundialhq/sundial/internal/timer"
)

// idleRun is the cost of the periodic functions with n idle timers.
type idleRun struct {
	Timers int `json:"timers"`
	Ticks  int `json:"ticks"`
	// Requests per fetch tick and per recovery sweep, by operation, averaged over Ticks.
	FetchRequests    float64          `json:"fetchRequestsPerTick"`
	RecoveryRequests float64          `json:"recoveryRequestsPerSweep"`
	FetchByOp        map[string]int64 `json:"fetchCallsByOperation"`
	RecoveryByOp     map[string]int64 `json:"recoveryCallsByOperation"`
	// Seconds per tick on the emulator (moto scans a whole table for an index query, so this
	// grows with the table there, not on DynamoDB).
	FetchSeconds    float64 `json:"fetchSecondsPerTick"`
	RecoverySeconds float64 `json:"recoverySecondsPerSweep"`
	Sent            int     `json:"sent"`
	CreateSeconds   float64 `json:"createSeconds"`
}

// idle creates n active timers that are not due for hours (a daily time six hours away) and
// runs the fetch and recovery handlers `ticks` times each, counting their requests.
func (e *env) idle(ctx context.Context, n, ticks int) (idleRun, error) {
	d, err := e.deploy(ctx, fmt.Sprintf("bench-idle-%d", n), time.Minute, nil)
	if err != nil {
		return idleRun{}, err
	}
	// A manual clock one minute further each tick: every tick covers a new minute, as on AWS.
	clock := timer.NewManualClock(time.Now())
	a, err := e.newApp(d, app.Options{Log: slog.New(slog.DiscardHandler), Node: "bench-idle", Clock: clock})
	if err != nil {
		return idleRun{}, err
	}
	daily := time.Now().UTC().Add(6 * time.Hour).Format("15:04")
	m := manifest.Manifest{}
	for i := range n {
		m.Timers = append(m.Timers, manifest.Timer{Name: fmt.Sprintf("Idle%05d", i), Schedule: daily,
			Action: action.Spec{HTTP: &action.HTTPSpec{URL: "http://127.0.0.1:9/idle"}}})
	}
	start := time.Now()
	if _, err := a.Admin.Sync(ctx, m); err != nil {
		return idleRun{}, fmt.Errorf("idle: sync %d timers: %w", n, err)
	}
	r := idleRun{Timers: n, Ticks: ticks, CreateSeconds: time.Since(start).Seconds()}
	fetch, recovery := metrics.Snapshot{}, metrics.Snapshot{}
	var fetchTime, recoveryTime time.Duration
	for range ticks {
		clock.Advance(time.Minute)
		before := e.counter.Snapshot()
		t := time.Now()
		st, err := a.FetchHandler(ctx, scheduledEvent())
		if err != nil {
			return idleRun{}, fmt.Errorf("idle: fetch: %w", err)
		}
		fetchTime += time.Since(t)
		r.Sent += st.Sent
		mid := e.counter.Snapshot()
		add(fetch, mid.Sub(before))
		t = time.Now()
		if _, err := a.RecoverHandler(ctx, scheduledEvent()); err != nil {
			return idleRun{}, fmt.Errorf("idle: recovery: %w", err)
		}
		recoveryTime += time.Since(t)
		add(recovery, e.counter.Snapshot().Sub(mid))
	}
	r.FetchRequests = float64(fetch.Total("")) / float64(ticks)
	r.RecoveryRequests = float64(recovery.Total("")) / float64(ticks)
	r.FetchByOp, r.RecoveryByOp = byOp(fetch), byOp(recovery)
	r.FetchSeconds = fetchTime.Seconds() / float64(ticks)
	r.RecoverySeconds = recoveryTime.Seconds() / float64(ticks)
	e.log.Info("idle measured", "timers", n, "fetch_requests_per_tick", r.FetchRequests, "recovery_requests_per_sweep", r.RecoveryRequests)
	return r, nil
}

func add(into, s metrics.Snapshot) {
	for op, st := range s {
		cur := into[op]
		cur.Calls += st.Calls
		cur.Errors += st.Errors
		into[op] = cur
	}
}

func byOp(s metrics.Snapshot) map[string]int64 {
	out := map[string]int64{}
	for _, op := range s.Ops() {
		out[op.String()] = s[op].Calls
	}
	return out
}

func scheduledEvent() events.CloudWatchEvent {
	return events.CloudWatchEvent{Version: "0", DetailType: "Scheduled Event", Source: "aws.events", Time: time.Now().UTC()}
}
