package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestChangeText pins `sundial audit`'s CHANGE column: field: old → new, not Go maps.
func TestChangeText(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		before, after map[string]any
		want          string
	}{
		"edit": {map[string]any{"dst": "", "priority": float64(3), "schedule": "every 1m"},
			map[string]any{"dst": "skip", "priority": float64(1), "schedule": "every 1m"},
			`dst: "" → skip, priority: 3 → 1`},
		"only after":                    {nil, map[string]any{"created": float64(2), "updated": float64(0)}, "created: 2, updated: 0"},
		"only before":                   {map[string]any{"note": "maintenance"}, nil, "note: maintenance → none"},
		"lists as JSON":                 {map[string]any{"dates": []any{"2026-12-25"}}, map[string]any{"dates": []any{"2026-12-25", "2027-01-01"}}, `dates: ["2026-12-25"] → ["2026-12-25","2027-01-01"]`},
		"a text with a comma is quoted": {nil, map[string]any{"reason": "a, b"}, `reason: "a, b"`},
		"nothing":                       {nil, nil, ""},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			got := changeText(c.before, c.after)
			require.Equal(t, c.want, got)
			require.NotContains(t, got, "map[")
		})
	}
}
