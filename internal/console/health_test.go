package console

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/cost"
	"github.com/sundialhq/sundial/internal/plan"
	"github.com/sundialhq/sundial/internal/queue"
	"github.com/sundialhq/sundial/internal/timer"
)

func TestBuildHealth(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 18, 30, 0, 0, time.UTC)
	inst := func(name string, prio int, lastDur time.Duration, next time.Time) timer.Instance {
		return timer.Instance{Key: timer.Key{Timer: name}, Settings: timer.Settings{Priority: prio, Timeout: time.Minute},
			Active: true, NextRun: next, LastDuration: lastDur}
	}

	t.Run("BoundsItsListsAndCountsPerApp", func(t *testing.T) {
		t.Parallel()
		var ins []timer.Instance
		for i := range 250 {
			in := inst(fmt.Sprintf("T%03d", i), 2, 0, now.Add(time.Duration(i)*time.Second))
			if i%2 == 1 {
				in.App = "billing"
			}
			if i%5 == 0 {
				in.Active = false
			}
			ins = append(ins, in)
		}
		h := buildHealth(healthInputs{now: now, tick: time.Minute, instances: ins})
		require.Len(t, h.Order, HealthShown, "the first of the execution order only")
		require.Equal(t, 200, h.OrderTotal, "every active scheduled timer counted")
		require.Equal(t, "billing:T001", h.Order[0].Key, "the soonest first (T000 is inactive)")
		require.Equal(t, Counts{Timers: 250, Active: 200, Inactive: 50}, h.Counts)
		require.Equal(t, []AppCounts{
			{App: "billing", Counts: Counts{Timers: 125, Active: 100, Inactive: 25}},
			{App: "default", Counts: Counts{Timers: 125, Active: 100, Inactive: 25}},
		}, h.Apps)
	})

	t.Run("OrdersScheduledTimersAsTheyExecute", func(t *testing.T) {
		t.Parallel()
		ins := []timer.Instance{
			inst("LowPrio", 4, 0, now.Add(-time.Second)),
			inst("SlowP2", 2, 5*time.Second, now.Add(time.Second)),
			inst("FastP2", 2, time.Second, now.Add(time.Minute)),
			inst("WaitedLonger", 2, time.Second, now.Add(-time.Minute)),
			inst("P1", 1, time.Hour, now.Add(time.Hour)),
		}
		inactive := inst("Off", 1, 0, now)
		inactive.Active = false
		idle := inst("NoNextRun", 1, 0, time.Time{})
		h := buildHealth(healthInputs{now: now, tick: time.Minute, instances: append(ins, inactive, idle)})

		var got []string
		for i, r := range h.Order {
			got = append(got, r.Key)
			require.Equal(t, i+1, r.Position)
		}
		// Due now, in timer.Sort's order (priority first), then the others soonest first.
		require.Equal(t, []string{"WaitedLonger", "LowPrio", "SlowP2", "FastP2", "P1"}, got)
		require.Equal(t, Counts{Timers: 7, Active: 6, Inactive: 1}, h.Counts)
	})

	// What is due soonest matters most: a timer due in 3 h is not listed ahead of timers due in 10 s.
	t.Run("SoonestDueFirst", func(t *testing.T) {
		t.Parallel()
		for _, c := range []struct {
			name string
			ins  []timer.Instance
			want []string
		}{
			{"later high priority after sooner low priority", []timer.Instance{
				inst("In3h", 1, 0, now.Add(3*time.Hour)), inst("In10s", 3, 0, now.Add(10*time.Second)), inst("In20s", 4, 0, now.Add(20*time.Second)),
			}, []string{"In10s", "In20s", "In3h"}},
			{"due now ahead of any to come", []timer.Instance{
				inst("Soon", 1, 0, now.Add(time.Second)), inst("DueP4", 4, 0, now), inst("DueP2", 2, 0, now.Add(-time.Second)),
			}, []string{"DueP2", "DueP4", "Soon"}},
			{"same instant: priority, then shorter duration", []timer.Instance{
				inst("SlowP3", 3, 2*time.Second, now.Add(time.Minute)), inst("FastP3", 3, time.Second, now.Add(time.Minute)), inst("P1", 1, time.Hour, now.Add(time.Minute)),
			}, []string{"P1", "FastP3", "SlowP3"}},
		} {
			h := buildHealth(healthInputs{now: now, tick: time.Minute, instances: c.ins})
			var got []string
			for _, r := range h.Order {
				got = append(got, r.Key)
			}
			require.Equal(t, c.want, got, c.name)
		}
	})

	t.Run("ScheduledVersusActual", func(t *testing.T) {
		t.Parallel()
		key := timer.Key{Timer: "Tick"}
		newer := timer.Execution{Key: key, ExecutionID: "b", ShouldHaveRunAt: now.Add(-10 * time.Second), StartedAt: now.Add(-10*time.Second + 120*time.Millisecond), Outcome: timer.OutcomeSuccess}
		older := timer.Execution{Key: key, ExecutionID: "a", ShouldHaveRunAt: now.Add(-20 * time.Second), StartedAt: now.Add(-20 * time.Second), Outcome: timer.OutcomeError}
		h := buildHealth(healthInputs{now: now, tick: time.Minute,
			instances: []timer.Instance{inst("Tick", 3, 0, now.Add(-1500*time.Millisecond)), inst("Later", 3, 0, now.Add(2*time.Second))},
			recent:    []timer.Execution{newer, older}})
		byKey := map[string]HealthRow{}
		for _, r := range h.Order {
			byKey[r.Key] = r
		}
		tick := byKey["Tick"]
		require.True(t, tick.Due)
		require.EqualValues(t, 1500, tick.WaitingMs)
		require.NotNil(t, tick.Last)
		require.Equal(t, "b", tick.Last.ExecutionID, "the newest entry")
		require.EqualValues(t, 120, tick.Last.LateMs)
		require.False(t, byKey["Later"].Due)
		require.EqualValues(t, 2000, byKey["Later"].InMs)
		require.Nil(t, byKey["Later"].Last)
	})

	t.Run("RunningAndProcessors", func(t *testing.T) {
		t.Parallel()
		run := func(name string, prio int, by string, since time.Time) timer.Instance {
			in := inst(name, prio, 0, time.Time{})
			in.ExecutionID, in.IsRunningBy, in.IsRunningSince = "x-"+name, by, since
			in.LeaseExpiresAt = since.Add(72 * time.Second)
			return in
		}
		h := buildHealth(healthInputs{now: now, tick: time.Minute, capacity: [4]int{4, 3, 2, 2}, instances: []timer.Instance{
			run("A", 1, "node-1", now.Add(-time.Second)),
			run("B", 1, "node-2", now.Add(-2*time.Minute)),
			run("C", 3, "node-1", now.Add(-3*time.Second)),
		}})
		require.Len(t, h.Running, 3)
		require.Equal(t, "B", h.Running[0].Key, "longest running first")
		require.True(t, h.Running[0].Overdue, "its lease expired")
		require.False(t, h.Running[1].Overdue)
		require.Equal(t, [4]int{2, 0, 1, 0}, h.Processors.Busy)
		require.Equal(t, []NodeStatus{{By: "node-1", Running: 2}, {By: "node-2", Running: 1}}, h.Processors.Nodes)
		rows := h.Processors.Rows()
		require.Equal(t, ProcessorRow{Priority: 1, Busy: 2, Capacity: 4, Idle: 2}, rows[0])
		require.Equal(t, ProcessorRow{Priority: 2, Busy: 0, Capacity: 3, Idle: 3}, rows[1])
		require.Empty(t, h.Order, "a running timer is not waiting")
		require.Equal(t, 3, h.Counts.Running)
	})

	t.Run("UnknownCapacity", func(t *testing.T) {
		t.Parallel()
		require.Equal(t, -1, buildHealth(healthInputs{now: now}).Processors.Rows()[0].Idle)
	})

	t.Run("Fetcher", func(t *testing.T) {
		t.Parallel()
		for name, tc := range map[string]struct {
			last   time.Time
			status string
		}{
			"NeverRan":  {time.Time{}, FetcherNeverRan},
			"JustTickd": {now.Add(-5 * time.Second), FetcherHealthy},
			"OneMissed": {now.Add(-2*time.Minute - 20*time.Second), FetcherHealthy},
			"Stopped":   {now.Add(-3 * time.Minute), FetcherLate},
		} {
			t.Run(name, func(t *testing.T) {
				f := buildHealth(healthInputs{now: now, tick: time.Minute, fetch: timer.FetchState{LastTick: tc.last, Watermark: tc.last.Add(2 * time.Minute)}}).Fetcher
				require.Equal(t, tc.status, f.Status)
				require.Equal(t, tc.status == FetcherHealthy, f.Healthy)
			})
		}
	})

	// A dead queues' engine must not read as "0 ready" and no problem. Depths
	// that could not be read are unknown: none is shown, and Health is unhealthy.
	t.Run("QueueErrorIsShownNotFatal", func(t *testing.T) {
		t.Parallel()
		ok := timer.FetchState{LastTick: now.Add(-time.Second), Watermark: now.Add(time.Minute)}
		h := buildHealth(healthInputs{now: now, tick: time.Minute, fetch: ok, queues: []queue.Depth{{Name: "P1", Priority: 1}}, queuesErr: errors.New("access denied")})
		require.Equal(t, "queues unreadable: access denied", h.QueuesError)
		require.Empty(t, h.Queues, "no depth is shown as zero")
		require.False(t, h.Healthy)
		require.Equal(t, []string{"queues unreadable: access denied"}, h.Problems)

		down := fmt.Errorf("queue P1 depth: %w", &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")})
		h = buildHealth(healthInputs{now: now, tick: time.Minute, fetch: ok, queues: []queue.Depth{{Name: "P1", Priority: 1}}, queuesErr: down})
		require.Contains(t, h.QueuesError, "queues unreachable: ")
		require.False(t, h.Healthy)

		h = buildHealth(healthInputs{now: now, tick: time.Minute, fetch: ok, queues: []queue.Depth{{Name: "P1", Priority: 1}}})
		require.True(t, h.Healthy, "%v", h.Problems)
		require.Empty(t, h.Problems)
		require.Len(t, h.Queues, 1)
	})

	// A fetch whose ticks fail (its queues unreachable) gives each window back: its last tick
	// is recent, its watermark falls behind.
	t.Run("FetcherStalled", func(t *testing.T) {
		t.Parallel()
		h := buildHealth(healthInputs{now: now, tick: time.Minute, fetch: timer.FetchState{LastTick: now.Add(-5 * time.Second), Watermark: now.Add(-3 * time.Minute)}})
		require.Equal(t, FetcherStalled, h.Fetcher.Status)
		require.False(t, h.Fetcher.Healthy)
		require.False(t, h.Healthy)
		require.Equal(t, []string{"fetcher stalled"}, h.Problems)
	})
}

