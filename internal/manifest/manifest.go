// Package manifest reads and validates an app's timers.yaml.
package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/sundialhq/sundial/internal/actionspec"
	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/schedule"
	"github.com/sundialhq/sundial/internal/timer"
)

// Manifest is the parsed file.
type Manifest struct {
	// App names the application that owns the timers (an OutSystems module): a publish of
	// this manifest creates, updates and deactivates only this app's timers. Optional: none,
	// or timer.DefaultApp, is the default app, which Parse returns as "" (the program's
	// spelling). The name rule is the timer names' ([A-Za-z0-9_-]{1,128}).
	App string `yaml:"app"`
	// Tenants are environment-wide (every app's multi-tenant timers run for each); a tenant
	// listed here is registered on sync (source "manifest:<app>"), and removed again, its
	// instances deactivated, once no app's manifest lists it. Tenants added with the CLI stay.
	Tenants []string `yaml:"tenants"`
	// Alerts are the app's default alert rules (alerts.go); a timer's own replace them.
	Alerts *Alerts `yaml:"alerts"`
	Timers []Timer `yaml:"timers"`
	// Calendars are the business calendars the timers may name (calendar.go).
	Calendars []Calendar `yaml:"calendars"`
	// Resources are the app's shared resources, each with its slot count: at most that many
	// executions of the timers that use it hold it at once (resources.go). The default
	// app's are environment-wide.
	Resources map[string]int `yaml:"resources"`

	// shared are the default app's calendars, which another app's timers may name too (its
	// own of the same name wins); sharedKnown says they were read (WithShared): offline,
	// another app's reference to a calendar it does not define is left to the publish.
	shared      []Calendar
	sharedKnown bool
	// sharedResources are the default app's resources (WithSharedResources).
	sharedResources      map[string]int
	sharedResourcesKnown bool
	// asOf is the instant a calendar must leave its timers a firing from (AsOf); zero: now.
	asOf time.Time
	// written is App as the file wrote it (WrittenApp).
	written string
}

// WrittenApp is the app as the file names it, before Parse made timer.DefaultApp "": "" when
// it names none.
func (m Manifest) WrittenApp() string { return m.written }

