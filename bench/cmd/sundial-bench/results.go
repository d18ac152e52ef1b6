package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/sundialhq/sundial/internal/cost"
)

// Targets the design sets for the benchmark. They are compared with what was measured, never substituted for it.
const (
	targetLatenessP99      = 1.0 // seconds
	targetRequestsPerFire  = 3.5
	targetCeilingRatio     = 0.7
	targetWriteUnits       = 4.0                  // per firing, measured (the cost target)
	targetUSDPerMillion    = 3.00                 // on-demand, us-east-1 (the cost target)
	awsPollerWaitSeconds   = cost.PollWaitSeconds // Lambda's SQS pollers long-poll for up to 20 s
	localPollerWaitSeconds = 1                    // infra/lambdarun's pollers: WaitTimeSeconds 1
)

// results is results.json; the first block holds the headline figures compared with the targets.
type results struct {
	LatenessP50       float64 `json:"lateness_p50_s"`
	LatenessP99       float64 `json:"lateness_p99_s"`
	RequestsPerFiring float64 `json:"requests_per_firing"`
	USDPerMillion     float64 `json:"usd_per_million_firings"`
	CeilingRatio      float64 `json:"ceiling_ratio"`
	EngineFiringsPerS float64 `json:"engine_firings_per_s"`
	IdleRequests10    float64 `json:"idle_requests_10"`
	IdleRequests10000 float64 `json:"idle_requests_10000"`
	ProcessorPeakRSS  float64 `json:"processor_peak_rss_mb"`

	// Companions of the headline numbers.
	LatenessP95                float64           `json:"lateness_p95_s"`
	LatenessMax                float64           `json:"lateness_max_s"`
	LowerLoadLatenessP50       *float64          `json:"lower_load_lateness_p50_s,omitempty"`
	LowerLoadLatenessP99       *float64          `json:"lower_load_lateness_p99_s,omitempty"`
	RequestsPerFiringWithPolls float64           `json:"requests_per_firing_with_empty_polls"`
	SustainedFiringsPerS       float64           `json:"sustained_firings_per_s"`
	SweepLimitReached          bool              `json:"sweep_limit_reached"`
	SweepStoppedBy             string            `json:"sweep_stopped_by,omitempty"`
	CeilingFiringsPerS         float64           `json:"ceiling_firings_per_s"`
	IdleRequests10Recovery     float64           `json:"idle_recovery_requests_10"`
	IdleRequests10000Recovery  float64           `json:"idle_recovery_requests_10000"`
	USDPerMillionNaive         float64           `json:"usd_per_million_firings_naive"`
	USDPerMillionScheduler     float64           `json:"usd_per_million_firings_eventbridge_scheduler"`
	USDPerMillionRequestsOnly  float64           `json:"usd_per_million_firings_requests_only"`
	USDPerMillionProvisioned   float64           `json:"usd_per_million_firings_provisioned"`
	IdleUSDPerMonth            float64           `json:"idle_usd_per_month"`
	IdleUSDPerMonthProvisioned float64           `json:"idle_usd_per_month_provisioned"`
	Targets                    map[string]bool   `json:"targets_met"`
	TotalSeconds               float64           `json:"total_seconds"`
	Date                       string            `json:"date"`
	Machine                    machineInfo       `json:"machine"`
	Options                    map[string]string `json:"options"`
	Prices                     cost.Prices       `json:"prices"`
	Cost                       costs             `json:"cost"`
	Engine                     []engineRun       `json:"engine"`
	Ceiling                    ceilings          `json:"ceiling"`
	Precision                  *loadResult       `json:"precision"`
	Throughput                 *loadResult       `json:"throughput,omitempty"`
	// Sweep are the runs at increasing rates with the timers' phases spread.
	Sweep []loadResult `json:"sweep,omitempty"`
	// MeasuredWriteUnitsPerFiring and MeasuredReadUnitsPerFiring are DynamoDB's reported
	// consumed capacity in the precision window, per execution.
	MeasuredWriteUnitsPerFiring  float64            `json:"measured_write_units_per_firing"`
	MeasuredReadUnitsPerFiring   float64            `json:"measured_read_units_per_firing"`
	BestRateP99Under1s           float64            `json:"best_rate_p99_under_1s"`
	Lower                        *loadResult        `json:"lower_load,omitempty"`
	Idle                         []idleRun          `json:"idle"`
	Memory                       *memoryRun         `json:"memory"`
	FetchWindow                  *scaleRun          `json:"fetch_window,omitempty"`
	RecoverySweep                *scaleRun          `json:"recovery_sweep,omitempty"`
	Publish                      *scaleRun          `json:"publish,omitempty"`
	OperatorScale                *operatorRun       `json:"operator_scale,omitempty"`
	GoBench                      string             `json:"-"`
	SustainedFrom                string             `json:"sustained_from"`
	RequestsPerFiringByOperation map[string]float64 `json:"requests_per_firing_by_operation"`
	LowerLoadRequestsPerFiring   *float64           `json:"lower_load_requests_per_firing,omitempty"`
	// Endpoint is what the local endpoint costs the unavoidable calls (endpoint.go).
	Endpoint *endpointCost `json:"endpoint_cost,omitempty"`
	// DynamoDBPartitions is how many DynamoDB Local engines the local DynamoDB ran on.
	DynamoDBPartitions int `json:"dynamodb_partitions"`
	// BurstFloor is the engines' own time for the writes one burst cannot avoid: the precision
	// run's timers × (claim + finish + log entry, each at its service time measured one call
	// at a time in this run, serviceMsLarge) ÷ the engines serving them side by side.
	// BurstEfficiency is the burst's p99 lateness ÷ that floor: near 1, the lateness is the
	// engines'; far above, it is ours.
	BurstFloor      float64 `json:"burst_floor_s"`
	BurstEfficiency float64 `json:"burst_efficiency"`
}

