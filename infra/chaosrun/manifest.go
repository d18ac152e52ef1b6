package chaosrun

import (
	"fmt"
	"strings"
)

// profile is a kind of timer in the chaos run.
type profile struct {
	schedule string
	priority int
	query    string // the action's behaviour (see Recorder)
}

// profiles cycle over the timers: second-level schedules of every form the engine takes
// ("every Ns" intervals, Quartz seconds fields), all four priorities, actions that are quick,
// slow (0.2–1.5 s), failing sometimes (then retried), or asking for their next run.
var profiles = []profile{
	{"every 2s", 1, "min=0&max=50"},
	{"every 3s", 2, "min=200&max=1500"},
	{"/5 * * * * ?", 3, "min=200&max=1500&fail=0.3"},
	{"every 4s", 4, "min=0&max=300&next=0.3"},
	{"/3 * * * * ?", 2, "min=200&max=800&fail=0.15"},
	{"every 5s", 3, "min=500&max=1500"},
	{"0/2 * * * * ?", 1, "min=0&max=200&fail=0.1"},
	{"every 6s", 4, "min=200&max=1500&fail=0.3&next=0.2"},
	{"*/4 * * * * ?", 3, "min=0&max=100"},
	{"every 3s", 1, "min=300&max=1200&fail=0.2"},
}

// overlapTimers are one timer per overlap policy (OverlapName), each with an action that often
// outlasts its period, so that instants pass while it runs: the check requires that they never
// overlap and that each instant is run, buffered or recorded as skipped. buffer-all's action
// is on average shorter than its period, so that its backlog drains after the chaos.
var overlapTimers = []struct{ policy, schedule, query string }{
	{"skip", "every 1s", "min=1200&max=2500"},
	{"buffer-one", "every 2s", "min=1500&max=4500"},
	{"buffer-all", "every 3s", "min=500&max=4000"},
	// cancel-other's action stops when the processor hangs up (at the next instant): the
	// recorder ends its call then, so an overlap of the two calls would show.
	{"cancel-other", "every 2s", "min=1000&max=3500&hangup=stop"},
}

// asyncSchedules cycle over the async timers.
var asyncSchedules = []string{"every 2s", "/3 * * * * ?", "every 1s"}

// Manifest is the timers.yaml of a run with n timers and async async timers calling the
// recorder at url. Every timer has a 10 s timeout (lease 12 s: far above the longest action
// plus twice the clock skew, so that a recovered execution's action has always ended) and
// retries failures twice, 1 s apart. The async timers (AsyncName) are started and report back
// through the client (async.go): heartbeat window 8 s, timeout 40 s.
func Manifest(n, async int, url string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "resources: {%s: %d}\n", PoolResource, PoolSlots)
	b.WriteString("timers:\n")
	for i := range n {
		p := profiles[i%len(profiles)]
		fmt.Fprintf(&b, "  - name: %s\n    schedule: %q\n    priority: %d\n    timeout: 10s\n    maxRetries: 2\n    retryDelay: 1s\n    action: {http: {url: %q}}\n",
			TimerName(i), p.schedule, p.priority, url+"/act?"+p.query)
	}
	for i := range async {
		fmt.Fprintf(&b, "  - name: %s\n    schedule: %q\n    priority: %d\n    timeout: %s\n    async: true\n    heartbeat: %s\n    maxRetries: 2\n    retryDelay: 1s\n    action: {http: {url: %q}}\n",
			AsyncName(i), asyncSchedules[i%len(asyncSchedules)], 1+i%4, asyncTimeout, asyncHeartbeat, url+"/act")
	}
	for i, o := range overlapTimers {
		fmt.Fprintf(&b, "  - name: %s\n    schedule: %q\n    priority: 2\n    timeout: 10s\n    overlap: %s\n    action: {http: {url: %q}}\n",
			OverlapName(i), o.schedule, o.policy, url+"/act?"+o.query)
	}
	writePoolTimers(&b, url)
	return b.String()
}

// OverlapName is the name of the run's i-th overlap-policy timer (overlapTimers).
func OverlapName(i int) string { return fmt.Sprintf("Overlap%02d", i) }

// AsyncName is the name of the run's i-th async timer.
func AsyncName(i int) string { return fmt.Sprintf("Async%02d", i) }

// TimerName is the name of the run's i-th timer.
func TimerName(i int) string { return fmt.Sprintf("Chaos%02d", i) }
