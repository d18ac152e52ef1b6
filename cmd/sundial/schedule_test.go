package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/errkind"
)

func TestScheduleNext(t *testing.T) {
	t.Parallel()
	// New York springs forward 2026-03-08 02:00 EST -> 03:00 EDT; 2027-03-14 likewise.
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"ShiftIsTheDefault", []string{"02:30", "--tz", "America/New_York", "--from", "2026-03-07T12:00:00Z", "-n", "2"},
			"2026-03-08T03:30:00-04:00\n2026-03-09T02:30:00-04:00\n"},
		{"Shift", []string{"02:30", "--dst", "shift", "--tz", "America/New_York", "--from", "2026-03-07T12:00:00Z", "-n", "2"},
			"2026-03-08T03:30:00-04:00\n2026-03-09T02:30:00-04:00\n"},
		{"Skip", []string{"02:30", "--tz", "America/New_York", "--dst", "skip", "--from", "2026-03-07T12:00:00Z", "-n", "2"},
			"2026-03-09T02:30:00-04:00\n2026-03-10T02:30:00-04:00\n"},
		{"SkipCron", []string{"0 30 2 ? 3 1#2 2026-2027", "--tz", "America/New_York", "--dst", "skip", "--from", "2026-01-01T00:00:00Z"},
			""}, // the second Sunday of March is the spring-forward day: never
		{"SkipLeavesEveryAlone", []string{"every 30m", "--tz", "America/New_York", "--dst", "skip", "--from", "2026-03-08T06:45:00Z", "-n", "2"},
			"2026-03-08T03:00:00-04:00\n2026-03-08T03:30:00-04:00\n"},
		{"AmbiguousOnceWithSkip", []string{"01:30", "--tz", "Europe/London", "--dst", "skip", "--from", "2026-10-24T12:00:00Z", "-n", "2"},
			"2026-10-25T01:30:00+01:00\n2026-10-26T01:30:00Z\n"},
		// H resolved for the timer named (the vectors of internal/schedule's TestSpreadVectors).
		{"SpreadForTimer", []string{"H H(2-4) * * *", "--timer", "billing:Nightly", "--from", "2026-01-01T00:00:00Z", "-n", "2"},
			"2026-01-01T04:36:00Z\n2026-01-02T04:36:00Z\n"},
		{"SpreadEvery", []string{"every 5m spread", "--timer", "billing:Nightly", "--from", "2026-01-01T00:00:00Z", "-n", "2"},
			"2026-01-01T00:03:43Z\n2026-01-01T00:08:43Z\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			require.NoError(t, cmdSchedule(append([]string{"next"}, tt.args...), &out))
			require.Equal(t, tt.want, out.String())
		})
	}

	t.Run("SpreadNeedsTimer", func(t *testing.T) {
		t.Parallel()
		err := cmdSchedule([]string{"next", "H H(2-4) * * *"}, &bytes.Buffer{})
		require.ErrorIs(t, err, errkind.Invalid, "exit 2")
		require.ErrorContains(t, err, `"H H(2-4) * * *" spreads its start time (H or "spread"): the instant is picked per timer; name one with --timer [APP:]NAME[@TENANT]`)
		err = cmdSchedule([]string{"next", "H(5-2) * * * *", "--timer", "T"}, &bytes.Buffer{})
		require.ErrorContains(t, err, `minute field "H(5-2)": range "H(5-2)" runs backwards`)
		err = cmdSchedule([]string{"next", "H * * * *", "--timer", "billing:"}, &bytes.Buffer{})
		require.ErrorIs(t, err, errkind.Invalid)
		require.ErrorContains(t, err, "--timer")
		// Tenants' instances of one timer are spread on their own.
		var a, b bytes.Buffer
		require.NoError(t, cmdSchedule([]string{"next", "H H * * *", "--timer", "billing:Nightly@acme", "-n", "1", "--from", "2026-01-01T00:00:00Z"}, &a))
		require.NoError(t, cmdSchedule([]string{"next", "H H * * *", "--timer", "billing:Nightly@globex", "-n", "1", "--from", "2026-01-01T00:00:00Z"}, &b))
		require.NotEqual(t, a.String(), b.String())
	})

	t.Run("InvalidPolicy", func(t *testing.T) {
		t.Parallel()
		err := cmdSchedule([]string{"next", "02:30", "--dst", "later"}, &bytes.Buffer{})
		require.ErrorIs(t, err, errkind.Invalid, "exit 2")
		require.ErrorContains(t, err, `--dst "later": expected "shift"`)
		require.True(t, strings.Contains(err.Error(), `or "skip"`))
	})
}