// burstFloor computes BurstFloor and BurstEfficiency (none without the service times).
func (r *results) burstFloor() {
	claim, log := r.Ceiling.ProbeLarge["DynamoDB.UpdateItem"], r.Ceiling.ProbeLarge["DynamoDB.BatchWriteItem"]
	if r.Precision == nil || claim <= 0 || log <= 0 {
		return
	}
	// The claim and the finish are each one UpdateItem; the log entry one item of a batch.
	perFiring := (2*claim + log) / 1000
	r.BurstFloor = float64(r.Precision.Spec.Timers) * perFiring / float64(max(r.DynamoDBPartitions, 1))
	if r.BurstFloor > 0 {
		r.BurstEfficiency = r.LatenessP99 / r.BurstFloor
	}
}

type machineInfo struct {
	CPU      string `json:"cpu"`
	Cores    int    `json:"cores"`
	Go       string `json:"go"`
	OS       string `json:"os"`
	Emulator string `json:"emulator"`
}

type costs struct {
	Sundial       cost.Usage `json:"sundialPerFiring"`
	Naive         cost.Usage `json:"naivePerFiring"`
	SundialBill   cost.Bill  `json:"sundialPerMillion"`
	NaiveBill     cost.Bill  `json:"naivePerMillion"`
	SchedulerBill cost.Bill  `json:"eventBridgeSchedulerPerMillion"`
	IdleBill      cost.Bill  `json:"idlePerMonth"`
	// The same with DynamoDB on provisioned capacity (auto scaling at
	// cost.DefaultTargetUtilization).
	SundialProvisionedBill cost.Bill `json:"sundialPerMillionProvisioned"`
	IdleProvisionedBill    cost.Bill `json:"idlePerMonthProvisioned"`
}

// ceilings are the emulator's rates before and after the precision run.
type ceilings struct {
	// Small is moto's best case: 20 firings circulating on a stack of their own.
	Small ceilingRun `json:"smallStack"`
	// ProbeSmall and ProbeLarge are the mean milliseconds per call, one call at a time, on the
	// small stack and with as many firings circulating as the precision run has timers.
	ProbeSmall       map[string]float64 `json:"serviceMsSmallStack"`
	ProbeLarge       map[string]float64 `json:"serviceMsLarge"`
	Before           []ceilingRun       `json:"before"`
	After            []ceilingRun       `json:"after"`
	BestBefore       float64            `json:"bestBefore"`
	BestAfter        float64            `json:"bestAfter"`
	FiringsPerSecond float64            `json:"firingsPerSecond"` // mean of the two best
}

// best is the fastest run, before or after.
func (c *ceilings) best() (ceilingRun, bool) {
	var b ceilingRun
	for _, r := range append(append([]ceilingRun{}, c.Before...), c.After...) {
		if r.PerSecond > b.PerSecond {
			b = r
		}
	}
	return b, b.Firings > 0
}

func (c *ceilings) summarize() {
	best := func(rs []ceilingRun) float64 {
		b := 0.0
		for _, r := range rs {
			b = max(b, r.PerSecond)
		}
		return b
	}
	c.BestBefore, c.BestAfter = best(c.Before), best(c.After)
	c.FiringsPerSecond = (c.BestBefore + c.BestAfter) / 2
}

