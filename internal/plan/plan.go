// Package plan works out, without touching AWS, what a set of timers will do and cost: the
// firings each instance's schedule makes over the coming days (schedule.Next itself, so
// time zones and daylight saving are the timers' own), how they bunch up per priority queue,
// the processor concurrency that keeps lateness within a second, and the month's usage and
// dollars with the benchmark's cost model (internal/cost). `sundial plan` prints it; the
// console's Environment Health shows the stack's estimate.
package plan

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/sundialhq/sundial/internal/cost"
	"github.com/sundialhq/sundial/internal/manifest"
	"github.com/sundialhq/sundial/internal/schedule"
	"github.com/sundialhq/sundial/internal/timer"
)

// Instance is one runtime timer instance (a shard, a tenant's copy) as the plan needs it.
type Instance struct {
	// App is the instance's app ("": the default app).
	App      string
	Timer    string
	Tenant   string
	Schedule string
	Timezone string
	DST      string // "", "shift" or "skip"
	Priority int    // 1..4 (0: timer.DefaultPriority)
	// MaxRetries bounds the retries a failed run gets (Input.FailureRate).
	MaxRetries int
	Active     bool
	// ItemBytes is its timer item's size (ItemBytes; 0: cost.TimerItemBytes).
	ItemBytes int
	// Count is how many like instances this one stands for (0: one): FromManifest gives a
	// manifest that makes more than MaxListedInstances one Instance per entry, standing for
	// its shards and tenants, so that a plan's memory grows with the manifest, not with the
	// instances it makes.
	Count int
	// Calendar, OnExcluded and Window: its business calendar and validity window, which
	// the firings per day apply.
	Calendar   *timer.Calendar
	OnExcluded string
	Window     timer.Window
}

// settings are what the instance's schedule is computed from.
func (in Instance) settings() timer.Settings {
	return timer.Settings{Schedule: in.Schedule, Timezone: in.Timezone, DST: in.DST, Calendar: in.Calendar, OnExcluded: in.OnExcluded, Window: in.Window}
}

// weight is the instances inst stands for.
func (inst Instance) weight() int { return max(inst.Count, 1) }

// ItemBytes estimates a timer item's size as DynamoDB bills it: the benchmark's measured
// item (cost.TimerItemBytes) and what this one stores beyond it — the name twice (key and
// attribute) and the tenant likewise, the schedule, time zone and DST policy, the action and
// its headers, the properties (a shard's tt_index and tt_total included). A failing timer's
// item also holds its last error, which is not counted.
func ItemBytes(name, tenant string, st timer.Settings) int {
	const (
		benchName     = len("L0000")
		benchSchedule = len("every 5s")
		benchURL      = len("http://127.0.0.1:9/bench")
	)
	n := cost.TimerItemBytes + 2*(len(name)-benchName) + len(st.Schedule) - benchSchedule
	if tenant != "" {
		n += 2*len(tenant) + len("tenant")
	}
	if st.Timezone != "" {
		n += len("timezone") + len(st.Timezone)
	}
	if st.DST != "" {
		n += len("dst") + len(st.DST)
	}
	n += calendarBytes(st)
	mapBytes := func(name string, m map[string]string) int {
		if len(m) == 0 {
			return 0
		}
		b := len(name) + 3
		for k, v := range m {
			b += 1 + len(k) + len(v)
		}
		return b
	}
	switch a := st.Action; {
	case a.HTTP != nil:
		n += len(a.HTTP.URL) - benchURL + mapBytes("headers", a.HTTP.Headers)
	case a.Lambda != nil:
		n += len("lambda") - len("http") + len("function") - len("url") + len(a.Lambda.Function) - benchURL
	}
	return max(n+mapBytes("properties", st.Properties), 1)
}

// MaxListedInstances is the most instances a plan lists one by one; a manifest that makes
// more is planned one row per entry (Instance.Count).
const MaxListedInstances = 10_000

// FromManifest expands a manifest's entries into their instances: shards, and one per tenant
// for multi-tenant entries (tenants: the manifest's when nil). The warnings name the
// multi-tenant entries that make no instance for want of tenants. Above MaxListedInstances,
// each entry is one Instance whose Count is its shards × tenants (and a warning says so).
func FromManifest(m manifest.Manifest, tenants []string, d manifest.Defaults) ([]Instance, []string) {
	if tenants == nil {
		tenants = m.Tenants
	}
	var out []Instance
	var warnings []string
	total := 0
	for _, t := range m.Timers {
		if t.MultiTenant && len(tenants) == 0 {
			warnings = append(warnings, fmt.Sprintf("%s is multi-tenant and no tenant is named: not counted (give the tenants)", t.Name))
		}
		total += copies(t, len(tenants))
	}
	if total > MaxListedInstances {
		return perEntry(m, tenants, d), append(warnings, fmt.Sprintf("the manifest makes %d instances: planned one row per entry standing for its shards × tenants (TENANT \"(N instances)\", --json \"count\"), all of them counted", total))
	}
	for _, t := range m.Timers {
		for _, in := range m.Resolve(t).Expand(tenants, d) {
			out = append(out, Instance{App: m.App, Timer: in.Key.Timer, Tenant: in.Key.Tenant, Schedule: in.Settings.Schedule,
				Timezone: in.Settings.Timezone, DST: in.Settings.DST, Priority: in.Settings.Priority,
				MaxRetries: in.Settings.MaxRetries, Active: in.Active, ItemBytes: ItemBytes(in.Key.Timer, in.Key.Tenant, in.Settings),
				Calendar: in.Settings.Calendar, OnExcluded: in.Settings.OnExcluded, Window: in.Settings.Window})
		}
	}
	return out, warnings
}

