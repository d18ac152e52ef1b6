package console

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/dynamo"
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

		want := append([]timer.Instance(nil), ins...)
		timer.Sort(want, now) // the order is timer.Sort's, whatever it decides
		var got, wantKeys []string
		for i, r := range h.Order {
			got = append(got, r.Key)
			require.Equal(t, i+1, r.Position)
		}
		for _, in := range want {
			wantKeys = append(wantKeys, in.Key.String())
		}
		require.Equal(t, wantKeys, got)
		require.Equal(t, "P1", got[0])
		require.Equal(t, "LowPrio", got[len(got)-1])
		require.Equal(t, Counts{Timers: 7, Active: 6, Inactive: 1}, h.Counts)
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
				f := buildHealth(healthInputs{now: now, tick: time.Minute, fetch: dynamo.FetchState{LastTick: tc.last, Watermark: tc.last.Add(2 * time.Minute)}}).Fetcher
				require.Equal(t, tc.status, f.Status)
				require.Equal(t, tc.status == FetcherHealthy, f.Healthy)
			})
		}
	})

	t.Run("QueueErrorIsShownNotFatal", func(t *testing.T) {
		t.Parallel()
		h := buildHealth(healthInputs{now: now, queues: []queue.Depth{{Name: "P1", Priority: 1}}, queuesErr: errors.New("access denied")})
		require.Equal(t, "access denied", h.QueuesError)
		require.Len(t, h.Queues, 1)
	})
}