// finish derives the headline numbers from the measurements.
func (r *results) finish(took time.Duration) {
	r.TotalSeconds = took.Seconds()
	r.Prices = cost.USEast1
	p := r.Precision
	r.LatenessP50, r.LatenessP95, r.LatenessP99, r.LatenessMax = p.Lateness.P50, p.Lateness.P95, p.Lateness.P99, p.Lateness.Max

	w := p.window()
	if u, err := cost.PerFiring(w); err == nil {
		r.Cost.Sundial = u
		// Empty polls are a rate per poller (here every second, on AWS every 20 s), not a
		// cost of firing: cost.PerFiring leaves them out, and the report prices them apart.
		r.RequestsPerFiring = u.Requests
		r.RequestsPerFiringWithPolls = u.Requests + float64(w.EmptyReceives)/float64(w.Firings)
		r.RequestsPerFiringByOperation = map[string]float64{}
		for op, st := range w.Calls {
			n := float64(st.Calls)
			if op.String() == "SQS.ReceiveMessage" {
				n -= float64(w.EmptyReceives)
			}
			r.RequestsPerFiringByOperation[op.String()] = n / float64(w.Firings)
		}
		bill := r.Prices.Bill(u)
		r.Cost.SundialBill = bill.Scale(1e6)
		r.USDPerMillion = r.Cost.SundialBill.Total
		r.Cost.SundialProvisionedBill = r.Prices.BillProvisioned(u, 0, cost.DefaultTargetUtilization).Scale(1e6)
		r.USDPerMillionProvisioned = r.Cost.SundialProvisionedBill.Total
		for _, item := range []string{"DynamoDB write request units", "DynamoDB read request units", "SQS requests", "Lambda requests"} {
			r.USDPerMillionRequestsOnly += r.Cost.SundialBill.Line(item).USD
		}
	}
	if u, err := cost.Naive(w); err == nil {
		r.Cost.Naive = u
		r.Cost.NaiveBill = r.Prices.Bill(u).Scale(1e6)
		r.USDPerMillionNaive = r.Cost.NaiveBill.Total
	}
	r.Cost.SchedulerBill = r.Prices.Scheduler().Scale(1e6)
	r.USDPerMillionScheduler = r.Cost.SchedulerBill.Total

	// The sustained rate is the sweep's highest held step (main sets Throughput to it); none
	// held, none is claimed.
	r.SustainedFiringsPerS, r.SustainedFrom = 0, "none held"
	if r.Throughput != nil {
		r.SustainedFiringsPerS, r.SustainedFrom = r.Throughput.Sustained, r.Throughput.Spec.Name
	}
	if p.Recorded > 0 {
		wu, ru := p.Calls.Units()
		r.MeasuredWriteUnitsPerFiring, r.MeasuredReadUnitsPerFiring = wu/float64(p.Recorded), ru/float64(p.Recorded)
	}
	if best := r.bestSweep(); best != nil {
		r.BestRateP99Under1s = best.Sustained
	}
	r.CeilingFiringsPerS = r.Ceiling.FiringsPerSecond
	r.burstFloor()
	if r.CeilingFiringsPerS > 0 {
		r.CeilingRatio = r.SustainedFiringsPerS / r.CeilingFiringsPerS
	}
	if r.Lower != nil {
		r.LowerLoadLatenessP50, r.LowerLoadLatenessP99 = &r.Lower.Lateness.P50, &r.Lower.Lateness.P99
		if u, err := cost.PerFiring(r.Lower.window()); err == nil {
			v := u.Requests
			r.LowerLoadRequestsPerFiring = &v
		}
	}

	var best []float64
	for _, w := range []int{1, runtime.GOMAXPROCS(0)} {
		var rates []float64
		for _, e := range r.Engine {
			if e.Workers == w {
				rates = append(rates, e.PerSecond)
			}
		}
		if len(rates) > 0 {
			best = append(best, median(rates))
		}
	}
	r.EngineFiringsPerS = slices.Max(best)

	for _, i := range r.Idle {
		switch i.Timers {
		case 10:
			r.IdleRequests10, r.IdleRequests10Recovery = i.FetchRequests, i.RecoveryRequests
		default:
			r.IdleRequests10000, r.IdleRequests10000Recovery = i.FetchRequests, i.RecoveryRequests
		}
	}
	if len(r.Idle) > 0 {
		u := r.idleMonth()
		r.Cost.IdleBill = r.Prices.Bill(u)
		r.IdleUSDPerMonth = r.Cost.IdleBill.Total
		r.Cost.IdleProvisionedBill = r.Prices.BillProvisioned(u, cost.MonthSeconds, cost.DefaultTargetUtilization)
		r.IdleUSDPerMonthProvisioned = r.Cost.IdleProvisionedBill.Total
	}
	if r.Memory != nil {
		r.ProcessorPeakRSS = r.Memory.PeakRSSMB
	}
	r.Targets = map[string]bool{
		"lateness_p99_s <= 1":                  r.LatenessP99 <= targetLatenessP99,
		"requests_per_firing <= 3.5":           r.RequestsPerFiring <= targetRequestsPerFire,
		"ceiling_ratio >= 0.7":                 r.CeilingRatio >= targetCeilingRatio,
		"measured_write_units_per_firing <= 4": r.MeasuredWriteUnitsPerFiring > 0 && r.MeasuredWriteUnitsPerFiring <= targetWriteUnits,
		"usd_per_million_firings <= 3.00":      r.USDPerMillion > 0 && r.USDPerMillion <= targetUSDPerMillion,
		"idle_requests_10 == _10000":           r.IdleRequests10 == r.IdleRequests10000 && len(r.Idle) == 2,
		"processor_peak_rss_mb <= 128":         r.Memory != nil && r.ProcessorPeakRSS <= lambdaMemoryMB,
	}
}