// copies is how many instances entry t makes for n tenants.
func copies(t manifest.Timer, n int) int {
	c := len(t.InstanceNames())
	if t.MultiTenant {
		c *= n
	}
	return c
}

// perEntry is one Instance per entry, standing for its copies; its item size is that of the
// last shard (the longest tt_index) for a tenant of the tenants' mean name length.
func perEntry(m manifest.Manifest, tenants []string, d manifest.Defaults) []Instance {
	tenant := ""
	if len(tenants) > 0 {
		sum := 0
		for _, name := range tenants {
			sum += len(name)
		}
		tenant = strings.Repeat("t", (sum+len(tenants)-1)/len(tenants))
	}
	out := make([]Instance, 0, len(m.Timers))
	for _, t := range m.Timers {
		n := copies(t, len(tenants))
		if n == 0 {
			continue
		}
		t = m.Resolve(t)
		st := t.Settings(d)
		names := t.InstanceNames()
		if t.Shards > 0 {
			st.Properties = maps.Clone(st.Properties)
			if st.Properties == nil {
				st.Properties = map[string]string{}
			}
			st.Properties[manifest.PropShardIndex] = fmt.Sprint(t.Shards - 1)
			st.Properties[manifest.PropShardTotal] = fmt.Sprint(t.Shards)
		}
		ten := ""
		if t.MultiTenant {
			ten = tenant
		}
		out = append(out, Instance{App: m.App, Timer: t.Name, Schedule: st.Schedule, Timezone: st.Timezone, DST: st.DST,
			Priority: st.Priority, MaxRetries: st.MaxRetries, Active: t.IsActive(), Count: n,
			ItemBytes: ItemBytes(names[len(names)-1], ten, st),
			Calendar:  st.Calendar, OnExcluded: st.OnExcluded, Window: st.Window})
	}
	return out
}

// FromStored converts the stack's stored instances (their effective settings, an operator's
// edits included).
func FromStored(ins []timer.Instance) []Instance {
	out := make([]Instance, 0, len(ins))
	for _, in := range ins {
		out = append(out, Instance{App: in.App, Timer: in.Timer, Tenant: in.Tenant, Schedule: in.Schedule, Timezone: in.Timezone,
			DST: in.DST, Priority: in.Priority, MaxRetries: in.MaxRetries, Active: in.Active, ItemBytes: ItemBytes(in.Timer, in.Tenant, in.Settings),
			Calendar: in.Calendar, OnExcluded: in.OnExcluded, Window: in.Window})
	}
	return out
}

// Input is what a plan is computed from.
type Input struct {
	Instances []Instance
	// Stack are the template parameters (cost.DefaultStack when zero).
	Stack cost.Stack
	// From starts the horizon; Days is its length (1..MaxDays).
	From time.Time
	Days int
	// FailureRate is the share of executions that fail (0..1); a failed run is retried up to
	// its MaxRetries, each retry failing at the same rate.
	FailureRate float64
	// PerFiringMs is the processor time a firing occupies (cost.PerFiringMs when zero).
	PerFiringMs float64
	// TargetUtilization is provisioned capacity's auto scaling target (cost.DefaultTargetUtilization when zero).
	TargetUtilization float64
	// Items are the item sizes (cost.DefaultItems when zero).
	Items cost.ItemSizes
	// Prices (cost.USEast1 when zero).
	Prices cost.Prices
	// Summary leaves the per-instance detail (Plan.Instances) out.
	Summary bool
	// Warnings are passed on to Plan.Warnings (FromManifest's).
	Warnings []string
	// AccountConcurrency is the account's concurrent executions quota in the stack's Region
	// (AccountConcurrency, AWS's default, when zero).
	AccountConcurrency int
}

// MaxDays bounds the horizon (the per-second histogram is kept for all of it).
const MaxDays = 31

// MaxInstances bounds the instances a plan counts (Σ Count): the per-second counts are int32.
const MaxInstances = 1_000_000_000

// MaxFirings bounds the firings enumerated (schedule.Next calls): a manifest of many distinct
// sub-minute schedules over a long horizon is refused rather than left running.
const MaxFirings = 200_000_000

// ErrInput is wrapped by the errors a bad Input gets.
var ErrInput = errors.New("plan")

// Plan is the result. Its JSON field names are stable (sundial plan --json):
//
//   - from, days, horizonSeconds: the horizon the firings were counted over;
//   - stack: the template parameters used; assumptions: the model's inputs;
//   - instances: per timer instance (null in a summary);
//   - priorities: per priority queue, P1..P4;
//   - month: a month's (cost.MonthDays) usage and dollars, firings and idle;
//   - warnings: what the plan could not count (multi-tenant timers without tenants, …).
type Plan struct {
	From           time.Time      `json:"from"`
	Days           int            `json:"days"`
	HorizonSeconds float64        `json:"horizonSeconds"`
	Stack          StackInfo      `json:"stack"`
	Assumptions    Assumptions    `json:"assumptions"`
	Instances      []InstancePlan `json:"instances"`
	Priorities     []PriorityPlan `json:"priorities"`
	Month          Month          `json:"month"`
	Warnings       []string       `json:"warnings"`
	// Crowded are the seconds of the first day on which CrowdedFirings or more instances
	// are due at once, busiest first (crowd.go).
	Crowded []CrowdedSecond `json:"crowded"`
}