func TestHealthEstimate(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 18, 30, 0, 0, time.UTC)
	every := func(name, sched string, active bool) timer.Instance {
		return timer.Instance{Key: timer.Key{Timer: name}, Settings: timer.Settings{Schedule: sched, Priority: 3, MaxRetries: 3}, Active: active}
	}
	instances := []timer.Instance{every("A", "every 1m", true), every("B", "every 1m", true), every("Off", "every 1s", false)}
	ran := func(ago time.Duration) timer.Execution {
		return timer.Execution{Key: timer.Key{Timer: "A"}, StartedAt: now.Add(-ago), Outcome: timer.OutcomeSuccess}
	}

	t.Run("NoStackNoEstimate", func(t *testing.T) {
		t.Parallel()
		require.Nil(t, buildHealth(healthInputs{now: now, instances: instances}).Estimate)
	})

	t.Run("PlanOfTheStoredTimersAndTheLogsDay", func(t *testing.T) {
		t.Parallel()
		recent := []timer.Execution{ran(time.Minute), ran(2 * time.Hour), ran(23 * time.Hour), ran(25 * time.Hour)}
		h := buildHealth(healthInputs{now: now, tick: time.Minute, instances: instances, recent: recent, stack: cost.DefaultStack()})
		e := h.Estimate
		require.NotNil(t, e)
		require.Empty(t, e.Error)
		require.Equal(t, 2, e.Instances, "the inactive one is not counted")
		require.InDelta(t, 2*1440, e.FiringsPerDay, 1e-9)
		require.Equal(t, 3, e.Measured24h, "the one 25 hours ago is older")
		require.False(t, e.Truncated)
		require.InDelta(t, 3, e.MeasuredPerDay, 1e-9)

		// The same numbers as `sundial plan` over the next day.
		p, err := plan.Compute(plan.Input{Instances: plan.FromStored(instances), From: now, Days: 1})
		require.NoError(t, err)
		require.InDelta(t, p.Month.OnDemand.USD, e.OnDemandUSD, 1e-12)
		require.InDelta(t, p.Month.Provisioned.USD, e.ProvisionedUSD, 1e-12)
		require.InDelta(t, p.Month.OnDemand.IdleUSD, e.IdleUSD, 1e-12)
		require.Greater(t, e.OnDemandUSD, e.IdleUSD)
		require.Positive(t, e.IdleUSD)
		require.Equal(t, "us-east-1", e.Region)
		require.Equal(t, cost.USEast1.AsOf, e.PricesAsOf)
	})

	t.Run("TheStacksParameters", func(t *testing.T) {
		t.Parallel()
		// Two finishes a minute never move the due key with a one-minute tick; with a 5-minute
		// tick nothing changes for them, but the idle stack ticks less: the estimate is lower.
		slow := cost.DefaultStack()
		slow.FetchTick = 5 * time.Minute
		fast := buildHealth(healthInputs{now: now, tick: time.Minute, instances: instances, stack: cost.DefaultStack()}).Estimate
		lazy := buildHealth(healthInputs{now: now, tick: 5 * time.Minute, instances: instances, stack: slow}).Estimate
		require.Less(t, lazy.IdleUSD, fast.IdleUSD)
	})

	t.Run("ALogLongerThanTheReadIsExtrapolated", func(t *testing.T) {
		t.Parallel()
		// The 200 entries read span two hours: 2,400 a day at that rate.
		var recent []timer.Execution
		for i := range recentForHealth {
			recent = append(recent, ran(time.Duration(i+1)*36*time.Second))
		}
		e := buildHealth(healthInputs{now: now, tick: time.Minute, instances: instances, recent: recent, stack: cost.DefaultStack()}).Estimate
		require.Equal(t, recentForHealth, e.Measured24h)
		require.True(t, e.Truncated)
		require.InDelta(t, 2400, e.MeasuredPerDay, 1e-9)
	})

	t.Run("ThePageShowsIt", func(t *testing.T) {
		t.Parallel()
		pages, err := parsePages()
		require.NoError(t, err)
		render := func(h Health) string {
			var buf bytes.Buffer
			require.NoError(t, pages["health"].ExecuteTemplate(&buf, "layout", pageData{Data: h}))
			return buf.String()
		}
		h := buildHealth(healthInputs{now: now, tick: time.Minute, instances: instances, recent: []timer.Execution{ran(time.Minute)}, stack: cost.DefaultStack()})
		page := render(h)
		require.Contains(t, page, `id="estimate"`)
		require.Contains(t, page, fmt.Sprintf("≈ $%.2f on-demand, $%.2f with DynamoDB provisioned", h.Estimate.OnDemandUSD, h.Estimate.ProvisionedUSD))
		require.Contains(t, page, "2 active instances, 2880 firings scheduled in the next 24 hours")
		require.Contains(t, page, "measured: 1 executions in the last 24 hours")
		require.NotContains(t, render(buildHealth(healthInputs{now: now})), `id="estimate"`)
	})

	t.Run("AScheduleThatDoesNotParseIsShown", func(t *testing.T) {
		t.Parallel()
		bad := append([]timer.Instance{every("Broken", "25:00", true)}, instances...)
		e := buildHealth(healthInputs{now: now, tick: time.Minute, instances: bad, stack: cost.DefaultStack()}).Estimate
		require.Contains(t, e.Error, `timer "Broken"`)
		require.Zero(t, e.OnDemandUSD)
	})
}