// idleMonth is a month (cost.MonthDays) of ticks with idle timers, priced by cost.Idle (the
// model `sundial plan` uses) from what was measured here: fetch and recovery every minute,
// their requests as counted and their durations as measured, plus the SQS event sources'
// empty polls at AWS's long-poll interval. The pollers per queue are assumed to be the
// template's maximum concurrency (Lambda may run more for an idle queue; see the report).
func (r *results) idleMonth() cost.Usage {
	i := r.Idle[0]
	ticks := float64(i.Ticks)
	per := func(ops map[string]int64, op string) float64 { return float64(ops[op]) / ticks }
	w := cost.IdleWork{
		Fetch: cost.Sweep{Writes: per(i.FetchByOp, "DynamoDB.UpdateItem"), Gets: per(i.FetchByOp, "DynamoDB.GetItem"),
			Queries: per(i.FetchByOp, "DynamoDB.Query"), Seconds: i.FetchSeconds},
		Recovery: cost.Sweep{Writes: per(i.RecoveryByOp, "DynamoDB.UpdateItem"), Gets: per(i.RecoveryByOp, "DynamoDB.GetItem"),
			Queries: per(i.RecoveryByOp, "DynamoDB.Query"), Seconds: i.RecoverySeconds},
	}
	st := cost.DefaultStack()
	st.Concurrency = defaultConcurrency
	return cost.Idle(w, st, cost.MonthSeconds)
}

// setScale records a scale phase's run under its key.
func (r *results) setScale(phase string, s *scaleRun) {
	switch phase {
	case phaseFetchWindow:
		r.FetchWindow = s
	case phaseRecoverySweep:
		r.RecoverySweep = s
	case phasePublish:
		r.Publish = s
	}
}

func (r *results) summaryLines() string {
	var b strings.Builder
	fmt.Fprintf(&b, "lateness p50 %.3f s, p99 %.3f s (%s)\n", r.LatenessP50, r.LatenessP99, r.Precision.Spec.Label)
	if r.Lower != nil {
		fmt.Fprintf(&b, "lower load: lateness p50 %.3f s, p99 %.3f s (%s)\n", r.Lower.Lateness.P50, r.Lower.Lateness.P99, r.Lower.Spec.Label)
	}
	fmt.Fprintf(&b, "requests per firing %.2f (%.2f with empty polls); $%.2f per million firings (provisioned $%.2f, naive $%.2f, EventBridge Scheduler $%.2f)\n",
		r.RequestsPerFiring, r.RequestsPerFiringWithPolls, r.USDPerMillion, r.USDPerMillionProvisioned, r.USDPerMillionNaive, r.USDPerMillionScheduler)
	fmt.Fprintf(&b, "sustained %.1f firings/s, ceiling %.1f firings/s, ratio %.2f\n", r.SustainedFiringsPerS, r.CeilingFiringsPerS, r.CeilingRatio)
	fmt.Fprintf(&b, "engine only %.0f firings/s\n", r.EngineFiringsPerS)
	fmt.Fprintf(&b, "idle fetch requests per tick: %.0f with 10 timers, %.0f with %s\n", r.IdleRequests10, r.IdleRequests10000, r.Options["idleTimers"])
	fmt.Fprintf(&b, "processor peak RSS %.1f MB\n", r.ProcessorPeakRSS)
	return b.String()
}

func (r *results) write(dir string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	plots, err := r.plots(dir)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "report.md"), []byte(r.report(plots)), 0o644)
}

func machine() machineInfo {
	m := machineInfo{Cores: runtime.NumCPU(), Go: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "model name"); ok {
				m.CPU = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	return m
}