// StackInfo are the template parameters the plan used.
type StackInfo struct {
	FetchTickMinutes float64 `json:"fetchTickMinutes"`
	// LookAheadSeconds is how far ahead a fetch tick covers (2 ticks).
	LookAheadSeconds float64 `json:"lookAheadSeconds"`
	DueShards        int     `json:"dueShards"`
	LogRetentionDays int     `json:"logRetentionDays"`
	MemoryMB         int     `json:"memoryMB"`
	// Concurrency is P1Concurrency..P4Concurrency as given (the template's defaults).
	Concurrency [4]int `json:"concurrency"`
	// ReservedConcurrency is the fetch's, recovery's and the log writer's reservations summed;
	// AccountConcurrency the account's quota it was checked against.
	ReservedConcurrency int `json:"reservedConcurrency"`
	AccountConcurrency  int `json:"accountConcurrency"`
}

// Assumptions are the model's inputs besides the schedules.
type Assumptions struct {
	FailureRate           float64 `json:"failureRate"`
	PerFiringMs           float64 `json:"perFiringMs"`
	RecordsPerInvocation  float64 `json:"recordsPerInvocation"`
	TimerItemBytes        int     `json:"timerItemBytes"`
	LogItemBytes          int     `json:"logItemBytes"`
	TargetUtilization     float64 `json:"targetUtilization"`
	LatenessBudgetSeconds float64 `json:"latenessBudgetSeconds"`
	Region                string  `json:"region"`
	PricesAsOf            string  `json:"pricesAsOf"`
}

// InstancePlan is one instance's firings.
type InstancePlan struct {
	// App is the instance's app ("default" for the default app).
	App      string `json:"app"`
	Timer    string `json:"timer"`
	Tenant   string `json:"tenant"`
	Priority int    `json:"priority"`
	Schedule string `json:"schedule"`
	Timezone string `json:"timezone"`
	DST      string `json:"dst"`
	Active   bool   `json:"active"`
	// Count is how many like instances the row stands for (1, or an entry's shards × tenants
	// when the manifest makes more than MaxListedInstances); Firings are each one's.
	Count int `json:"count"`
	// Firings in the horizon, and per day on average (Firings ÷ Days).
	Firings       int     `json:"firings"`
	FiringsPerDay float64 `json:"firingsPerDay"`
	// PerDay are the firings of each whole calendar day of the horizon in the timer's zone
	// (a daylight-saving day is 23 or 25 hours long); MinPerDay and MaxPerDay their range.
	PerDay    []DayCount `json:"perDay"`
	MinPerDay int        `json:"minPerDay"`
	MaxPerDay int        `json:"maxPerDay"`
	// IndexMoveShare is the share of finishes that move the due-index key (the next run lies
	// beyond the fetch's look-ahead): 0 for a frequent timer, 1 for a rare one.
	IndexMoveShare float64 `json:"indexMoveShare"`
	// ItemBytes is the timer item's estimated size (ItemBytes); WriteUnitsPerFiring a
	// successful firing's DynamoDB write units (4 frequent, 6 rare, with items under 1 KB).
	ItemBytes           int     `json:"itemBytes"`
	WriteUnitsPerFiring float64 `json:"writeUnitsPerFiring"`
}

// DayCount is one local day's firings.
type DayCount struct {
	Date    string `json:"date"` // YYYY-MM-DD in the timer's zone
	Firings int    `json:"firings"`
}

// PriorityPlan is one priority queue's load.
type PriorityPlan struct {
	Priority  int `json:"priority"`
	Instances int `json:"instances"` // active instances
	// FiringsPerDay and AvgFiringsPerSecond average the horizon's scheduled firings.
	FiringsPerDay       float64 `json:"firingsPerDay"`
	AvgFiringsPerSecond float64 `json:"avgFiringsPerSecond"`
	// PeakFiringsPerSecond are the most firings due in the same second, first at PeakAt.
	PeakFiringsPerSecond int        `json:"peakFiringsPerSecond"`
	PeakAt               *time.Time `json:"peakAt"`
	// Concurrency keeps the peak second's p99 lateness within the budget (cost.Concurrency:
	// ceil(peak × perFiringMs / 1000 / 1 s), at least 2); TemplateConcurrency is the stack's
	// PnConcurrency it would replace.
	Concurrency         int `json:"concurrency"`
	TemplateConcurrency int `json:"templateConcurrency"`
}