// Timer is one entry; pointer fields are optional and take the defaults.
type Timer struct {
	Name     string `yaml:"name"`
	Schedule string `yaml:"schedule"`
	Timezone string `yaml:"timezone"`
	// DST is "shift" (default) or "skip": what a wall-clock time a spring-forward gap
	// skips does (see schedule.DST).
	DST        string            `yaml:"dst"`
	Priority   *int              `yaml:"priority"`
	Timeout    *Duration         `yaml:"timeout"`
	MaxRetries *int              `yaml:"maxRetries"`
	RetryDelay *Duration         `yaml:"retryDelay"`
	Active     *bool             `yaml:"active"`
	Action     actionspec.Spec   `yaml:"action"`
	Properties map[string]string `yaml:"properties"`
	Misfire    string            `yaml:"misfire"`
	// RetryBackoff: fixed (default) or exponential.
	RetryBackoff string `yaml:"retryBackoff"`
	// Retry is an Activiti-style cycle "R<n>/<ISO 8601 duration>" (R3/PT10M: 3 retries 10
	// minutes apart), an alternative to maxRetries + retryDelay.
	Retry     string    `yaml:"retry"`
	Async     bool      `yaml:"async"`
	Heartbeat *Duration `yaml:"heartbeat"`
	// MultiTenant runs the timer in isolation for each registered tenant: one runtime instance
	// (lock, retries, log) per tenant, and the action receives the tenant.
	MultiTenant bool `yaml:"multiTenant"`
	// Shards > 0 makes that many independent instances, named <name>-0 … <name>-(N-1), whose
	// properties add tt_index (0..N-1) and tt_total (N): parallel executions over disjoint slices.
	Shards int `yaml:"shards"`
	// Calendar names one of the manifest's calendars: the timer does not fire on the dates
	// it excludes (in the timer's zone); OnExcluded says what such a firing does instead
	// (skip, the default; next-business-day; previous-business-day).
	Calendar   string `yaml:"calendar"`
	OnExcluded string `yaml:"onExcluded"`
	// Start and End bound the timer's firings (RFC 3339); after End it has no next run.
	Start *Time `yaml:"start"`
	End   *Time `yaml:"end"`
	// MisfireAfter replaces the 60 s misfire threshold for this timer.
	MisfireAfter *Duration `yaml:"misfireAfter"`
	// CalendarRules is the named calendar's rules, copied in by Manifest.Resolve (not read
	// from YAML; kept in the stored definition).
	CalendarRules *timer.Calendar `yaml:"-"`
	// Alerts are the timer's alert rules; nil takes the manifest's, {} has none.
	Alerts *Alerts `yaml:"alerts"`
	// PauseAfterFailures pauses the timer (as the platform, with a note) once this many
	// executions in a row have failed, after the firing's last retry; PauseFor ends that
	// pause (recovery's sweep activates the timer again; without it, an operator does).
	PauseAfterFailures *int      `yaml:"pauseAfterFailures"`
	PauseFor           *Duration `yaml:"pauseFor"`
	// StartBy and FinishBy ("HH:MM", the timer's zone) and RunningOver ("45m" or "3x p95")
	// are its deadline rules, alerted on while a run is pending or in flight (deadline.go).
	// (omitempty: a timer without them keeps its stored definition byte for byte.)
	StartBy     string `yaml:"startBy" json:",omitempty"`
	FinishBy    string `yaml:"finishBy" json:",omitempty"`
	RunningOver string `yaml:"runningOver" json:",omitempty"`
	// Overlap is what the schedule's instants that pass while an execution runs do:
	// skip (the default), buffer-one, buffer-all or cancel-other (timer.OverlapPolicies).
	Overlap string `yaml:"overlap" json:",omitempty"`
	// After, WaitUntil and OnUpstreamFailed are the timer's dependencies with a time gate
	// (deps.go).
	After            []string `yaml:"after" json:",omitempty"`
	WaitUntil        string   `yaml:"waitUntil" json:",omitempty"`
	OnUpstreamFailed string   `yaml:"onUpstreamFailed" json:",omitempty"`
	// Parameters are the values a Run Now may override (timer.Param): name, type (string,
	// integer, number, boolean, date, enum), default, required, values (enum), description.
	Parameters timer.Params `yaml:"parameters"`
	// Uses names the resources (top-level resources:) an execution must hold a slot of
	// to run; ResourceUses is them resolved by Manifest.Resolve (not read from YAML).
	Uses         []string            `yaml:"uses" json:",omitempty"`
	ResourceUses []timer.ResourceUse `yaml:"-" json:",omitempty"`
}

// Duration is a time.Duration written as "20m", "10s".
type Duration struct{ time.Duration }

// UnmarshalYAML parses Go duration syntax.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if err := n.Decode(&s); err != nil {
		return fieldError(n, "want a duration such as 20m or 10s, got %q", n.Value)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fieldError(n, "want a duration such as 20m or 10s, got %q", s)
	}
	d.Duration = v
	return nil
}

// Defaults are the stack's defaults for optional fields.
type Defaults struct {
	MaxRetries int
	RetryDelay time.Duration
	// ProcessorWait is what a processor can wait for an action (timer.MaxSyncTimeout of the
	// processor function's timeout): the default timeout, and the longest timeout a timer
	// without async may have. Zero: the default stack's, timer.DefaultTimeout.
	ProcessorWait time.Duration
	// Region is the stack's: a notify topic must be in it, since SNS Publish reaches only the
	// caller's region's topics. Empty: not checked (sundial check without a region).
	Region string
}

