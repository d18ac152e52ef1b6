package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/sundialhq/sundial"
	"github.com/sundialhq/sundial/internal/console"
	"github.com/sundialhq/sundial/internal/cost"
	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/manifest"
	"github.com/sundialhq/sundial/internal/plan"
	"github.com/sundialhq/sundial/internal/timer"
)

// logRetentionValues are the LogRetentionDays the template allows (CloudWatch Logs'
// retention values).
var logRetentionValues = []int{1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653}

// cmdPlan works out offline what a manifest's timers will do and cost (internal/plan): the
// stack's parameters come from flags whose defaults are template.yaml's. --json prints
// plan.Plan, whose fields are documented there.
func cmdPlan(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("plan", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print every number as JSON (fields: internal/plan.Plan)")
	fromFlag := fs.String("from", "", "start of the horizon, RFC 3339 (default now)")
	days := fs.Int("days", 7, fmt.Sprintf("days to count the firings over, 1..%d", plan.MaxDays))
	// The template's parameters are the flags' defaults: the template this binary carries.
	def, err := sundial.Defaults()
	if err != nil {
		return err
	}
	n := func(param string) int { v, _ := strconv.Atoi(def[param]); return v }
	tick := fs.Int("fetch-tick-minutes", n("FetchTickMinutes"), "template FetchTickMinutes, 1..7 (the fetch looks ahead twice this)")
	shards := fs.Int("due-shards", n("DueShards"), "template DueShards, 1..64")
	retention := fs.Int("log-retention-days", n("LogRetentionDays"), "template LogRetentionDays")
	concurrency := fs.String("concurrency", def["P1Concurrency"]+","+def["P2Concurrency"]+","+def["P3Concurrency"]+","+def["P4Concurrency"], "template P1Concurrency..P4Concurrency: the queues' pollers")
	maxRetries := fs.Int("default-max-retries", n("DefaultMaxRetries"), "template DefaultMaxRetries: retries of a timer that sets none")
	tenants := fs.String("tenants", "", "tenants of the multi-tenant timers: a count N or names a,b,c (default: the manifest's tenants:)")
	failure := fs.Float64("failure-rate", 0, "share of executions that fail, 0..1 (each failure is retried up to the timer's retries)")
	perFiring := fs.Float64("per-firing-ms", cost.PerFiringMs, "processor time a firing occupies, ms (measured by make bench with an action that answers at once; add your action's duration ÷ 3)")
	timersMax := fs.Int("timers-write-capacity-max", n("TimersWriteCapacityMax"), "template TimersWriteCapacityMax (Capacity=Provisioned): the timers table's write units at most")
	logMax := fs.Int("log-write-capacity-max", n("LogWriteCapacityMax"), "template LogWriteCapacityMax (Capacity=Provisioned): the log table's write units at most")
	target := fs.Int("target-utilization", n("TargetUtilization"), "template TargetUtilization: percent of provisioned capacity auto scaling keeps in use, 20..90")
	quota := fs.Int("account-concurrency", plan.AccountConcurrency, "the account's Lambda concurrent executions quota in the stack's Region (aws lambda get-account-settings: AccountLimit.ConcurrentExecutions)")
	fetchReserved := fs.Int("fetch-reserved-concurrency", n("FetchReservedConcurrency"), "template FetchReservedConcurrency, 0..1000")
	recoveryReserved := fs.Int("recovery-reserved-concurrency", n("RecoveryReservedConcurrency"), "template RecoveryReservedConcurrency, 0..1000")
	logWriterReserved := fs.Int("log-writer-reserved-concurrency", n("LogWriterReservedConcurrency"), "template LogWriterReservedConcurrency, 0..1000")
	if err := parse(fs, args); err != nil {
		return err
	}
	path, err := onePositional(fs, "manifest path")
	if err != nil {
		return err
	}
	if *days < 1 || *days > plan.MaxDays {
		return usageErr("plan: --days %d is out of range 1..%d", *days, plan.MaxDays)
	}
	if *perFiring <= 0 {
		return usageErr("plan: --per-firing-ms %v: the per-firing time must be positive", *perFiring)
	}
	if *target < 20 || *target > 90 {
		return usageErr("plan: --target-utilization %d is out of range 20..90 (percent)", *target)
	}
	in := plan.Input{Days: *days, FailureRate: *failure, PerFiringMs: *perFiring, TargetUtilization: float64(*target) / 100, AccountConcurrency: *quota}
	if *fromFlag != "" {
		if in.From, err = time.Parse(time.RFC3339, *fromFlag); err != nil {
			return usageErr("plan: --from %q is not RFC 3339", *fromFlag)
		}
	}
	if *tick < 1 || *tick > 7 {
		return usageErr("plan: --fetch-tick-minutes %d is out of range 1..7", *tick)
	}
	if *shards < 1 || *shards > 64 {
		return usageErr("plan: --due-shards %d is out of range 1..64", *shards)
	}
	if !contains(logRetentionValues, *retention) {
		return usageErr("plan: --log-retention-days %d is not one the template allows (%s)", *retention, joinInts(logRetentionValues))
	}
	if *maxRetries < 0 || *maxRetries > 100 {
		return usageErr("plan: --default-max-retries %d is out of range 0..100", *maxRetries)
	}
	if *timersMax < 1 || *logMax < 1 {
		return usageErr("plan: --timers-write-capacity-max and --log-write-capacity-max must be 1 or more (write units)")
	}
	if *quota < 1 {
		return usageErr("plan: --account-concurrency %d: the account's concurrent executions quota is 1 or more", *quota)
	}
	for _, r := range []struct {
		flag string
		v    int
	}{{"--fetch-reserved-concurrency", *fetchReserved}, {"--recovery-reserved-concurrency", *recoveryReserved}, {"--log-writer-reserved-concurrency", *logWriterReserved}} {
		if r.v < 0 || r.v > 1000 {
			return usageErr("plan: %s %d is out of range 0..1000 (0: no reservation)", r.flag, r.v)
		}
	}
	capacity, err := console.ParseCapacity(*concurrency)
	if err != nil {
		return usageErr("plan: --concurrency: %v", err)
	}
	for i, c := range capacity {
		if c < cost.MinConcurrency {
			return usageErr("plan: --concurrency: P%d is %d; an SQS event source takes at least %d", i+1, c, cost.MinConcurrency)
		}
	}
	var names []string
	if *tenants != "" {
		if names, err = tenantList(*tenants); err != nil {
			return err
		}
	}
	m, err := manifest.Load(path)
	if err != nil {
		if !errors.Is(err, errkind.Invalid) {
			err = fmt.Errorf("%w: %w", errkind.Invalid, err) // a file that cannot be read is bad input too
		}
		return err
	}
	in.Stack = cost.Stack{FetchTick: time.Duration(*tick) * time.Minute, DueShards: *shards, LogRetentionDays: *retention,
		MemoryMB: cost.DefaultStack().MemoryMB, Concurrency: capacity, TimersWriteMax: *timersMax, LogWriteMax: *logMax,
		ReservedConcurrency: *fetchReserved + *recoveryReserved + *logWriterReserved}
	in.Instances, in.Warnings = plan.FromManifest(m, names, manifest.Defaults{MaxRetries: *maxRetries})
	for _, ref := range m.SharedPending() {
		in.Warnings = append(in.Warnings, ref+" is the default app's, which plan cannot see offline: planned without a calendar")
	}
	p, err := plan.Compute(in)
	if err != nil {
		return fmt.Errorf("%w: %w", errkind.Invalid, err)
	}
	if *asJSON {
		return writeJSON(stdout, p)
	}
	if err := printPlan(stdout, path, p); err != nil {
		return err
	}
	printDeps(stdout, m)
	return nil
}

// tenantList reads --tenants: a count (tenant1..tenantN) or comma-separated names.
func tenantList(s string) ([]string, error) {
	if n, err := strconv.Atoi(s); err == nil {
		if n < 1 || n > 10_000 {
			return nil, usageErr("plan: --tenants %d is out of range 1..10000", n)
		}
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("tenant%d", i+1)
		}
		return out, nil
	}
	var out []string
	seen := map[string]bool{}
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		if !timer.ValidName(name) {
			return nil, usageErr("plan: --tenants: %q is neither a count nor a tenant name ([A-Za-z0-9_-]{1,128})", name)
		}
		if !seen[name] {
			out = append(out, name)
			seen[name] = true
		}
	}
	return out, nil
}