// Month is a month's (cost.MonthDays) usage and dollars.
type Month struct {
	Days int `json:"days"`
	// Executions are the scheduled firings and their Retries; Failed executions fail.
	Executions float64 `json:"executions"`
	Retries    float64 `json:"retries"`
	Failed     float64 `json:"failed"`
	// IndexMoves are the finishes that move a due-index key (the fetch then sends the
	// firing); the rest of the firings are sent by the finisher.
	IndexMoves           float64 `json:"indexMoves"`
	ProcessorInvocations float64 `json:"processorInvocations"`
	LogWriterInvocations float64 `json:"logWriterInvocations"`
	// FiringsUsage is what the firings use, IdleUsage what the stack uses with nothing due
	// (fetch and recovery ticks, the pollers' empty receives), TotalUsage both (cost.Usage:
	// requests, writeUnits, readUnits, sqsRequests, lambdaRequests, lambdaGBSeconds,
	// logIngestBytes, storageGBMonths).
	FiringsUsage cost.Usage `json:"firingsUsage"`
	IdleUsage    cost.Usage `json:"idleUsage"`
	TotalUsage   cost.Usage `json:"totalUsage"`
	// OnDemand and Provisioned price TotalUsage with DynamoDB on-demand and on provisioned
	// capacity (auto scaling at the target utilization).
	OnDemand    Priced `json:"onDemand"`
	Provisioned Priced `json:"provisioned"`
	// Capacity is the provisioned capacity the month needs on average.
	Capacity cost.Provisioned `json:"capacity"`
	// PeakWriteUnitsPerSecond is the busiest second's write units: above Capacity.WCU it
	// draws on burst capacity (up to cost.BurstSeconds of unused capacity);
	// PeakExceedsBurst says it needs more than that (provisioned, those writes would be
	// throttled and retried, and the firings late).
	PeakWriteUnitsPerSecond float64 `json:"peakWriteUnitsPerSecond"`
	PeakExceedsBurst        bool    `json:"peakExceedsBurst"`
	// PeakTimersWriteUnitsPerSecond and PeakLogWriteUnitsPerSecond split the busiest
	// second's write units between the timers table (claims and finishes) and the log table
	// (entries and pages): with Capacity=Provisioned each is held to its table's maximum
	// (Stack.TimersWriteMax, Stack.LogWriteMax), and the plan warns above it.
	PeakTimersWriteUnitsPerSecond float64 `json:"peakTimersWriteUnitsPerSecond"`
	PeakLogWriteUnitsPerSecond    float64 `json:"peakLogWriteUnitsPerSecond"`
}

// Priced is a month's bill.
type Priced struct {
	// USD is the month's total; IdleUSD what the stack would cost with nothing due.
	USD     float64     `json:"usd"`
	IdleUSD float64     `json:"idleUsd"`
	Lines   []cost.Line `json:"lines"`
}

// group is the instances that share a schedule: their firings are enumerated once.
type group struct {
	schedule, timezone, dst string
	st                      timer.Settings // the schedule, zone and policy, calendar and window
	members                 []int          // indexes into Input.Instances
	key                     timer.Key      // the first member's: H is resolved for it (crowd.go)
}

// Compute works the plan out. It fails only on bad input: a schedule or time zone that does
// not parse (an invalid manifest is refused before), or parameters out of range. Its steps:
// enumerate the horizon's firings (countFirings), their priorities and batching (batch), the month
// they make and its bill (month), and the warnings.
func Compute(in Input) (Plan, error) {
	if err := in.defaults(); err != nil {
		return Plan{}, err
	}
	horizon := time.Duration(in.Days) * 24 * time.Hour
	p := newPlan(in, horizon)
	f, err := countFirings(in, horizon)
	if err != nil {
		return Plan{}, err
	}
	if !in.Summary {
		p.Instances = f.perInst
	}
	p.warn(in)
	var b batches
	p.Priorities, b = f.batch(in, horizon)
	f.addPageShare(b)
	m := f.month(in, horizon, b, p.Priorities)
	p.capacityWarnings(in, m)
	p.limitWarnings(in, m, float64(b.peak))
	p.accountWarnings(in)
	p.crowdWarnings(in)
	p.Month = m
	return p, nil
}

// newPlan is the plan's header: the horizon, the stack and the assumptions.
func newPlan(in Input, horizon time.Duration) Plan {
	return Plan{
		From: in.From, Days: in.Days, HorizonSeconds: horizon.Seconds(),
		Stack: StackInfo{FetchTickMinutes: in.Stack.FetchTick.Minutes(), LookAheadSeconds: in.Stack.LookAhead().Seconds(),
			DueShards: in.Stack.DueShards, LogRetentionDays: in.Stack.LogRetentionDays, MemoryMB: in.Stack.MemoryMB, Concurrency: in.Stack.Concurrency,
			ReservedConcurrency: in.Stack.ReservedConcurrency, AccountConcurrency: in.AccountConcurrency},
		Assumptions: Assumptions{FailureRate: in.FailureRate, PerFiringMs: in.PerFiringMs, RecordsPerInvocation: cost.RecordsPerInvocation,
			TimerItemBytes: in.Items.Timer, LogItemBytes: in.Items.Log, TargetUtilization: in.TargetUtilization,
			LatenessBudgetSeconds: cost.LatenessBudgetSeconds, Region: in.Prices.Region, PricesAsOf: in.Prices.AsOf},
		Warnings: append([]string{}, in.Warnings...),
	}
}

// groupBySchedule groups the active instances by schedule: instances with the same schedule
// fire together, so each schedule is enumerated once.
func groupBySchedule(instances []Instance) []*group {
	var groups []*group
	byKey := map[string]*group{}
	for i, inst := range instances {
		if !inst.Active {
			continue
		}
		k := inst.scheduleKey()
		g := byKey[k]
		if g == nil {
			g = &group{schedule: inst.Schedule, timezone: inst.Timezone, dst: inst.DST, st: inst.settings(), key: inst.key()}
			byKey[k] = g
			groups = append(groups, g)
		}
		g.members = append(g.members, i)
	}
	return groups
}

