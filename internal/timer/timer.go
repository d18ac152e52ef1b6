// Package timer is Sundial's pure core: timer instances, their fenced state transitions,
// retry decisions and execution ordering. It performs no I/O and never reads the clock.
package timer

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/sundialhq/sundial/internal/actionspec"
	"github.com/sundialhq/sundial/internal/errkind"
)

// Defaults from the OutSystems Timer reference (priority 3 "Normal"), except the timeout:
// OutSystems' 20 minutes is longer than a processor (a Lambda function, 15 minutes at most) can
// wait, so the default is what a processor of the default stack can wait. A timer's retries
// and retry delay default to the stack's (template.yaml DefaultMaxRetries and
// DefaultRetryDelaySeconds, config.Config), not to a constant here.
const (
	DefaultPriority = 3
	DefaultTimeout  = 15*time.Minute - ProcessorMargin // MaxSyncTimeout(900 s): 14m50s
	// LeaseFactor: a crashed execution is recovered after timeout + 20% (the OutSystems Timer reference).
	LeaseFactor = 1.2
	// MisfireThreshold: a scheduled firing claimed later than this after its due time has
	// misfired (the platform was down or saturated); its timer's misfire policy applies.
	MisfireThreshold = time.Minute
)

// ProcessorMargin is what a processor invocation keeps from its own timeout besides the
// action's: holding an early message until its due instant (up to 3 s), the claim, and the
// write that ends the execution (3 s).
const ProcessorMargin = 10 * time.Second

// MaxSyncTimeout is the longest timeout a timer without async can have: what a processor
// whose function times out after processorTimeout can wait for its action. It is also the
// default timeout of a stack with that processor timeout.
func MaxSyncTimeout(processorTimeout time.Duration) time.Duration {
	if processorTimeout <= 2*ProcessorMargin {
		return processorTimeout / 2
	}
	return processorTimeout - ProcessorMargin
}

// Misfire policies: what an overdue timer does after downtime. Neither replays every
// missed instant.
const (
	MisfireRunOnce = "run-once" // run once now, then return to the schedule (default)
	MisfireSkip    = "skip"     // do not run; go to the next future instant
)

var namePattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,128}$`)

// ValidName reports whether s is a valid timer or tenant name.
func ValidName(s string) bool { return namePattern.MatchString(s) }

// DefaultApp is the default app's name outside the program: the app of a timer whose
// manifest names none and of every stored timer written before apps existed (an item
// without an app attribute), as manifests, the CLI, the API's paths, stored app attributes,
// logs and events spell it. Inside the program the default app is "" (a Key's zero App),
// and only the boundaries translate: NormApp where a name comes in, AppName where it goes
// out.
const DefaultApp = "default"

// Key names one runtime instance: an app's timer, for one tenant ("" for a shared timer).
// App "" is the default app: every key inside the program spells it so, so that a key is
// comparable with ==, and as a map key, without normalising.
type Key struct {
	App    string `json:"app"`
	Timer  string `json:"timer"`
	Tenant string `json:"tenant"`
}

// AppName is the key's app as written outside the program (DefaultApp for "").
func (k Key) AppName() string { return AppName(k.App) }

// AppName is app as written outside the program: DefaultApp for the default app ("").
// Only encoders call it (display, stored attributes, logs, API paths).
func AppName(app string) string {
	if app == "" {
		return DefaultApp
	}
	return app
}

// NormApp is an app name that came in from outside (a manifest, the CLI, an API path, a
// stored attribute, a message) as the program spells it: "" for the default app, whether
// written DefaultApp or "". Only decoders call it.
func NormApp(app string) string {
	if app == DefaultApp {
		return ""
	}
	return app
}

// Name is the timer's qualified name: "Timer" for the default app (as before apps existed),
// "app:Timer" for another.
func (k Key) Name() string {
	if k.App == "" {
		return k.Timer
	}
	return k.App + ":" + k.Timer
}

// String is the instance's display name: Name, then "@tenant" for a tenant's instance —
// "Timer", "Timer@tenant", "app:Timer", "app:Timer@tenant". The default app's form is the
// one every key had before apps existed, so stored keys, messages and log partitions of an
// existing deployment read as the default app's.
func (k Key) String() string {
	if k.Tenant == "" {
		return k.Name()
	}
	return k.Name() + "@" + k.Tenant
}

// ParseName splits a qualified name, "Timer" or "app:Timer", without validating it; the
// default app is returned as "".
func ParseName(s string) (app, name string) {
	if i := strings.IndexByte(s, ':'); i >= 0 {
		return NormApp(s[:i]), s[i+1:]
	}
	return "", s
}

// ParseKey reads a Key from its String form ("Timer", "Timer@tenant", "app:Timer",
// "app:Timer@tenant") and validates it. "default:Timer" is the default app's "Timer".
func ParseKey(s string) (Key, error) {
	var k Key
	name := s
	if i := strings.LastIndexByte(s, '@'); i >= 0 {
		name, k.Tenant = s[:i], s[i+1:]
		if k.Tenant == "" {
			return k, fmt.Errorf("%w: %q: empty tenant name after \"@\"", errkind.Invalid, s)
		}
	}
	k.App, k.Timer = ParseName(name)
	if strings.Contains(name, ":") && k.App == "" && !strings.HasPrefix(name, DefaultApp+":") {
		return k, fmt.Errorf("%w: app name in %q must match [A-Za-z0-9_-]{1,128}", errkind.Invalid, s)
	}
	return k, k.Validate()
}

// ValidateApp checks an app name ("" is the default app).
func ValidateApp(app string) error {
	if app != "" && !ValidName(app) {
		return fmt.Errorf("%w: app name %q must match [A-Za-z0-9_-]{1,128}", errkind.Invalid, app)
	}
	return nil
}

// Validate checks the names.
func (k Key) Validate() error {
	if err := ValidateApp(k.App); err != nil {
		return err
	}
	if k.App == DefaultApp {
		return fmt.Errorf("%w: key %s: the default app is \"\" inside a key, %q only outside the program (timer.NormApp)", errkind.Invalid, k, DefaultApp)
	}
	if !ValidName(k.Timer) {
		return fmt.Errorf("%w: timer name %q must match [A-Za-z0-9_-]{1,128}", errkind.Invalid, k.Timer)
	}
	if k.Tenant != "" && !ValidName(k.Tenant) {
		return fmt.Errorf("%w: tenant name %q must match [A-Za-z0-9_-]{1,128}", errkind.Invalid, k.Tenant)
	}
	return nil
}

// Settings are a timer's effective configuration (the manifest's defaults with operator overrides applied).
type Settings struct {
	Schedule string `json:"schedule"`
	Timezone string `json:"timezone"`
	// DST is what the schedule does with a wall-clock time a spring-forward gap skips:
	// "" fires it at the old offset's instant (shift, the default), "skip" does not.
	DST        string            `json:"dst,omitempty"`
	Priority   int               `json:"priority"`
	Timeout    time.Duration     `json:"timeout"`
	MaxRetries int               `json:"maxRetries"`
	RetryDelay time.Duration     `json:"retryDelay"`
	Action     actionspec.Spec   `json:"action"`
	Properties map[string]string `json:"properties"`
	// Misfire is MisfireRunOnce ("" means the same) or MisfireSkip.
	Misfire string `json:"misfire"`
	// RetryBackoff is BackoffFixed ("" means the same) or BackoffExponential.
	RetryBackoff string `json:"retryBackoff"`
	// Async forces async mode; a timer whose timeout exceeds what one processor invocation
	// can wait runs async anyway.
	Async bool `json:"async"`
	// Heartbeat is how long an async execution may stay silent before it is presumed dead
	// (zero: DefaultHeartbeat); every heartbeat extends its lease by this much.
	Heartbeat time.Duration `json:"heartbeat"`
	// Calendar, when set, excludes dates from the schedule (read in the timer's zone);
	// OnExcluded is what a firing on an excluded date does: "" (skip), "next-business-day"
	// or "previous-business-day" (see schedule.OnExcluded).
	Calendar   *Calendar `json:"calendar,omitempty"`
	OnExcluded string    `json:"onExcluded,omitempty"`
	// Window: nothing fires before Start or after End; after End the timer has no next run.
	Window
	// MisfireAfter replaces MisfireThreshold for this timer (zero: the default).
	MisfireAfter time.Duration `json:"misfireAfter,omitempty"`
	// Alerts are the timer's alert rules (alerts.go).
	Alerts AlertRules `json:"alerts,omitzero"`
	// AutoPause pauses the timer after failures in a row (pause.go).
	AutoPause AutoPause `json:"autoPause,omitzero"`
	// Deadlines are the timer's startBy, finishBy and runningOver rules (deadline.go).
	Deadlines Deadlines `json:"deadlines,omitzero"`
	// Overlap is what the instants that pass during a run do (overlap.go): "" (OverlapSkip),
	// OverlapBufferOne or OverlapBufferAll.
	Overlap string `json:"overlap,omitempty"`
	// Deps are the timer's upstreams and the bound of its wait for them (deps.go).
	Deps Deps `json:"deps,omitzero"`
	// Parameters are the values a Run Now or a backfill may override (params.go).
	Parameters Params `json:"parameters,omitempty"`
	// Resources are the shared resources an execution holds a slot of (resources.go).
	Resources []ResourceUse `json:"resources,omitempty"`
}

// Retry backoff kinds.
const (
	BackoffFixed       = "fixed"       // every retry waits RetryDelay
	BackoffExponential = "exponential" // retry n waits RetryDelay × 2^(n-1), at most MaxRetryDelay
)

// MaxRetryDelay caps exponential backoff.
const MaxRetryDelay = 24 * time.Hour

// DefaultHeartbeat is the silence an async execution is allowed by default.
const DefaultHeartbeat = 5 * time.Minute

// RetryDelayFor is the wait before the retry that follows failed attempt `attempt` (1-based).
func (s Settings) RetryDelayFor(attempt int) time.Duration {
	if s.RetryBackoff != BackoffExponential || attempt <= 1 {
		return s.RetryDelay
	}
	d := s.RetryDelay
	for range attempt - 1 {
		if d >= MaxRetryDelay/2 {
			return MaxRetryDelay
		}
		d *= 2
	}
	return d
}

// HeartbeatWindow is how long an async execution's lease lasts after its start or its last
// heartbeat: the Heartbeat setting, but never beyond the execution's hard lease.
func (s Settings) HeartbeatWindow() time.Duration {
	w := s.Heartbeat
	if w <= 0 {
		w = DefaultHeartbeat
	}
	return min(w, s.Lease())
}

// Lease is how long an execution may hold the timer before recovery takes it back.
func (s Settings) Lease() time.Duration {
	return time.Duration(float64(s.Timeout) * LeaseFactor)
}

// Instance is one runtime instance (OutSystems Cyclic_Job) with its settings denormalised,
// so a claim returns everything the processor needs in one read.
type Instance struct {
	Key
	Settings
	Active bool `json:"active"`
	// ActiveBy says who set Active last: ActiveByOperator's choice survives manifest syncs;
	// the others follow the manifest again when the timer (or tenant) is back.
	ActiveBy string `json:"activeBy,omitempty"`
	// Shard is the write shard of the due and running indexes.
	Shard int `json:"shard"`

	// NextRun is zero when there is no next run, or while an execution runs (it is moved to
	// ClaimedNextRun at claim so that a change made during the run is detectable).
	NextRun        time.Time     `json:"nextRun"`
	LastRun        time.Time     `json:"lastRun"`
	LastDuration   time.Duration `json:"lastDuration"`
	NumberOfTries  int           `json:"numberOfTries"` // failures in a row: failed executions since the last success
	IsRunningSince time.Time     `json:"isRunningSince"`
	IsRunningBy    string        `json:"isRunningBy"`
	ExecutionID    string        `json:"executionId"`
	LeaseExpiresAt time.Time     `json:"leaseExpiresAt"`
	// LeaseDeadline is the latest LeaseExpiresAt may ever be for this execution: its claim
	// plus the timeout × 1.2 in force at the claim. The store refuses any lease past it.
	LeaseDeadline  time.Time `json:"leaseDeadline"`
	ClaimedNextRun time.Time `json:"claimedNextRun"`
	// RunScheduledAt/RunAttempt are the firing being executed (set at claim).
	RunScheduledAt time.Time `json:"runScheduledAt"`
	RunAttempt     int       `json:"runAttempt"`
	// RunProgress is the running async execution's last progress report (nil: none).
	RunProgress *Progress `json:"runProgress,omitempty"`
	Version     int64     `json:"version"`

	// PendingScheduledAt/PendingAttempt describe NextRun when it is a retry of an earlier
	// scheduled firing; zero for a fresh firing (scheduledAt = NextRun, attempt 1).
	PendingScheduledAt time.Time `json:"pendingScheduledAt"`
	PendingAttempt     int       `json:"pendingAttempt"`
	// RequeuedAt is when recovery last re-sent a firing it believed lost.
	RequeuedAt time.Time `json:"requeuedAt"`

	LastOutcome Outcome `json:"lastOutcome"`
	LastError   string  `json:"lastError"`
	// LastOutput is the start of the last execution's answer (see Execution.Output).
	LastOutput string `json:"lastOutput,omitempty"`
	// LastReport is what the last execution said it did (Execution.Report).
	LastReport Report `json:"lastReport,omitzero"`
	// SkippedInstants counts the schedule's instants skipped because a run was late or still
	// running (Finish.Skipped), since SkippedSince (the first of them); zero: none ever.
	SkippedInstants int       `json:"skippedInstants,omitempty"`
	SkippedSince    time.Time `json:"skippedSince,omitzero"`

	// LastSuccessAt is when the last successful run (not a backfill's) ended, and
	// LastSuccessFor the instant it was scheduled for: the start of the next run's window
	// (RunWindow). Zero until a run succeeds.
	LastSuccessAt  time.Time `json:"lastSuccessAt,omitzero"`
	LastSuccessFor time.Time `json:"lastSuccessFor,omitzero"`
	// State is the JSON value the last successful run returned as its "state" (at most
	// StateMaxBytes), handed to the next run; "" when none. Only the finish of the execution
	// that owns the lease writes it (Finish.State), and an operator may reset it.
	State string `json:"state,omitempty"`

	// Pause is set while an operator's deactivation with a note lasts (nil otherwise).
	Pause *Pause `json:"pause,omitempty"`

	// Backfill is the instance's part of the timer's latest backfill (nil: none);
	// RunBackfill names the backfill whose firing the running execution is (set at claim).
	Backfill    *BackfillCursor `json:"backfill,omitempty"`
	RunBackfill string          `json:"runBackfill,omitempty"`

	// Stop is the stop requested of the running execution (nil: none; stop.go).
	Stop *StopRequest `json:"stop,omitempty"`
	// RunParams are a Run Now's parameter overrides (JSON, EncodeParams): set by the Run Now
	// of an idle instance, read by the claim with the item, kept through the run's retries
	// and removed by the finish that ends it ("" when none).
	RunParams string `json:"runParams,omitempty"`

	// Waiting is set while the dependency gate holds the pending firing back (waiting.go;
	// nil otherwise); Waiters are the keys (Key.String) of the instances waiting for this
	// one's next success, woken by its successful finish.
	Waiting *Waiting `json:"waiting,omitempty"`
	Waiters []string `json:"waiters,omitempty"`
	// RunIgnoreAfter: the pending Run Now bypasses the dependency gate (set with it on an
	// idle instance, removed by the finish that ends its run).
	RunIgnoreAfter bool `json:"runIgnoreAfter,omitempty"`
}

// Who set an instance's active flag (Instance.ActiveBy; "" counts as ActiveByManifest).
const (
	ActiveByManifest      = "manifest"       // the manifest's active flag
	ActiveByOperator      = "operator"       // activate, deactivate or Run Now
	ActiveByRemoved       = "removed"        // deactivated: its timer left the manifest
	ActiveByTenantRemoved = "tenant-removed" // deactivated: its tenant was removed
)

// Running reports whether an execution holds the instance.
func (in Instance) Running() bool { return in.ExecutionID != "" }

// Fence identifies the execution that owns the instance; every write after a claim carries it.
func (in Instance) Fence() Fence { return Fence{ExecutionID: in.ExecutionID, Version: in.Version} }

// Pending describes the firing NextRun stands for.
func (in Instance) Pending() (scheduledAt time.Time, attempt int) {
	if in.PendingAttempt > 0 {
		return in.PendingScheduledAt, in.PendingAttempt
	}
	return in.NextRun, 1
}

// Run describes the firing being executed (valid while running).
func (in Instance) Run() (scheduledAt time.Time, attempt int) {
	return in.RunScheduledAt, max(in.RunAttempt, 1)
}

// Clone returns a deep copy (properties included), so stores never share maps with callers.
func (in Instance) Clone() Instance {
	in.Properties = maps.Clone(in.Properties)
	in.Parameters = slices.Clone(in.Parameters)
	if in.Action.HTTP != nil {
		h := *in.Action.HTTP
		h.Headers = maps.Clone(h.Headers)
		in.Action.HTTP = &h
	}
	if in.Calendar != nil {
		c := *in.Calendar
		c.Dates, c.Yearly, c.Ranges, c.Weekdays = slices.Clone(c.Dates), slices.Clone(c.Yearly), slices.Clone(c.Ranges), slices.Clone(c.Weekdays)
		in.Calendar = &c
	}
	if in.Backfill != nil {
		b := *in.Backfill
		in.Backfill = &b
	}
	if in.RunProgress != nil {
		p := *in.RunProgress
		in.RunProgress = &p
	}
	if in.Stop != nil {
		st := *in.Stop
		in.Stop = &st
	}
	if in.Waiting != nil {
		w := *in.Waiting
		in.Waiting = &w
	}
	in.Waiters = slices.Clone(in.Waiters)
	if in.Action.Lambda != nil {
		l := *in.Action.Lambda
		in.Action.Lambda = &l
	}
	return in
}

// Fence is the owner token plus the version written at claim.
type Fence struct {
	ExecutionID string `json:"executionId"`
	Version     int64  `json:"version"`
}

// Outcome of an execution as written to the log.
type Outcome string

// Outcomes.
const (
	OutcomeSuccess   Outcome = "success"
	OutcomeError     Outcome = "error"
	OutcomeTimeout   Outcome = "timeout"
	OutcomeRecovered Outcome = "recovered"
	// OutcomeMissed: a misfired firing skipped by the "skip" policy; the action did not run.
	OutcomeMissed Outcome = "missed"
	// OutcomeWarnings: a success whose answer had "warnings" (Report): it counts as a
	// success everywhere (retries, alerts, the window), and is shown apart.
	OutcomeWarnings Outcome = "success-with-warnings"
	// OutcomeStopped: an operator (or the overlap policy cancel-other) stopped the running
	// execution (stop.go); it is neither a success nor a failure: no retry follows it.
	OutcomeStopped Outcome = "stopped"
)

// Failed reports whether the outcome counts as a try without success.
func (o Outcome) Failed() bool { return !o.Succeeded() && o != OutcomeMissed && o != OutcomeStopped }

// Succeeded reports whether the outcome is a success (with or without warnings).
func (o Outcome) Succeeded() bool { return o == OutcomeSuccess || o == OutcomeWarnings }

// ShardOf is the write shard of the due and running indexes that an instance is placed on
// when the stack has `shards` of them (the template's DueShards).
func ShardOf(key Key, shards int) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(key.String()))
	return int(h.Sum32() % uint32(max(shards, 1)))
}

// CompareKeys orders keys by app (the default app first), then timer, then tenant.
func CompareKeys(a, b Key) int {
	return cmp.Or(strings.Compare(a.App, b.App), strings.Compare(a.Timer, b.Timer), strings.Compare(a.Tenant, b.Tenant))
}