// Wait is d.ProcessorWait, or the default stack's when it is not set.
func (d Defaults) Wait() time.Duration {
	if d.ProcessorWait > 0 {
		return d.ProcessorWait
	}
	return timer.DefaultTimeout
}

// WaitProblem is the error for a timeout a processor cannot wait for, or nil: only an async
// action (started, then reporting with the client) may run longer than one processor invocation.
func WaitProblem(timeout time.Duration, async bool, wait time.Duration) error {
	if async || timeout <= wait {
		return nil
	}
	return fmt.Errorf("timeout %s exceeds what a processor can wait (%s): set async: true, or a timeout up to %s",
		FormatDuration(timeout), FormatDuration(wait), FormatDuration(wait))
}

// FormatDuration writes d as a manifest would: 20m, 14m50s, 1h30m.
func FormatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// MaxFileBytes bounds a manifest.
const MaxFileBytes = 1 << 20

// Load reads and validates a manifest file.
func Load(path string) (Manifest, error) {
	f, err := os.Open(path)
	if err != nil {
		return Manifest{}, fmt.Errorf("manifest: %w", err)
	}
	defer f.Close()
	m, err := Parse(io.LimitReader(f, MaxFileBytes+1))
	if err != nil {
		return Manifest{}, fmt.Errorf("manifest %s: %w", path, err)
	}
	return m, nil
}

// Parse decodes strictly (unknown fields are errors) and validates every timer, reporting
// every problem with the timer's name and the field.
func Parse(r io.Reader) (Manifest, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return Manifest{}, err
	}
	if len(data) > MaxFileBytes {
		return Manifest{}, fmt.Errorf("%w: larger than %d bytes", errkind.Invalid, MaxFileBytes)
	}
	if err := checkExpansion(data); err != nil {
		return Manifest{}, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var m Manifest
	if err := dec.Decode(&m); err != nil {
		if errors.Is(err, io.EOF) {
			return Manifest{}, fmt.Errorf("%w: empty manifest; expected a top-level \"timers:\" list", errkind.Invalid)
		}
		return Manifest{}, fmt.Errorf("%w: %v", errkind.Invalid, yamlProblems(data, err))
	}
	m.written, m.App = m.App, timer.NormApp(m.App)
	m.expandActions(ActionsAddr())
	if err := m.Validate(); err != nil {
		return m, err
	}
	m.withAlertDefaults()
	return m, nil
}

// ValidateFor is Validate for a stack with defaults d: a timer without async must also have a
// timeout the stack's processor can wait for (d.Wait()).
func (m Manifest) ValidateFor(d Defaults) error {
	errs := []error{m.Validate()}
	for i, t := range m.Timers {
		if t.Timeout == nil {
			continue // the default is d.Wait(): it fits
		}
		if err := WaitProblem(t.Timeout.Duration, t.Async, d.Wait()); err != nil {
			errs = append(errs, fmt.Errorf("%w: timers[%d] %q: timeout: %v", errkind.Invalid, i, t.Name, err))
		}
	}
	if err := m.Alerts.regionProblem(d.Region); err != nil {
		errs = append(errs, fmt.Errorf("%w: %v", errkind.Invalid, err))
	}
	for i, t := range m.Timers {
		if err := t.Alerts.regionProblem(d.Region); err != nil {
			errs = append(errs, fmt.Errorf("%w: timers[%d] %q: %v", errkind.Invalid, i, t.Name, err))
		}
	}
	return errors.Join(errs...)
}