// firings is what the horizon's firings come to: per priority, the firings due in each
// second and those the fetch sends in each tick; each instance's plan; and the totals over
// the horizon, each weighted by the instances an entry stands for.
type firings struct {
	hist    [4][]int32   // firings due per priority and second of the horizon
	fetched [4][]float64 // firings the fetch sends per priority and tick
	perInst []InstancePlan
	// scheduled firings, the extra executions of their retries, the executions that fail
	scheduled, retries, failed float64
	moves                      float64 // finishes that move a due key
	stale                      float64 // instance-minutes with the due key in the past
	writeKB, readKB            float64 // Σ executions × the instance's timer item in write and read units
}

// countFirings enumerates every schedule's firings over the horizon (at most MaxFirings in all).
func countFirings(in Input, horizon time.Duration) (*firings, error) {
	end := in.From.Add(horizon)
	seconds := int(horizon / time.Second)
	tickSecs := in.Stack.FetchTick.Seconds()
	ticks := int(math.Ceil(horizon.Seconds()/tickSecs)) + 1
	budget := MaxFirings
	f := &firings{perInst: make([]InstancePlan, len(in.Instances))}
	for i, inst := range in.Instances {
		f.perInst[i] = InstancePlan{App: timer.AppName(inst.App), Timer: inst.Timer, Tenant: inst.Tenant, Priority: inst.Priority, Schedule: inst.Schedule,
			Timezone: zoneName(inst.Timezone), DST: dstName(inst.DST), Active: inst.Active, Count: inst.weight(), PerDay: []DayCount{}, ItemBytes: inst.ItemBytes}
	}
	for _, g := range groupBySchedule(in.Instances) {
		counts := [4]int32{}
		for _, m := range g.members {
			counts[in.Instances[m].Priority-1] += int32(in.Instances[m].weight())
		}
		for pr, c := range counts {
			if c > 0 && f.hist[pr] == nil {
				f.hist[pr] = make([]int32, seconds)
				f.fetched[pr] = make([]float64, ticks)
			}
		}
		r, err := enumerate(g, in.From, end, in.Stack.FetchTick, &budget, func(at time.Time, sentByFetch float64) {
			sec := int(at.Sub(in.From) / time.Second)
			tick := int(at.Sub(in.From).Seconds() / tickSecs)
			for pr, c := range counts {
				if c > 0 {
					f.hist[pr][sec] += c
					f.fetched[pr][tick] += float64(c) * sentByFetch
				}
			}
		})
		if err != nil {
			return nil, fmt.Errorf("%w: timer %q: %w", ErrInput, in.Instances[g.members[0]].Timer, err)
		}
		for _, m := range g.members {
			f.add(in, m, r)
		}
	}
	return f, nil
}

// add is instance m's share of its schedule's firings r: its plan and its part of the totals.
func (f *firings) add(in Input, m int, r result) {
	ip := &f.perInst[m]
	ip.Firings, ip.PerDay, ip.MinPerDay, ip.MaxPerDay = r.firings, r.perDay, r.minDay, r.maxDay
	ip.FiringsPerDay = float64(r.firings) / float64(in.Days)
	if r.firings > 0 {
		ip.IndexMoveShare = r.moves / float64(r.firings)
	}
	timerKB := cost.WriteKB(ip.ItemBytes)
	ip.WriteUnitsPerFiring = (cost.ClaimWrites+cost.FinishWrites)*timerKB + cost.LogWrites*cost.WriteKB(in.Items.Log) +
		ip.IndexMoveShare*cost.DueIndexMoveWrites
	ex, fl := retryFactors(in.FailureRate, in.Instances[m].MaxRetries)
	w := float64(ip.Count)
	executions := float64(r.firings) * ex * w
	f.writeKB += executions * timerKB
	f.readKB += executions * cost.ReadKB(ip.ItemBytes)
	f.scheduled += float64(r.firings) * w
	f.retries += float64(r.firings) * (ex - 1) * w
	f.failed += float64(r.firings) * fl * w
	f.moves += r.moves * w
	f.stale += r.staleMinutes * w
}

// batches is how the horizon's executions batch: the processor's invocations, the fetch's
// sends, the log writer's invocations and requests, retries included; and the busiest
// second's firings over all priorities.
type batches struct {
	invocations, fetchSends     float64
	logInvocations, logRequests float64
	peak                        int32
}

