package timer

import (
	"fmt"

	"github.com/sundialhq/sundial/internal/errkind"
	"slices"
	"strings"
	"time"
)

// Dependencies with a time gate (issue 36 item 1): a timer with After runs, at each instant
// of its schedule (its earliest start), only once every upstream's run for the same window
// has succeeded. The window is the business date: the instant's local date in the
// downstream timer's zone. An upstream's run belongs to the window of its own scheduled
// instant (shouldHaveRunAt), read in the downstream timer's zone, so "A at 02:00 and B at
// 04:00 after A" pairs each night's runs whatever A's zone is. WaitUntil bounds the wait;
// at it OnUpstreamFailed decides: skip the instant (recorded with why), run anyway, or
// raise an alert and wait on.

// OnUpstreamFailed values.
const (
	UpstreamSkip  = "skip"  // the default: the instant is skipped and recorded with why
	UpstreamRun   = "run"   // the timer runs anyway
	UpstreamAlert = "alert" // an alert is raised and the timer waits on
)

// RuleUpstreamFailed is the alert onUpstreamFailed: alert raises when a firing's wait passed
// its bound; the timer's next execution (its run, or its window's end) resolves it.
const RuleUpstreamFailed = "upstreamFailed"

// ErrRunningIgnoreAfter: a Run Now that bypasses the dependency gate is refused while the
// timer runs (the run that holds it would end with the bypass, and its next firing not).
var ErrRunningIgnoreAfter = errkind.New(errkind.Conflict, "the timer is running: a Run Now that ignores its dependencies waits until the run ends; try again then")

// UpstreamPolicies are the onUpstreamFailed values, the default first.
var UpstreamPolicies = []string{UpstreamSkip, UpstreamRun, UpstreamAlert}

// Bounds of a waitUntil duration.
const (
	MinWaitFor = time.Second
	MaxWaitFor = 24 * time.Hour
)

// MaxUpstreams bounds a timer's after list.
const MaxUpstreams = 20

// Deps are a timer's dependencies: After's upstreams (keys without a tenant: a tenant's
// instance waits for the same tenant's instance of a multi-tenant upstream, for the shared
// one otherwise), the bound of the wait (WaitUntil, a local time of day, or WaitFor after
// the instant; neither: until the schedule's next instant) and what happens at it.
type Deps struct {
	After            []Key         `json:"after,omitempty"`
	WaitUntil        *ClockTime    `json:"waitUntil,omitempty"`
	WaitFor          time.Duration `json:"waitFor,omitempty"`
	OnUpstreamFailed string        `json:"onUpstreamFailed,omitempty"`
}

// IsZero reports a timer without dependencies.
func (d Deps) IsZero() bool {
	return len(d.After) == 0 && d.WaitUntil == nil && d.WaitFor == 0 && d.OnUpstreamFailed == ""
}

// Policy is OnUpstreamFailed with the default applied.
func (d Deps) Policy() string {
	if d.OnUpstreamFailed == "" {
		return UpstreamSkip
	}
	return d.OnUpstreamFailed
}

// ParseUpstream reads one after entry as written in the manifest of app: "Name" (a timer of
// the same app) or "app:Name" (another app's; "default:Name" is the default app's).
func ParseUpstream(s, app string) (Key, error) {
	bad := fmt.Errorf("%q: want a timer name, or app:name for another app's timer (names match [A-Za-z0-9_-]{1,128})", s)
	if strings.Contains(s, "@") || strings.Count(s, ":") > 1 {
		return Key{}, bad
	}
	k := Key{App: app, Timer: s}
	if strings.Contains(s, ":") {
		var err error
		if k, err = ParseKey(s); err != nil {
			return Key{}, bad
		}
	}
	if !ValidName(k.Timer) {
		return Key{}, bad
	}
	return k, nil
}

// ParseWaitUntil reads waitUntil: a local time of day "HH:MM" in the timer's zone, or a
// duration after the instant (1s..24h).
func ParseWaitUntil(s string) (*ClockTime, time.Duration, error) {
	if strings.Contains(s, ":") {
		c, err := ParseClockTime(s)
		if err != nil {
			return nil, 0, err
		}
		return &c, 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < MinWaitFor || d > MaxWaitFor {
		return nil, 0, fmt.Errorf("%q: want a local time of day HH:MM (e.g. 06:00) or a duration after the scheduled instant from 1s to 24h (e.g. 2h)", s)
	}
	return nil, d, nil
}

// ValidateUpstreamPolicy checks an onUpstreamFailed value ("" is the default, skip).
func ValidateUpstreamPolicy(s string) error {
	if s == "" || slices.Contains(UpstreamPolicies, s) {
		return nil
	}
	return fmt.Errorf("%q; expected %s (default), %s or %s", s, UpstreamSkip, UpstreamRun, UpstreamAlert)
}

// FindCycle returns one cycle of the graph whose edges run from a timer to its upstreams,
// as the path A, B, …, A (nil: none). Nodes are visited in sorted order, so the cycle named
// is the same on every run.
func FindCycle(edges map[Key][]Key) []Key {
	const (
		unseen = iota
		open
		done
	)
	state := map[Key]int{}
	var stack []Key
	var visit func(Key) []Key
	visit = func(k Key) []Key {
		state[k] = open
		stack = append(stack, k)
		next := slices.Clone(edges[k])
		slices.SortFunc(next, compareKeys)
		for _, u := range next {
			switch state[u] {
			case open:
				i := slices.Index(stack, u)
				return append(slices.Clone(stack[i:]), u)
			case unseen:
				if c := visit(u); c != nil {
					return c
				}
			}
		}
		stack = stack[:len(stack)-1]
		state[k] = done
		return nil
	}
	nodes := make([]Key, 0, len(edges))
	for k := range edges {
		nodes = append(nodes, k)
	}
	slices.SortFunc(nodes, compareKeys)
	for _, k := range nodes {
		if state[k] == unseen {
			if c := visit(k); c != nil {
				return c
			}
		}
	}
	return nil
}

func compareKeys(a, b Key) int {
	return strings.Compare(a.App+"\x00"+a.Timer+"\x00"+a.Tenant, b.App+"\x00"+b.Timer+"\x00"+b.Tenant)
}

// CycleString spells a cycle as "A → B → A" with each timer's qualified name.
func CycleString(c []Key) string {
	names := make([]string, len(c))
	for i, k := range c {
		names[i] = k.Name()
	}
	return strings.Join(names, " → ")
}

// View is the dependencies as the API and the CLI show them: the upstreams' qualified
// names, the bound ("06:00", "1h30m0s"; "" for the schedule's next instant) and the policy
// (the default spelled out); all empty without upstreams.
func (d Deps) View() (after []string, waitUntil, onUpstreamFailed string) {
	if len(d.After) == 0 {
		return nil, "", ""
	}
	for _, k := range d.After {
		after = append(after, k.Name())
	}
	switch {
	case d.WaitUntil != nil:
		waitUntil = d.WaitUntil.String()
	case d.WaitFor > 0:
		waitUntil = d.WaitFor.String()
	}
	return after, waitUntil, d.Policy()
}
