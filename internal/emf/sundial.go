package emf

import (
	"cmp"
	"io"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Sundial's metrics. The names, units and dimension sets here are the only ones the functions
// emit, and template.yaml's alarms and dashboard use only these (a test parses the template
// and checks). Dimensions stay bounded: an outcome, a priority (1-4), a status class; never a
// timer, a tenant or an execution, which would make a metric per timer.
const Namespace = "Sundial"

// Dimension names.
const (
	DimOutcome     = "Outcome"     // an execution's outcome (timer.Outcome values), or a publish's success|error
	DimPriority    = "Priority"    // a timer's priority, "1".."4"
	DimStatusClass = "StatusClass" // an API answer's status class: 2xx, 3xx, 4xx, 5xx
)

// Metric names.
const (
	Firings                = "Firings"                // executions ended, by Outcome (success, error, timeout, recovered, missed)
	Lateness               = "Lateness"               // ms from the due instant to the action's start
	Duration               = "Duration"               // ms the action ran
	ClaimsLost             = "ClaimsLost"             // messages acknowledged without running: duplicate, stale or inactive
	ZombieResultsDiscarded = "ZombieResultsDiscarded" // results of executions that had lost their lease
	FiringsResent          = "FiringsResent"          // due firings never claimed, re-sent by recovery
	MessagesRejected       = "MessagesRejected"       // malformed or unknown-timer messages (redelivered, then dead-lettered)
	FetchTicks             = "FetchTicks"             // fetch ticks completed
	FiringsSent            = "FiringsSent"            // firings the fetch sent
	Publishes              = "Publishes"              // publish runs on deploy, by Outcome success|error
	APIRequests            = "ApiRequests"            // API answers, by StatusClass
)

// Outcome values for Publishes.
const (
	PublishSuccess = "success"
	PublishError   = "error"
)

// Def describes one metric: its unit and the dimension sets it is published under.
type Def struct {
	Name          string
	Unit          Unit
	DimensionSets [][]string
}

// Catalogue lists every metric the functions emit.
var Catalogue = []Def{
	{Firings, Count, [][]string{{DimOutcome}, {DimOutcome, DimPriority}}},
	{Lateness, Milliseconds, [][]string{{}, {DimPriority}}},
	{Duration, Milliseconds, [][]string{{}, {DimPriority}}},
	{ClaimsLost, Count, [][]string{{}}},
	{ZombieResultsDiscarded, Count, [][]string{{}}},
	{FiringsResent, Count, [][]string{{}}},
	{MessagesRejected, Count, [][]string{{}}},
	{FetchTicks, Count, [][]string{{}}},
	{FiringsSent, Count, [][]string{{}}},
	{Publishes, Count, [][]string{{DimOutcome}}},
	{APIRequests, Count, [][]string{{DimStatusClass}}},
}

// Lookup returns a metric's definition.
func Lookup(name string) (Def, bool) {
	for _, d := range Catalogue {
		if d.Name == name {
			return d, true
		}
	}
	return Def{}, false
}

// Recorder writes Sundial's metrics as EMF lines; it is the engine's metrics port
// (engine.Metrics) and the publish and API functions' recorder. A line that cannot be
// written is dropped: metrics never fail a firing.
type Recorder struct {
	w       *Writer
	mu      sync.Mutex
	firings map[firingKey]*firingSamples
}

// NewRecorder writes to w (a Lambda function's stdout; locally the function log).
func NewRecorder(w io.Writer, now func() time.Time) *Recorder {
	return &Recorder{w: NewWriter(w, Namespace, now)}
}

func (r *Recorder) emit(dims map[string]string, groups ...Group) {
	_ = r.w.Emit(Record{Dimensions: dims, Groups: groups})
}

// group builds the directive of metrics that share the catalogue's dimension sets (the
// first metric's).
func group(ms ...Metric) Group {
	d, _ := Lookup(ms[0].Name)
	for i := range ms {
		md, _ := Lookup(ms[i].Name)
		ms[i].Unit = md.Unit
	}
	return Group{DimensionSets: d.DimensionSets, Metrics: ms}
}

func count(name string, n int) Metric { return Metric{Name: name, Value: float64(n)} }

// Firing records an ended execution. ran says whether the action ran (success, error,
// timeout): only then are its lateness and duration recorded. Firings are kept and written
// together by Flush, one line per outcome and priority with the lateness and duration
// samples as arrays (a line per firing was most of the processor's log volume, which
// CloudWatch Logs bills per byte); a group that reaches MaxValues samples is written at once.
func (r *Recorder) Firing(outcome string, priority int, ran bool, lateness, duration time.Duration) {
	k := firingKey{outcome: outcome, priority: priority}
	r.mu.Lock()
	if r.firings == nil {
		r.firings = map[firingKey]*firingSamples{}
	}
	f := r.firings[k]
	if f == nil {
		f = &firingSamples{}
		r.firings[k] = f
	}
	f.count++
	if ran {
		f.lateness = append(f.lateness, float64(max(lateness, 0).Microseconds())/1000)
		f.duration = append(f.duration, float64(max(duration, 0).Microseconds())/1000)
	}
	var full *firingSamples
	if len(f.lateness) == MaxValues {
		full = f
		delete(r.firings, k)
	}
	r.mu.Unlock()
	if full != nil {
		r.emitFirings(k, full)
	}
}

// Flush writes the firings recorded since the last flush. The engine calls it when an
// invocation's work ends (a Lambda function may be frozen right after).
func (r *Recorder) Flush() {
	r.mu.Lock()
	pending := r.firings
	r.firings = nil
	r.mu.Unlock()
	keys := make([]firingKey, 0, len(pending))
	for k := range pending {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b firingKey) int {
		return cmp.Or(cmp.Compare(a.priority, b.priority), cmp.Compare(a.outcome, b.outcome))
	})
	for _, k := range keys {
		r.emitFirings(k, pending[k])
	}
}

