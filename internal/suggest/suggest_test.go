package suggest

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestClosest(t *testing.T) {
	t.Parallel()
	timers := []string{"Heartbeat", "Digest", "FlakyPush", "TenantReport"}
	fields := []string{"name", "schedule", "timeout", "maxRetries", "retryDelay", "priority", "misfireAfter"}
	for _, c := range []struct {
		word  string
		in    []string
		want  string
		found bool
	}{
		{"Digets", timers, "Digest", true},      // transposition
		{"digest", timers, "Digest", true},      // case
		{"Hartbeat", timers, "Heartbeat", true}, // deletion
		{"Nightly", timers, "", false},
		{"retries", fields, "maxRetries", true}, // a part of the field's name
		{"shedule", fields, "schedule", true},
		{"timout", fields, "timeout", true},
		{"misfire", fields, "misfireAfter", true},
		{"x", fields, "", false},
		{"colour", fields, "", false},
	} {
		got, ok := Closest(c.word, c.in)
		require.Equal(t, c.found, ok, c.word)
		require.Equal(t, c.want, got, c.word)
	}
}
