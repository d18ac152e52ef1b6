package timer_test

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/timer"
)

// TestCoreHasNoTransport keeps the core pure: nothing internal/timer imports, directly or not,
// speaks HTTP or AWS (an action's transport lives in internal/action, its spec in the leaf
// internal/actionspec).
func TestCoreHasNoTransport(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	require.NoError(t, err, string(out))
	for _, dep := range strings.Fields(string(out)) {
		require.False(t, dep == "net/http" || strings.HasPrefix(dep, "net/http/") || strings.Contains(dep, "github.com/aws/"),
			"internal/timer depends on %s", dep)
	}
}

// FindCycle names one cycle of after edges, the same one on every run; none in a DAG.
func TestFindCycle(t *testing.T) {
	t.Parallel()
	a, b, c, d := timer.Key{Timer: "A"}, timer.Key{Timer: "B"}, timer.Key{Timer: "C"}, timer.Key{App: "billing", Timer: "D"}
	for _, tc := range []struct {
		name  string
		edges map[timer.Key][]timer.Key
		want  string
	}{
		{"none", nil, ""},
		{"chain", map[timer.Key][]timer.Key{c: {a, b}, b: {a}}, ""},
		{"diamond", map[timer.Key][]timer.Key{d: {b, c}, b: {a}, c: {a}}, ""},
		{"two", map[timer.Key][]timer.Key{a: {b}, b: {a}}, "A → B → A"},
		{"across apps", map[timer.Key][]timer.Key{c: {a}, a: {d}, d: {b}, b: {a}}, "A → billing:D → B → A"},
		{"self", map[timer.Key][]timer.Key{a: {a}}, "A → A"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for range 5 { // map order must not change the answer
				require.Equal(t, tc.want, timer.CycleString(timer.FindCycle(tc.edges)))
			}
		})
	}
}

// ParseUpstream: unqualified names are the manifest's app's; app:name another app's.
func TestParseUpstream(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, app string
		want    timer.Key
		err     bool
	}{
		{"A", "", timer.Key{Timer: "A"}, false},
		{"A", "ops", timer.Key{App: "ops", Timer: "A"}, false},
		{"billing:B", "ops", timer.Key{App: "billing", Timer: "B"}, false},
		{"default:B", "ops", timer.Key{Timer: "B"}, false},
		{"A@t1", "", timer.Key{}, true},
		{"a:b:c", "", timer.Key{}, true},
		{":B", "", timer.Key{}, true},
		{"bad name", "", timer.Key{}, true},
		{"", "", timer.Key{}, true},
	} {
		got, err := timer.ParseUpstream(tc.in, tc.app)
		if tc.err {
			require.Error(t, err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, got, tc.in)
	}
}

// ParseWaitUntil: a local time of day or a duration after the instant, bounded.
func TestParseWaitUntil(t *testing.T) {
	t.Parallel()
	c, d, err := timer.ParseWaitUntil("06:30")
	require.NoError(t, err)
	require.Equal(t, &timer.ClockTime{Hour: 6, Minute: 30}, c)
	require.Zero(t, d)
	c, d, err = timer.ParseWaitUntil("90m")
	require.NoError(t, err)
	require.Nil(t, c)
	require.Equal(t, 90*time.Minute, d)
	for _, bad := range []string{"24:00", "6:30", "0s", "25h", "soon", ""} {
		_, _, err := timer.ParseWaitUntil(bad)
		require.Error(t, err, bad)
	}
}

// View spells the dependencies for the API and the CLI, the default policy spelled out.
func TestDepsView(t *testing.T) {
	t.Parallel()
	after, until, policy := timer.Deps{}.View()
	require.Nil(t, after)
	require.Empty(t, until+policy)
	after, until, policy = timer.Deps{After: []timer.Key{{Timer: "A"}, {App: "billing", Timer: "B"}}, WaitFor: time.Hour}.View()
	require.Equal(t, []string{"A", "billing:B"}, after)
	require.Equal(t, "1h0m0s", until)
	require.Equal(t, "skip", policy)
}