type firingKey struct {
	outcome  string
	priority int
}

type firingSamples struct {
	count              int
	lateness, duration []float64 // milliseconds, one per firing whose action ran
}

func (r *Recorder) emitFirings(k firingKey, f *firingSamples) {
	dims := map[string]string{DimOutcome: k.outcome, DimPriority: strconv.Itoa(k.priority)}
	groups := []Group{group(count(Firings, f.count))}
	if len(f.lateness) > 0 {
		lat, dur := group(Metric{Name: Lateness}, Metric{Name: Duration}), f.duration
		lat.Metrics[0].Values, lat.Metrics[1].Values = f.lateness, dur
		groups = append(groups, lat)
	}
	r.emit(dims, groups...)
}

// ClaimLost records a message acknowledged without running.
func (r *Recorder) ClaimLost() { r.emit(nil, group(count(ClaimsLost, 1))) }

// ZombieDiscarded records a result discarded because its execution had lost the lease.
func (r *Recorder) ZombieDiscarded() { r.emit(nil, group(count(ZombieResultsDiscarded, 1))) }

// MessageRejected records a message that could not be acted on.
func (r *Recorder) MessageRejected() { r.emit(nil, group(count(MessagesRejected, 1))) }

// FiringsResent records firings recovery re-sent (one line per sweep, also when zero, so the
// metric has data while nothing is lost).
func (r *Recorder) FiringsResent(n int) { r.emit(nil, group(count(FiringsResent, n))) }

// FetchTick records a completed fetch tick and the firings it sent.
func (r *Recorder) FetchTick(sent int) {
	r.emit(nil, group(count(FetchTicks, 1)), group(count(FiringsSent, sent)))
}

// Published records a publish run on deploy.
func (r *Recorder) Published(ok bool) {
	outcome := PublishSuccess
	if !ok {
		outcome = PublishError
	}
	r.emit(map[string]string{DimOutcome: outcome}, group(count(Publishes, 1)))
}

// APIRequest records an API answer by its status class.
func (r *Recorder) APIRequest(status int) {
	r.emit(map[string]string{DimStatusClass: strconv.Itoa(status/100) + "xx"}, group(count(APIRequests, 1)))
}