// Validate checks every timer.
func (m Manifest) Validate() error {
	var errs []error
	if m.App != "" && !timer.ValidName(m.App) {
		errs = append(errs, fmt.Errorf("%w: app: %q must match [A-Za-z0-9_-]{1,128}", errkind.Invalid, m.App))
	}
	for _, err := range m.Alerts.problems() {
		errs = append(errs, fmt.Errorf("%w: %v", errkind.Invalid, err))
	}
	seenTenant := map[string]bool{}
	for i, name := range m.Tenants {
		if !timer.ValidName(name) {
			errs = append(errs, fmt.Errorf("%w: tenants[%d]: %q must match [A-Za-z0-9_-]{1,128}", errkind.Invalid, i, name))
		} else if seenTenant[name] {
			errs = append(errs, fmt.Errorf("%w: tenants[%d]: duplicate tenant %q", errkind.Invalid, i, name))
		}
		seenTenant[name] = true
	}
	// Every runtime timer name, including the shards' derived ones, must be unique (plain
	// duplicate names are reported below).
	type namer struct {
		where   string
		sharded bool
	}
	owner := map[string]namer{}
	for i, t := range m.Timers {
		if !timer.ValidName(t.Name) {
			continue
		}
		where := fmt.Sprintf("timers[%d] %q", i, t.Name)
		for _, name := range t.InstanceNames() {
			if prev, dup := owner[name]; dup && (prev.sharded || t.Shards > 0) {
				errs = append(errs, fmt.Errorf("%w: %s: name: runtime timer %q is also made by %s", errkind.Invalid, where, name, prev.where))
			}
			owner[name] = namer{where, t.Shards > 0}
		}
	}
	seen := map[string]bool{}
	for i, t := range m.Timers {
		where := fmt.Sprintf("timers[%d]", i)
		if t.Name != "" {
			where += fmt.Sprintf(" %q", t.Name)
		}
		for _, err := range t.problems(m.Key(t.Name)) {
			errs = append(errs, fmt.Errorf("%w: %s: %v", errkind.Invalid, where, err))
		}
		if seen[t.Name] && t.Name != "" {
			errs = append(errs, fmt.Errorf("%w: %s: name: duplicate timer name", errkind.Invalid, where))
		}
		seen[t.Name] = true
	}
	errs = append(errs, m.calendarProblems()...)
	errs = append(errs, m.depGraphProblems()...)
	errs = append(errs, m.resourceProblems()...)
	return errors.Join(errs...)
}