// batch works out each priority's plan (averages, the peak second, the concurrency it needs)
// and the batching of the whole horizon.
func (f *firings) batch(in Input, horizon time.Duration) ([]PriorityPlan, batches) {
	var b batches
	var priorities []PriorityPlan
	total := make([]int32, int(horizon/time.Second))
	for pr := range 4 {
		pp := PriorityPlan{Priority: pr + 1, TemplateConcurrency: in.Stack.Concurrency[pr]}
		for _, inst := range in.Instances {
			if inst.Active && inst.Priority == pr+1 {
				pp.Instances += inst.weight()
			}
		}
		var sum int64
		for s, n := range f.hist[pr] {
			if n == 0 {
				continue
			}
			sum += int64(n)
			total[s] += n
			b.invocations += math.Ceil(float64(n) / cost.RecordsPerInvocation)
			if int(n) > pp.PeakFiringsPerSecond {
				pp.PeakFiringsPerSecond = int(n)
				at := in.From.Add(time.Duration(s) * time.Second).UTC()
				pp.PeakAt = &at
			}
		}
		for _, x := range f.fetched[pr] {
			b.fetchSends += math.Ceil(x/cost.SQSBatch - 1e-9)
		}
		pp.FiringsPerDay = float64(sum) / float64(in.Days)
		pp.AvgFiringsPerSecond = float64(sum) / horizon.Seconds()
		pp.Concurrency = cost.Concurrency(float64(pp.PeakFiringsPerSecond), in.PerFiringMs)
		priorities = append(priorities, pp)
	}
	for _, n := range total {
		if n > 0 {
			b.logInvocations += math.Ceil(float64(n) / cost.LogWriterBatch)
			b.logRequests += math.Ceil(float64(n) / cost.BatchWriteItems)
			b.peak = max(b.peak, n)
		}
	}
	// Retries batch like the firings they retry.
	if f.scheduled > 0 {
		k := 1 + f.retries/f.scheduled
		b.invocations, b.logInvocations, b.logRequests = b.invocations*k, b.logInvocations*k, b.logRequests*k
	}
	return priorities, b
}

// addPageShare adds to each instance's write units a firing's share of the page each log
// writer invocation writes, listing its executions (a lone execution's page when nothing
// fires).
func (f *firings) addPageShare(b batches) {
	share := cost.PageWriteUnitsPerFiring(1)
	if b.logInvocations > 0 {
		share = cost.PageWriteUnitsPerFiring((f.scheduled + f.retries) / b.logInvocations)
	}
	for i := range f.perInst {
		f.perInst[i].WriteUnitsPerFiring += share
	}
}

// month is a month of the horizon's load and of the idle stack, billed on demand and
// provisioned. The timer item's size: its mean over the active instances (stored once each),
// and in units the mean over the executions.
func (f *firings) month(in Input, horizon time.Duration, b batches, priorities []PriorityPlan) Month {
	k := cost.MonthSeconds / horizon.Seconds()
	items, active := in.Items, 0
	sumBytes := 0
	for _, inst := range in.Instances {
		if inst.Active {
			sumBytes += inst.ItemBytes * inst.weight()
			active += inst.weight()
		}
	}
	if active > 0 {
		items.Timer = (sumBytes + active - 1) / active
	}
	var timerKB, timerReadKB float64
	if ex := f.scheduled + f.retries; ex > 0 {
		timerKB, timerReadKB = f.writeKB/ex, f.readKB/ex
	}
	load := cost.Load{
		Seconds: cost.MonthSeconds, Instances: countActive(in.Instances),
		Executions: (f.scheduled + f.retries) * k, Failed: f.failed * k, IndexMoves: f.moves * k, StaleKeyMinutes: f.stale * k,
		ProcessorInvocations: b.invocations * k, FetchSends: b.fetchSends * k,
		LogWriterInvocations: b.logInvocations * k, LogWriterRequests: b.logRequests * k,
		Items: items, TimerKB: timerKB, TimerReadKB: timerReadKB, PerFiringMs: in.PerFiringMs, Stack: in.Stack,
	}
	idleStack := in.Stack
	for i, pp := range priorities {
		// The pollers: the stack's concurrency, raised to what the load needs.
		if pp.Instances > 0 {
			idleStack.Concurrency[i] = max(idleStack.Concurrency[i], pp.Concurrency)
		}
	}
	m := Month{Days: cost.MonthDays, Executions: load.Executions, Retries: f.retries * k, Failed: load.Failed,
		IndexMoves: load.IndexMoves, ProcessorInvocations: load.ProcessorInvocations, LogWriterInvocations: load.LogWriterInvocations}
	m.FiringsUsage = cost.Steady(load)
	m.IdleUsage = cost.Idle(cost.ModelIdle(idleStack), idleStack, cost.MonthSeconds)
	m.TotalUsage = m.FiringsUsage.Add(m.IdleUsage)
	od, idleOD := in.Prices.Bill(m.TotalUsage), in.Prices.Bill(m.IdleUsage)
	m.OnDemand = Priced{USD: od.Total, IdleUSD: idleOD.Total, Lines: od.Lines}
	pv := in.Prices.BillProvisioned(m.TotalUsage, cost.MonthSeconds, in.TargetUtilization)
	idlePV := in.Prices.BillProvisioned(m.IdleUsage, cost.MonthSeconds, in.TargetUtilization)
	m.Provisioned = Priced{USD: pv.Total, IdleUSD: idlePV.Total, Lines: pv.Lines}
	m.Capacity = cost.ProvisionedFor(m.TotalUsage, cost.MonthSeconds, in.TargetUtilization)
	if load.Executions > 0 {
		m.PeakWriteUnitsPerSecond = float64(b.peak) * m.FiringsUsage.WriteUnits / load.Executions
		m.PeakExceedsBurst = m.PeakWriteUnitsPerSecond-m.Capacity.WCU > cost.BurstSeconds*m.Capacity.WCU
		timersShare := (load.Executions*(cost.ClaimWrites+cost.FinishWrites)*timerKB + load.IndexMoves*cost.DueIndexMoveWrites) / m.FiringsUsage.WriteUnits
		m.PeakTimersWriteUnitsPerSecond = m.PeakWriteUnitsPerSecond * timersShare
		m.PeakLogWriteUnitsPerSecond = m.PeakWriteUnitsPerSecond - m.PeakTimersWriteUnitsPerSecond
	}
	return m
}