func printPlan(w io.Writer, path string, p plan.Plan) error {
	active, total := 0, 0
	for _, ip := range p.Instances {
		total += ip.Count
		if ip.Active {
			active += ip.Count
		}
	}
	printf(w, "%s: %d timer instances (%d active), firings counted over %d days from %s\n",
		path, total, active, p.Days, p.From.UTC().Format(time.RFC3339))
	a := p.Assumptions
	printf(w, "stack: fetch tick %s (look-ahead %s), %d due shards, log retention %d days; failure rate %s, %s ms per firing\n\n",
		time.Duration(p.Stack.FetchTickMinutes*float64(time.Minute)), time.Duration(p.Stack.LookAheadSeconds*float64(time.Second)),
		p.Stack.DueShards, p.Stack.LogRetentionDays, pct(a.FailureRate), num(a.PerFiringMs))

	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	printf(tw, "TIMER\tTENANT\tP\tSCHEDULE\tTIMEZONE\tFIRINGS/DAY\tLOCAL DAYS\tDUE KEY\tWU/FIRING\n")
	for _, ip := range p.Instances {
		perDay, minmax, key, wu := num(ip.FiringsPerDay), "", dueKey(ip.IndexMoveShare), fmt.Sprintf("%.2f", ip.WriteUnitsPerFiring)
		if ip.MinPerDay != ip.MaxPerDay {
			minmax = num(float64(ip.MinPerDay)) + "–" + num(float64(ip.MaxPerDay))
		}
		switch {
		case !ip.Active:
			perDay, minmax, key, wu = "inactive", "", "", ""
		case ip.Firings == 0:
			key, wu = "-", "-"
		}
		tenant := ip.Tenant
		if ip.Count > 1 {
			tenant = fmt.Sprintf("(%d instances)", ip.Count)
		}
		printf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", timer.Key{App: timer.NormApp(ip.App), Timer: ip.Timer}.Name(), tenant, ip.Priority, ip.Schedule, ip.Timezone, perDay, minmax, key, wu)
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	printf(w, "\n")
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	printf(tw, "QUEUE\tINSTANCES\tFIRINGS/DAY\tAVG/S\tPEAK/S\tPEAK AT\tCONCURRENCY\tTEMPLATE\n")
	for _, pp := range p.Priorities {
		at := "-"
		if pp.PeakAt != nil {
			at = pp.PeakAt.Format(time.RFC3339)
		}
		printf(tw, "P%d\t%d\t%s\t%s\t%d\t%s\t%d\t%d\n", pp.Priority, pp.Instances, num(pp.FiringsPerDay), num(pp.AvgFiringsPerSecond),
			pp.PeakFiringsPerSecond, at, pp.Concurrency, pp.TemplateConcurrency)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	printf(w, "CONCURRENCY keeps the busiest second's p99 lateness within %s s: ceil(peak/s × %s ms ÷ 1000), at least %d (TEMPLATE: PnConcurrency given).\n\n",
		num(a.LatenessBudgetSeconds), num(a.PerFiringMs), cost.MinConcurrency)

	m := p.Month
	f, i, t := m.FiringsUsage, m.IdleUsage, m.TotalUsage
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	printf(tw, "%-28s\tFIRINGS\tIDLE\tTOTAL\t\n", fmt.Sprintf("PER MONTH (%d days)", m.Days))
	row := func(name string, a, b, c float64) { printf(tw, "%-28s\t%s\t%s\t%s\t\n", name, num(a), num(b), num(c)) }
	row("executions", m.Executions, 0, m.Executions)
	row("DynamoDB write units", f.WriteUnits, i.WriteUnits, t.WriteUnits)
	row("DynamoDB read units", f.ReadUnits, i.ReadUnits, t.ReadUnits)
	row("SQS requests", f.SQSRequests, i.SQSRequests, t.SQSRequests)
	row("Lambda requests", f.LambdaRequests, i.LambdaRequests, t.LambdaRequests)
	row("Lambda GB-seconds", f.LambdaGBSeconds, i.LambdaGBSeconds, t.LambdaGBSeconds)
	row("CloudWatch Logs GB", f.LogIngestBytes/(1<<30), i.LogIngestBytes/(1<<30), t.LogIngestBytes/(1<<30))
	row("DynamoDB storage GB-months", f.StorageGBMonths, i.StorageGBMonths, t.StorageGBMonths)
	row("EventBridge events", f.Events, i.Events, t.Events)
	printf(tw, "%-28s\t%s\t%s\t%s\t\n", "on-demand USD", usd(m.OnDemand.USD-m.OnDemand.IdleUSD), usd(m.OnDemand.IdleUSD), usd(m.OnDemand.USD))
	printf(tw, "%-28s\t\t%s\t%s\t\n", "provisioned USD", usd(m.Provisioned.IdleUSD), usd(m.Provisioned.USD))
	if err := tw.Flush(); err != nil {
		return err
	}
	printf(w, "IDLE is the stack with nothing due (fetch and recovery ticks, the queues' empty polls). Provisioned: auto scaling at %s utilization,\n%s WCU and %s RCU on average (at least the template's minimums, %d and %d over the tables and indexes); the busiest second writes %s units.\n",
		pct(a.TargetUtilization), num(m.Capacity.WCU), num(m.Capacity.RCU), cost.MinWCU, cost.MinRCU, num(m.PeakWriteUnitsPerSecond))
	if m.PeakExceedsBurst {
		printf(w, "warning: the busiest second writes %s units: more than %s WCU and the burst capacity DynamoDB keeps (%d s of it) absorb; provisioned, those writes are throttled.\n",
			num(m.PeakWriteUnitsPerSecond), num(m.Capacity.WCU), cost.BurstSeconds)
	}
	printf(w, "Prices: %s as of %s (check before quoting); model: internal/cost/layout.go.\n", a.Region, a.PricesAsOf)
	for _, warning := range p.Warnings {
		printf(w, "warning: %s\n", warning)
	}
	return nil
}

func dueKey(share float64) string {
	switch {
	case share == 0:
		return "kept"
	case share == 1:
		return "moved"
	case share < 0.001:
		return "kept*" // a daylight-saving gap or two
	}
	return fmt.Sprintf("moved %.0f%%", 100*share)
}

// num prints a count with thousands separators, a small number with three significant digits.
func num(x float64) string {
	switch {
	case x == 0:
		return "0"
	case math.Abs(x) >= 100:
		s := strconv.FormatInt(int64(math.Round(x)), 10)
		neg := strings.HasPrefix(s, "-")
		s = strings.TrimPrefix(s, "-")
		for i := len(s) - 3; i > 0; i -= 3 {
			s = s[:i] + "," + s[i:]
		}
		if neg {
			s = "-" + s
		}
		return s
	}
	return strconv.FormatFloat(x, 'g', 3, 64)
}

func usd(x float64) string {
	if x < 0.005 && x > -0.005 {
		x = 0
	}
	return fmt.Sprintf("$%.2f", x)
}

func pct(x float64) string { return strconv.FormatFloat(100*x, 'g', 3, 64) + "%" }

func contains(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}