// problems checks the timer k's definition; a schedule with H is resolved for k's shared
// instance (a tenant's instance resolves its own at publish).
func (t Timer) problems(k timer.Key) []error {
	var errs []error
	if !timer.ValidName(t.Name) {
		errs = append(errs, fmt.Errorf("name: %q must match [A-Za-z0-9_-]{1,128}", t.Name))
	}
	dst, err := schedule.ParseDST(t.DST)
	if err != nil {
		errs = append(errs, err)
	}
	if _, err := schedule.ParseIn(t.Schedule, t.Timezone, schedule.WithDST(dst), schedule.WithSeed(k.SpreadSeed())); errors.Is(err, schedule.ErrUnknownZone) {
		errs = append(errs, err) // "timezone: ..."
	} else if err != nil {
		errs = append(errs, fmt.Errorf("schedule: %v", err))
	}
	if t.Priority != nil && (*t.Priority < 1 || *t.Priority > 4) {
		errs = append(errs, fmt.Errorf("priority: %d is out of range 1 (highest) to 4 (lowest)", *t.Priority))
	}
	if t.Timeout != nil && (t.Timeout.Duration < time.Second || t.Timeout.Duration > 24*time.Hour) {
		errs = append(errs, fmt.Errorf("timeout: %s is out of range 1s..24h", t.Timeout.Duration))
	}
	if t.MaxRetries != nil && (*t.MaxRetries < 0 || *t.MaxRetries > 100) {
		errs = append(errs, fmt.Errorf("maxRetries: %d is out of range 0..100", *t.MaxRetries))
	}
	if t.RetryDelay != nil && (t.RetryDelay.Duration < 0 || t.RetryDelay.Duration > 24*time.Hour) {
		errs = append(errs, fmt.Errorf("retryDelay: %s is out of range 0..24h", t.RetryDelay.Duration))
	}
	if t.Misfire != "" && t.Misfire != timer.MisfireRunOnce && t.Misfire != timer.MisfireSkip {
		errs = append(errs, fmt.Errorf("misfire: %q; expected %q (default) or %q", t.Misfire, timer.MisfireRunOnce, timer.MisfireSkip))
	}
	if err := timer.ValidateOverlap(t.Overlap); err != nil {
		errs = append(errs, err)
	} else if t.Overlap == timer.OverlapCancelOther && t.Async {
		errs = append(errs, fmt.Errorf("overlap: %q needs a synchronous action: an async one (async: true) is stopped only by an operator (sundial stop)", t.Overlap))
	}
	if t.RetryBackoff != "" && t.RetryBackoff != timer.BackoffFixed && t.RetryBackoff != timer.BackoffExponential {
		errs = append(errs, fmt.Errorf("retryBackoff: %q; expected %q (default) or %q", t.RetryBackoff, timer.BackoffFixed, timer.BackoffExponential))
	}
	if t.Retry != "" {
		if _, _, err := ParseRetryCycle(t.Retry); err != nil {
			errs = append(errs, fmt.Errorf("retry: %v", err))
		} else if t.MaxRetries != nil || t.RetryDelay != nil {
			errs = append(errs, fmt.Errorf("retry: give either retry %q or maxRetries/retryDelay, not both", t.Retry))
		}
	}
	if t.Heartbeat != nil && (t.Heartbeat.Duration < time.Second || t.Heartbeat.Duration > 24*time.Hour) {
		errs = append(errs, fmt.Errorf("heartbeat: %s is out of range 1s..24h", t.Heartbeat.Duration))
	}
	if err := t.Action.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("action: %v", err))
	}
	errs = append(errs, t.Alerts.problems()...)
	errs = append(errs, t.autoPauseProblems()...)
	errs = append(errs, t.deadlineProblems()...)
	errs = append(errs, t.depProblems(k)...)
	errs = append(errs, t.itemProblems()...)
	errs = append(errs, t.Parameters.Problems()...)
	for k := range t.Properties {
		if k == "" || len(k) > 128 {
			errs = append(errs, fmt.Errorf("properties: key %q must be 1..128 characters", k))
		}
		if t.Shards > 0 && (k == PropShardIndex || k == PropShardTotal) {
			errs = append(errs, fmt.Errorf("properties: %s is set by shards: %d; remove it", k, t.Shards))
		}
	}
	if t.Shards < 0 || t.Shards > MaxShards {
		errs = append(errs, fmt.Errorf("shards: %d is out of range 1..%d (leave it out for one instance)", t.Shards, MaxShards))
	} else if t.Shards > 0 && !timer.ValidName(ShardName(t.Name, t.Shards-1)) && timer.ValidName(t.Name) {
		errs = append(errs, fmt.Errorf("shards: instance name %q is longer than 128 characters; shorten the name", ShardName(t.Name, t.Shards-1)))
	}
	return errs
}

// Sharding: the properties a sharded instance gets (the order-push design note's tt_index and tt_total).
const (
	PropShardIndex = "tt_index"
	PropShardTotal = "tt_total"
	MaxShards      = 100
)

// ShardName is the runtime timer name of shard i.
func ShardName(name string, i int) string { return fmt.Sprintf("%s-%d", name, i) }

// InstanceNames are the runtime timer names the entry makes: its name, or one per shard.
func (t Timer) InstanceNames() []string {
	if t.Shards <= 0 || t.Shards > MaxShards {
		return []string{t.Name}
	}
	out := make([]string, t.Shards)
	for i := range out {
		out[i] = ShardName(t.Name, i)
	}
	return out
}

// AppName is the manifest's app as written outside the program (timer.DefaultApp for the
// default app).
func (m Manifest) AppName() string { return timer.AppName(m.App) }

