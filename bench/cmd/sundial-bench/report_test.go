package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/cost"
	"github.com/sundialhq/sundial/internal/metrics"
)

func TestQuantile(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		xs   []float64
		q    float64
		want float64
	}{
		"MedianOfOdd":       {[]float64{1, 2, 3}, 0.5, 2},
		"NearestRankP99":    {seq(100), 0.99, 99},
		"P99OfFewIsTheMax":  {[]float64{1, 2, 3}, 0.99, 3},
		"MinimumIsTheFirst": {[]float64{4, 5}, 0, 4},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, c.want, quantile(c.xs, c.q))
		})
	}
	d := summarize([]float64{3, 1, 2})
	require.Equal(t, dist{N: 3, Min: 1, P50: 2, P95: 3, P99: 3, Max: 3, Mean: 2}, d)
	require.Equal(t, dist{}, summarize(nil))
}

func seq(n int) []float64 {
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = float64(i + 1)
	}
	return xs
}

// TestReportRenders builds results from synthetic measurements and renders everything, so a
// format verb without its argument (or a chart that cannot be drawn) fails here, not after a
// 10-minute run.
func TestReportRenders(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 11, 21, 18, 0, 0, 0, time.UTC)
	calls := metrics.Snapshot{
		{Service: "DynamoDB", Operation: "UpdateItem"}:     {Calls: 201, Time: time.Second},
		{Service: "DynamoDB", Operation: "BatchWriteItem"}: {Calls: 10, Time: time.Second},
		{Service: "DynamoDB", Operation: "GetItem"}:        {Calls: 10},
		{Service: "SQS", Operation: "ReceiveMessage"}:      {Calls: 30},
		{Service: "SQS", Operation: "SendMessageBatch"}:    {Calls: 10, MaxBytes: 2700},
		{Service: "SQS", Operation: "DeleteMessageBatch"}:  {Calls: 10},
	}
	load := func(name string, timers int) *loadResult {
		l := &loadResult{Spec: loadSpec{Name: name, Label: name + " load", Timers: timers, Period: 5 * time.Second},
			Start: start, WindowStart: start.Add(10 * time.Second), WindowEnd: start.Add(20 * time.Second),
			WindowSeconds: 10, Executions: 100, Recorded: 100, Calls: calls, EmptyReceives: 20, Offered: float64(timers) / 5,
			Lambda:   map[string]cost.Invocations{"processor": {Count: 10, BilledMs: 5000}},
			LogBytes: 50_000, Items: cost.ItemSizes{Timer: 464, Log: 295}, LoadAvgStart: "1.0", LoadAvg: "2.0",
			CPUSeconds: map[string]float64{"java": 12, "node": 3.5, "sundial-bench": 4}}
		for i := range 120 {
			at := start.Add(time.Duration(i) * 150 * time.Millisecond)
			l.Samples = append(l.Samples, sample{Timer: "T", ScheduledAt: at.Add(-time.Duration(i) * 10 * time.Millisecond), At: at})
		}
		var lat []float64
		for _, s := range l.Samples {
			lat = append(lat, s.At.Sub(s.ScheduledAt).Seconds())
		}
		l.Lateness = summarize(lat)
		l.Sustained = 10
		l.Saturated = l.Offered > 11
		return l
	}
	ceil := []ceilingRun{{Workers: 1, Circulating: 1000, Firings: 50, Seconds: 10, PerSecond: 5, CallsPerFire: 2.3, Calls: calls},
		{Workers: 2, Circulating: 1000, Firings: 70, Seconds: 10, PerSecond: 7, CallsPerFire: 2.3, Calls: calls}}
	r := &results{Date: start.Format(time.RFC3339), Machine: machine(), Options: map[string]string{"idleTimers": "10000", "ceilingEach": "12s", "engine": "1000 timers x 20 rounds"},
		Engine:    []engineRun{{Workers: 1, Firings: 1000, Seconds: 0.1, PerSecond: 10_000}, {Workers: 2, Firings: 1000, Seconds: 0.05, PerSecond: 20_000}},
		Ceiling:   ceilings{Small: ceilingRun{Workers: 2, Circulating: 20, PerSecond: 19, Calls: calls}, Before: ceil, After: ceil, ProbeSmall: map[string]float64{"DynamoDB.UpdateItem": 10}, ProbeLarge: map[string]float64{"DynamoDB.UpdateItem": 100}},
		Precision: load("precision", 1000), Lower: load("lower", 45),
		Idle: []idleRun{{Timers: 10, Ticks: 3, FetchRequests: 5, RecoveryRequests: 8, FetchByOp: map[string]int64{"DynamoDB.Query": 12, "DynamoDB.UpdateItem": 3}, RecoveryByOp: map[string]int64{"DynamoDB.Query": 24}, FetchSeconds: 0.05},
			{Timers: 10_000, Ticks: 3, FetchRequests: 5, RecoveryRequests: 8, FetchByOp: map[string]int64{"DynamoDB.Query": 12, "DynamoDB.UpdateItem": 3}, RecoveryByOp: map[string]int64{"DynamoDB.Query": 24}, FetchSeconds: 0.9}},
		Memory:  &memoryRun{Method: "test", Batches: 3, Records: 30, Executions: 30, PeakRSSMB: 20, FirstPeakRSSMB: 16, RSSMB: []float64{16, 18, 19}, LimitMB: 128},
		GoBench: "BenchmarkX 1 ns/op",
	}
	r.Sweep = []loadResult{*load("spread-10", 50), *load("spread-20", 100)}
	r.Throughput, r.SweepStoppedBy = &r.Sweep[0], "p99 1.19 s at 20/s passed 1 s" // as main sets them from the sweeper
	r.FetchWindow = &scaleRun{Function: "FetchFunction", Firings: 50_000, Done: 50_000, Seconds: 23, LongestSeconds: 23, PeakRSSMB: 80, Invocations: 1, TimeoutS: 60, MemoryMB: 128, Fits: true}
	r.RecoverySweep = &scaleRun{Function: "RecoveryFunction", Instances: 50_000, Done: 30_000, Seconds: 60, LongestSeconds: 60, PeakRSSMB: 50, Invocations: 1, TimeoutS: 60, MemoryMB: 128, Error: "timed out"}
	r.OperatorScale = &operatorRun{Function: "ApiFunction", Instances: 50_000, Timers: 50, Tenants: 1000, SeedSeconds: 90, PhaseSeconds: 600, MemoryMB: 128, TimeoutS: 29,
		PeakRSSMB: 60, Sweeps: 5, SweepPeakRSSMB: 40, SweepMemoryMB: 128, Steps: []operatorStep{
			{Name: "list the app's timers", Requests: 50, Pages: 50, Items: 50_000, Seconds: 40, LongestS: 1.2, MaxBytes: 955_000, Status: 200, PeakRSSMB: 30, WithinLimits: true},
			{Name: "bulk pause every timer", Requests: 300, Seconds: 20, LongestS: 3.4, MaxBytes: 1000, Job: "job-1", JobState: "done", JobSeconds: 180, Status: 202, PeakRSSMB: 60, WithinLimits: true},
			{Name: "calendar edit reaching every timer", Requests: 1, Seconds: 29, LongestS: 29, Error: "PUT x: timed out | cut"},
		}}
	r.Ceiling.summarize()
	r.finish(5 * time.Minute)
	require.InDelta(t, 2.51, r.RequestsPerFiring, 1e-9, "271 calls less 20 empty polls, over 100 firings")
	require.InDelta(t, 2.71, r.RequestsPerFiringWithPolls, 1e-9)
	require.InDelta(t, 4.01, r.Cost.Sundial.WriteUnits, 1e-9, "every 5 s: a frequent timer's 4 units, and the watermark")
	require.Less(t, r.USDPerMillionProvisioned, r.USDPerMillion)
	require.InDelta(t, 20_000, r.EngineFiringsPerS, 1e-9, "the better median")
	require.InDelta(t, 10.0/7, r.CeilingRatio, 1e-9, "the held sweep rate over the mean of the best before and after")
	require.Equal(t, "spread-10", r.SustainedFrom)
	require.True(t, r.Targets["idle_requests_10 == _10000"])
	require.False(t, r.Targets["lateness_p99_s <= 1"])

	dir := t.TempDir()
	require.NoError(t, r.write(dir))
	report, err := os.ReadFile(filepath.Join(dir, "report.md"))
	require.NoError(t, err)
	require.NotContains(t, string(report), "%!", "a format verb lacks its argument")
	require.Contains(t, string(report), "| Run | java | node | sundial-bench | Total |")
	require.Contains(t, string(report), "| precision | 1.20 | 0.35 | 0.40 | 1.95 |", "CPU seconds over the 10 s window, in cores")
	require.Contains(t, string(report), "## 7. Scale")
	require.Contains(t, string(report), "only 30,000 done; timed out")
	require.Contains(t, string(report), "## 8. Operator actions at scale (operator_scale)")
	require.Contains(t, string(report), "| bulk pause every timer | 300 | 0 | 0 | 20.0 (3.4) | 1,000 bytes | done after 180 s | 60 MB | met |")
	require.Contains(t, string(report), "**missed**: PUT x: timed out / cut |", "an error is the step's verdict, a table cell")
	require.Contains(t, string(report), "peak 60 MB; 3 steps, 2 within the limits | **missed** |")
	js, err := os.ReadFile(filepath.Join(dir, "results.json"))
	require.NoError(t, err)
	for _, k := range []string{`"fetch_window"`, `"recovery_sweep"`, `"peak_rss_mb"`, `"sweep_limit_reached"`, `"ceiling_ratio"`, `"operator_scale"`, `"within_limits"`} {
		require.Contains(t, string(js), k)
	}
	for _, f := range []string{"results.json", "lateness_cdf.svg", "lateness_timeline_precision.svg", "throughput.svg", "requests_per_firing.svg", "cost_per_million.svg", "idle.svg", "memory.svg"} {
		_, err := os.Stat(filepath.Join(dir, f))
		require.NoError(t, err, f)
		if strings.HasSuffix(f, ".svg") {
			require.Contains(t, string(report), "]("+f+")", "the report shows %s", f)
		}
	}
}