// capacityWarnings warns when, with Capacity=Provisioned, the busiest second needs more write
// units on a table than its template maximum.
func (p *Plan) capacityWarnings(in Input, m Month) {
	if m.Executions <= 0 {
		return
	}
	for _, t := range []struct {
		table, param string
		need         float64
		max          int
	}{
		{"timers", "TimersWriteCapacityMax", m.PeakTimersWriteUnitsPerSecond, in.Stack.TimersWriteMax},
		{"log", "LogWriteCapacityMax", m.PeakLogWriteUnitsPerSecond, in.Stack.LogWriteMax},
	} {
		if want := math.Ceil(t.need / in.TargetUtilization); t.need > float64(t.max) {
			p.Warnings = append(p.Warnings, fmt.Sprintf("with Capacity=Provisioned, the busiest second needs %.0f write units on the %s table, above %s (%d): "+
				"a peak longer than the burst capacity is throttled and late; raise %s to %.0f (the peak at TargetUtilization %.0f%%)",
				t.need, t.table, t.param, t.max, t.param, want, 100*in.TargetUtilization))
		}
	}
}

func (in *Input) defaults() error {
	if in.Stack == (cost.Stack{}) {
		in.Stack = cost.DefaultStack()
	}
	def := cost.DefaultStack()
	if in.Stack.FetchTick <= 0 {
		in.Stack.FetchTick = def.FetchTick
	}
	if in.Stack.DueShards <= 0 {
		in.Stack.DueShards = def.DueShards
	}
	if in.Stack.LogRetentionDays <= 0 {
		in.Stack.LogRetentionDays = def.LogRetentionDays
	}
	if in.Stack.MemoryMB <= 0 {
		in.Stack.MemoryMB = def.MemoryMB
	}
	if in.Stack.Concurrency == ([4]int{}) {
		in.Stack.Concurrency = def.Concurrency
	}
	if in.Stack.TimersWriteMax <= 0 {
		in.Stack.TimersWriteMax = def.TimersWriteMax
	}
	if in.Stack.LogWriteMax <= 0 {
		in.Stack.LogWriteMax = def.LogWriteMax
	}
	if in.Days == 0 {
		in.Days = 7
	}
	if in.AccountConcurrency == 0 {
		in.AccountConcurrency = AccountConcurrency
	}
	if in.PerFiringMs == 0 {
		in.PerFiringMs = cost.PerFiringMs
	}
	if in.TargetUtilization == 0 {
		in.TargetUtilization = cost.DefaultTargetUtilization
	}
	if in.Items == (cost.ItemSizes{}) {
		in.Items = cost.DefaultItems()
	}
	if in.Prices == (cost.Prices{}) {
		in.Prices = cost.USEast1
	}
	if in.AccountConcurrency < 1 {
		return fmt.Errorf("%w: account concurrency %d: the account's concurrent executions quota is 1 or more", ErrInput, in.AccountConcurrency)
	}
	if in.Stack.ReservedConcurrency < 0 {
		return fmt.Errorf("%w: reserved concurrency %d is negative", ErrInput, in.Stack.ReservedConcurrency)
	}
	if in.From.IsZero() {
		in.From = time.Now()
	}
	in.From = in.From.Truncate(time.Second)
	switch {
	case in.Days < 1 || in.Days > MaxDays:
		return fmt.Errorf("%w: days %d is out of range 1..%d", ErrInput, in.Days, MaxDays)
	case in.FailureRate < 0 || in.FailureRate > 1 || math.IsNaN(in.FailureRate):
		return fmt.Errorf("%w: failure rate %v is out of range 0..1", ErrInput, in.FailureRate)
	case in.PerFiringMs < 0 || in.PerFiringMs > 900_000 || math.IsNaN(in.PerFiringMs):
		return fmt.Errorf("%w: per-firing time %v ms is out of range 0..900000", ErrInput, in.PerFiringMs)
	case in.TargetUtilization < 0.2 || in.TargetUtilization > 0.9 || math.IsNaN(in.TargetUtilization):
		return fmt.Errorf("%w: target utilization %v is out of range 0.2..0.9 (DynamoDB auto scaling's 20%%..90%%)", ErrInput, in.TargetUtilization)
	}
	ins := make([]Instance, len(in.Instances))
	total := 0
	for i, inst := range in.Instances {
		if inst.Count < 0 || inst.Count > MaxInstances {
			return fmt.Errorf("%w: timer %q: count %d is out of range 0..%d", ErrInput, inst.Timer, inst.Count, MaxInstances)
		}
		if total += inst.weight(); total > MaxInstances {
			return fmt.Errorf("%w: more than %d timer instances: plan fewer tenants or entries", ErrInput, MaxInstances)
		}
		if inst.Priority == 0 {
			inst.Priority = timer.DefaultPriority
		}
		if inst.ItemBytes <= 0 {
			inst.ItemBytes = in.Items.Timer
		}
		if inst.Priority < 1 || inst.Priority > 4 {
			return fmt.Errorf("%w: timer %q: priority %d is out of range 1..4", ErrInput, inst.Timer, inst.Priority)
		}
		ins[i] = inst
	}
	in.Instances = ins
	return nil
}

