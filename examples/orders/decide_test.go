package orders

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestDecide(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	fail := errors.New("third party answered 503")
	scenario2 := Config{RetryDelay: 10 * time.Minute}
	scenario3 := Config{RetryDelay: 10 * time.Minute, MaxAttempts: 3}
	order := func(retries int, scheduled time.Time) Order {
		return Order{ID: 7, State: StateCompleted, RetryCount: retries, ScheduledPushTime: Ms(scheduled)}
	}
	for _, tc := range []struct {
		name string
		o    Order
		err  error
		c    Config
		want Decision
	}{
		{"SuccessIsPushed", order(0, now), nil, scenario3, Decision{Outcome: Pushed}},
		{"SuccessAfterRetriesKeepsTheCount", order(2, now), nil, scenario3, Decision{Outcome: Pushed, RetryCount: 2}},
		{"FailureIsDelayedFromNow", order(0, now.Add(-time.Hour)), fail, scenario2,
			Decision{Outcome: Delayed, NextPush: now.Add(10 * time.Minute), RetryCount: 1, Error: fail.Error()}},
		{"FailureOfAFutureScheduleIsDelayedFromIt", order(0, now.Add(time.Minute)), fail, scenario2,
			Decision{Outcome: Delayed, NextPush: now.Add(11 * time.Minute), RetryCount: 1, Error: fail.Error()}},
		{"UnlimitedAttemptsDelayForever", order(500, now), fail, scenario2,
			Decision{Outcome: Delayed, NextPush: now.Add(10 * time.Minute), RetryCount: 501, Error: fail.Error()}},
		{"FirstOfThreeAttemptsDelays", order(0, now), fail, scenario3,
			Decision{Outcome: Delayed, NextPush: now.Add(10 * time.Minute), RetryCount: 1, Error: fail.Error()}},
		{"SecondOfThreeAttemptsDelays", order(1, now), fail, scenario3,
			Decision{Outcome: Delayed, NextPush: now.Add(10 * time.Minute), RetryCount: 2, Error: fail.Error()}},
		{"ThirdOfThreeAttemptsFailsAndKeepsTheCount", order(2, now), fail, scenario3,
			Decision{Outcome: Failed, RetryCount: 2, Error: fail.Error()}},
		{"OneAttemptOnlyFailsAtOnce", order(0, now), fail, Config{MaxAttempts: 1, RetryDelay: time.Minute},
			Decision{Outcome: Failed, Error: fail.Error()}},
		{"ZeroDelayIsDueAgainNow", order(0, now), fail, Config{},
			Decision{Outcome: Delayed, NextPush: now, RetryCount: 1, Error: fail.Error()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := Decide(tc.o, tc.err, now, tc.c)
			require.Equal(t, tc.want.Outcome, got.Outcome)
			require.True(t, tc.want.NextPush.Equal(got.NextPush), "next push %s, want %s", got.NextPush, tc.want.NextPush)
			require.Equal(t, tc.want.RetryCount, got.RetryCount)
			require.Equal(t, tc.want.Error, got.Error)
		})
	}
}

// Attempts walks scenario 3 with a fake clock: a push that always fails is tried at +0, +10m
// and +20m, never between, and given up on the third attempt with retry_count 2.
func TestDecideAttemptsOverTime(t *testing.T) {
	t.Parallel()
	c := Config{RetryDelay: 10 * time.Minute, MaxAttempts: 3}
	clock := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	o := Order{ID: 1, State: StateCompleted, ScheduledPushTime: Ms(clock)}
	var attempts []time.Time
	for tick := 0; tick < 60 && o.Pushable(); tick++ { // a run every 10 s for 10 minutes... and more
		now := clock.Add(time.Duration(tick) * 30 * time.Second)
		if !o.Due(now) {
			continue
		}
		attempts = append(attempts, now)
		d := Decide(o, errors.New("down"), now, c)
		switch d.Outcome {
		case Delayed:
			o.ScheduledPushTime, o.RetryCount = msCeil(d.NextPush), d.RetryCount
		case Failed:
			o.PushState = PushFailed
		}
	}
	require.Equal(t, []time.Time{clock, clock.Add(10 * time.Minute), clock.Add(20 * time.Minute)}, attempts)
	require.Equal(t, PushFailed, o.PushState)
	require.Equal(t, 2, o.RetryCount)
}

func TestMsCeilNeverEarly(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 1, 0, 0, 0, 1_500_001, time.UTC) // 1.500001 ms
	require.Equal(t, EpochMs(at.UnixMilli()+1), msCeil(at))
	require.False(t, msCeil(at).Time().Before(at))
	whole := time.UnixMilli(1234)
	require.Equal(t, EpochMs(1234), msCeil(whole))
	require.Equal(t, EpochMs(1234), Ms(whole.Add(999*time.Microsecond)))
}

func TestClip(t *testing.T) {
	t.Parallel()
	require.Equal(t, "abc", clip("abc", 5))
	require.Equal(t, "ab", clip("abc", 2))
	s := strings.Repeat("é", 10) // 2 bytes each
	require.Equal(t, strings.Repeat("é", 2), clip(s, 5), "cut at a rune boundary")
}