// Key is the key of the manifest app's timer name (no tenant), in its canonical form.
func (m Manifest) Key(name string) timer.Key {
	return timer.Key{App: m.App, Timer: name}
}

// Expand is Timer.Expand for this manifest's app: the instances' keys carry the app.
func (m Manifest) Expand(t Timer, tenants []string, d Defaults) []Desired {
	if t.Alerts == nil {
		t.Alerts = m.Alerts
	}
	return m.Resolve(t).ExpandFor(m.App, tenants, d)
}

// Desired is one runtime instance a manifest entry asks for.
type Desired struct {
	Key      timer.Key
	Settings timer.Settings
	Active   bool
	Entry    string // the manifest entry's name
}

// Expand returns the runtime instances of one entry: one per shard (or one), times one per
// tenant for a multi-tenant timer (none while no tenant is registered). Each shard's
// properties are its own copy, with tt_index and tt_total added.
func (t Timer) Expand(tenants []string, d Defaults) []Desired {
	return t.ExpandFor("", tenants, d)
}

// ExpandFor is Expand for the timer of app ("": the default app).
func (t Timer) ExpandFor(app string, tenants []string, d Defaults) []Desired {
	scope := []string{""}
	if t.MultiTenant {
		scope = tenants
	}
	base := t.Settings(d)
	base.Deps = t.deps(app)
	var out []Desired
	for i, name := range t.InstanceNames() {
		st := base
		if t.Shards > 0 {
			st.Properties = make(map[string]string, len(base.Properties)+2)
			for k, v := range base.Properties {
				st.Properties[k] = v
			}
			st.Properties[PropShardIndex] = fmt.Sprint(i)
			st.Properties[PropShardTotal] = fmt.Sprint(t.Shards)
		}
		for _, tenant := range scope {
			out = append(out, Desired{Key: timer.Key{App: app, Timer: name, Tenant: tenant}, Settings: st, Active: t.IsActive(), Entry: t.Name})
		}
	}
	return out
}

// Settings returns the timer's settings with defaults applied.
func (t Timer) Settings(d Defaults) timer.Settings {
	s := timer.Settings{
		Schedule: t.Schedule, Timezone: t.Timezone, DST: schedule.DST(t.DST).Stored(), Priority: timer.DefaultPriority,
		Timeout: d.Wait(), MaxRetries: d.MaxRetries, RetryDelay: d.RetryDelay,
		Action: t.Action, Properties: t.Properties, Misfire: t.Misfire,
	}
	if s.Misfire == "" {
		s.Misfire = timer.MisfireRunOnce
	}
	if t.Overlap != timer.OverlapSkip {
		s.Overlap = t.Overlap // skip, the default, is stored as nothing
	}
	s.RetryBackoff, s.Async = t.RetryBackoff, t.Async
	if s.RetryBackoff == "" {
		s.RetryBackoff = timer.BackoffFixed
	}
	if n, d, err := ParseRetryCycle(t.Retry); t.Retry != "" && err == nil {
		s.MaxRetries, s.RetryDelay = n, d
	}
	if t.Heartbeat != nil {
		s.Heartbeat = t.Heartbeat.Duration
	}
	if t.Priority != nil {
		s.Priority = *t.Priority
	}
	if t.Timeout != nil {
		s.Timeout = t.Timeout.Duration
	}
	if t.MaxRetries != nil {
		s.MaxRetries = *t.MaxRetries
	}
	if t.RetryDelay != nil {
		s.RetryDelay = t.RetryDelay.Duration
	}
	t.applyCalendar(&s)
	s.Alerts = t.Alerts.Rules()
	s.AutoPause = t.autoPause()
	s.Deadlines = t.deadlines()
	s.Parameters = t.Parameters
	s.Resources = t.ResourceUses
	return s
}

// IsActive reports the manifest's active flag (default true).
func (t Timer) IsActive() bool { return t.Active == nil || *t.Active }
