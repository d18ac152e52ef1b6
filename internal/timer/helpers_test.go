package timer_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/schedule"
	"github.com/sundialhq/sundial/internal/timer"
)

// rfc3339 is a parser of the tests' RFC 3339 instants that fails the test on a bad one.
func rfc3339(t *testing.T) func(string) time.Time {
	return func(s string) time.Time {
		t.Helper()
		v, err := time.Parse(time.RFC3339, s)
		require.NoError(t, err)
		return v
	}
}

// weekdaysCalendar is a calendar "weekdays" that excludes Saturdays and Sundays.
func weekdaysCalendar() *timer.Calendar {
	return &timer.Calendar{Name: "weekdays", CalendarRules: schedule.CalendarRules{Weekdays: []string{"sat", "sun"}}}
}