// result is one schedule's firings over the horizon.
type result struct {
	firings        int
	perDay         []DayCount
	minDay, maxDay int
	moves          float64 // finishes expected to move the due key
	staleMinutes   float64 // minutes the due key lies in the past
}

// enumerate walks a schedule's firings in [from, end) with schedule.Next, calling fire with
// each and the chance that the fetch sends it (that the finish before it moved the due key).
// It counts the firings of each whole local day of the horizon, the finishes' expected
// moves, and the minutes the due key spends in the past.
func enumerate(g *group, from, end time.Time, tick time.Duration, budget *int, fire func(at time.Time, sentByFetch float64)) (result, error) {
	if _, err := schedule.ParseDST(g.dst); err != nil {
		return result{}, err
	}
	sch, err := g.st.ParseScheduleFor(g.key)
	if err != nil {
		return result{}, err
	}
	loc, _ := schedule.LoadLocation(g.timezone) // ParseIn loaded it: the local days are its
	// Whole local days: from the first local midnight at or after `from`.
	lf := from.In(loc)
	day := time.Date(lf.Year(), lf.Month(), lf.Day(), 0, 0, 0, 0, loc)
	if day.Before(from) {
		day = time.Date(lf.Year(), lf.Month(), lf.Day()+1, 0, 0, 0, 0, loc)
	}
	var days []time.Time // day starts; the last is the end of the last whole day
	for d := day; !d.After(end); d = time.Date(d.Year(), d.Month(), d.Day()+1, 0, 0, 0, 0, loc) {
		days = append(days, d)
	}
	r := result{perDay: []DayCount{}}
	counts := make([]int, max(len(days)-1, 0))

	next, ok := sch.Next(from.Add(-time.Nanosecond))
	prevMove := -1.0
	di := 0
	for ok && next.Before(end) {
		if *budget--; *budget < 0 {
			return result{}, fmt.Errorf("more than %d firings to enumerate: plan fewer days", MaxFirings)
		}
		at := next
		next, ok = sch.Next(at)
		gap := time.Duration(0)
		if ok {
			gap = next.Sub(at)
		}
		move := cost.MoveProbability(gap, tick)
		if prevMove < 0 {
			prevMove = move // the firing before the horizon: assume it was like this one
		}
		fire(at, prevMove)
		r.firings++
		r.moves += move
		if ok {
			r.staleMinutes += (1 - move) * min(gap, end.Sub(at)).Minutes()
		}
		prevMove = move
		for di < len(counts) && !at.Before(days[di+1]) {
			di++
		}
		if di < len(counts) && !at.Before(days[di]) {
			counts[di]++
		}
	}
	for i, c := range counts {
		r.perDay = append(r.perDay, DayCount{Date: days[i].Format(time.DateOnly), Firings: c})
	}
	if len(counts) > 0 {
		r.minDay, r.maxDay = slices.Min(counts), slices.Max(counts)
	}
	return r, nil
}

// retryFactors are, per scheduled firing, the executions (the run and its retries: each
// retry happens when all before it failed) and the failed executions, for a failure rate f
// and up to n retries: Σ f^k for k = 0..n, and Σ f^k for k = 1..n+1.
func retryFactors(f float64, n int) (executions, failed float64) {
	pow := 1.0
	for range n + 1 {
		executions += pow
		pow *= f
		failed += pow
	}
	return executions, failed
}

func (p *Plan) warn(in Input) {
	inactive := 0
	for _, inst := range in.Instances {
		if !inst.Active {
			inactive += inst.weight()
		}
	}
	if inactive > 0 {
		p.Warnings = append(p.Warnings, fmt.Sprintf("%d inactive instances are not counted", inactive))
	}
}

func countActive(ins []Instance) int {
	n := 0
	for _, in := range ins {
		if in.Active {
			n += in.weight()
		}
	}
	return n
}

func zoneName(tz string) string {
	if tz == "" {
		return "UTC"
	}
	return tz
}

func dstName(d string) string {
	if d == "" {
		return string(schedule.DSTShift)
	}
	return d
}

// calendarBytes is what a business calendar, its policy, a validity window and a misfire
// window add to an instance's item: the calendar's rules are stored in it.
func calendarBytes(st timer.Settings) int {
	n := 0
	if c := st.Calendar; c != nil {
		n += len("calendar") + 3 + len("name") + len(c.Name)
		for name, l := range map[string][]string{"dates": c.Dates, "yearly": c.Yearly, "ranges": c.Ranges, "weekdays": c.Weekdays} {
			if len(l) > 0 {
				n += len(name) + 3
				for _, v := range l {
					n += 1 + len(v)
				}
			}
		}
	}
	if st.OnExcluded != "" {
		n += len("onExcluded") + len(st.OnExcluded)
	}
	for name, set := range map[string]bool{"startAt": !st.Start.IsZero(), "endAt": !st.End.IsZero(), "misfireAfterMs": st.MisfireAfter > 0} {
		if set {
			n += len(name) + 8
		}
	}
	return n
}
