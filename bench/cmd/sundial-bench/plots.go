package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sundialhq/sundial/bench/plot"
	"github.com/sundialhq/sundial/internal/cost"
)

// plots writes the charts and returns their file names by role.
func (r *results) plots(dir string) (map[string]string, error) {
	files := map[string]string{}
	write := func(role, name string, svg []byte) error {
		files[role] = name
		return os.WriteFile(filepath.Join(dir, name), svg, 0o644)
	}

	cdf := plot.NewXY("Lateness (action start − scheduled), cumulative", "lateness (s, log scale)", "fraction of firings")
	cdf.XLog = true
	cdf.YMin, cdf.YMax = 0, 1
	for _, l := range r.loads() {
		xs, ys := cdfOf(l)
		cdf.Line(fmt.Sprintf("%s (%d timers)", l.Spec.Name, l.Spec.Timers), xs, ys)
	}
	cdf.HLine("p99", 0.99)
	if err := write("cdf", "lateness_cdf.svg", cdf.SVG()); err != nil {
		return nil, err
	}

	for _, l := range r.loads() {
		tl := plot.NewXY(fmt.Sprintf("Lateness over the %s run (%d timers)", l.Spec.Name, l.Spec.Timers), "time since start (s)", "lateness (s)")
		var xs, ys []float64
		for _, s := range l.Samples {
			xs, ys = append(xs, s.At.Sub(l.Start).Seconds()), append(ys, s.At.Sub(s.ScheduledAt).Seconds())
		}
		tl.Points("each execution", xs, ys)
		tl.Span("measured window", l.WindowStart.Sub(l.Start).Seconds(), l.WindowEnd.Sub(l.Start).Seconds())
		tl.HLine("target p99 ≤ 1 s", targetLatenessP99)
		if err := write("timeline-"+l.Spec.Name, "lateness_timeline_"+l.Spec.Name+".svg", tl.SVG()); err != nil {
			return nil, err
		}
	}

	sat := r.Precision
	if r.Throughput != nil {
		sat = r.Throughput
	}
	tp := plot.NewXY(fmt.Sprintf("Firings per second, %s run (10 s bins)", sat.Spec.Name), "time since start (s)", "firings / s")
	tp.YMin = 0
	xs, ys := rateOf(sat, 10)
	tp.Line("executions", xs, ys)
	tp.Span("measured window", sat.WindowStart.Sub(sat.Start).Seconds(), sat.WindowEnd.Sub(sat.Start).Seconds())
	tp.HLine(fmt.Sprintf("sustained %.1f/s", sat.Sustained), sat.Sustained)
	tp.HLine(fmt.Sprintf("ceiling %.1f/s", r.Ceiling.FiringsPerSecond), r.Ceiling.FiringsPerSecond)
	if sat.Offered < 3*math.Max(r.Ceiling.FiringsPerSecond, sat.Sustained) {
		tp.HLine(fmt.Sprintf("offered %.0f/s", sat.Offered), sat.Offered)
	}
	if err := write("throughput", "throughput.svg", tp.SVG()); err != nil {
		return nil, err
	}

	cmp := plot.NewBars("Firings per second on this machine (log scale)", "firings / s")
	cmp.YLog = true
	cmp.Bar("engine only\n(in memory)", "firings/s", r.EngineFiringsPerS)
	cmp.Note(fmt.Sprintf("%.0f", r.EngineFiringsPerS))
	cmp.Bar("emulator ceiling\n(unavoidable calls)", "firings/s", r.Ceiling.FiringsPerSecond)
	cmp.Note(fmt.Sprintf("%.1f", r.Ceiling.FiringsPerSecond))
	cmp.Bar("Sundial on\nthe emulator", "firings/s", r.SustainedFiringsPerS)
	cmp.Note(fmt.Sprintf("%.1f (%.0f%%)", r.SustainedFiringsPerS, 100*r.CeilingRatio))
	if err := write("compare", "throughput_compare.svg", cmp.SVG()); err != nil {
		return nil, err
	}

	req := plot.NewBars("AWS requests per firing, by operation (empty polls left out)", "requests per firing")
	per := r.RequestsPerFiringByOperation
	var parts, naiveParts []any
	for _, op := range sortedKeys(per) {
		parts = append(parts, category(op), per[op])
		switch op {
		case "DynamoDB.GetItem", "SQS.SendMessageBatch", "SQS.ReceiveMessage", "SQS.DeleteMessageBatch":
		default:
			naiveParts = append(naiveParts, category(op), per[op])
		}
	}
	for _, op := range []string{"DynamoDB.GetItem", "SQS.SendMessageBatch", "SQS.ReceiveMessage", "SQS.DeleteMessageBatch"} {
		naiveParts = append(naiveParts, category(op), 1.0) // once per firing instead of per batch
	}
	req.Bar("Sundial\n(measured)", parts...)
	req.Note(fmt.Sprintf("%.2f", r.RequestsPerFiring))
	req.Bar("naive: one message\nper firing", naiveParts...)
	naiveTotal := 0.0
	for i := 1; i < len(naiveParts); i += 2 {
		naiveTotal += naiveParts[i].(float64)
	}
	req.Note(fmt.Sprintf("%.2f", naiveTotal))
	if best, ok := r.Ceiling.best(); ok {
		var cparts []any
		total := 0.0
		for _, op := range best.Calls.Ops() {
			v := float64(best.Calls[op].Calls-boolInt(op.String() == "SQS.ReceiveMessage")*best.EmptyReceives) / float64(best.Firings)
			cparts, total = append(cparts, category(op.String()), v), total+v
		}
		req.Bar("the unavoidable\ncalls (ceiling)", cparts...)
		req.Note(fmt.Sprintf("%.2f", total))
	}
	if err := write("requests", "requests_per_firing.svg", req.SVG()); err != nil {
		return nil, err
	}

	usd := plot.NewBars("Dollars per million firings, us-east-1 (prices as of "+r.Prices.AsOf+")", "USD per million firings")
	billBar := func(label string, b cost.Bill) {
		var parts []any
		for _, l := range b.Lines {
			parts = append(parts, l.Item, l.USD)
		}
		usd.Bar(label, parts...)
		usd.Note(fmt.Sprintf("$%.2f", b.Total))
	}
	billBar("Sundial", r.Cost.SundialBill)
	billBar("Sundial, DynamoDB\nprovisioned", r.Cost.SundialProvisionedBill)
	billBar("naive: one message\nper firing", r.Cost.NaiveBill)
	billBar("EventBridge\nScheduler", r.Cost.SchedulerBill)
	if err := write("cost", "cost_per_million.svg", usd.SVG()); err != nil {
		return nil, err
	}

	idle := plot.NewBars("Requests per tick with idle timers", "requests")
	for _, i := range r.Idle {
		idle.Bar(fmt.Sprintf("%d idle timers", i.Timers), "fetch tick", i.FetchRequests, "recovery sweep", i.RecoveryRequests)
		idle.Note(fmt.Sprintf("%.0f + %.0f", i.FetchRequests, i.RecoveryRequests))
	}
	if err := write("idle", "idle.svg", idle.SVG()); err != nil {
		return nil, err
	}

	if m := r.Memory; m != nil {
		mem := plot.NewXY(fmt.Sprintf("Processor bootstrap memory over %d batches of 10", m.Batches), "batches handled", "MB")
		mem.YMin = 0
		var xs []float64
		for i := range m.RSSMB {
			xs = append(xs, float64(i+1))
		}
		mem.Line("resident set (VmRSS)", xs, m.RSSMB)
		mem.HLine(fmt.Sprintf("peak (VmHWM) %.1f MB", m.PeakRSSMB), m.PeakRSSMB)
		mem.HLine(fmt.Sprintf("Lambda memory %d MB", m.LimitMB), float64(m.LimitMB))
		if err := write("memory", "memory.svg", mem.SVG()); err != nil {
			return nil, err
		}
	}
	return files, nil
}

func (r *results) loads() []*loadResult {
	var out []*loadResult
	for _, l := range []*loadResult{r.Precision, r.Throughput, r.Lower} {
		if l != nil {
			out = append(out, l)
		}
	}
	for i := range r.Sweep {
		if &r.Sweep[i] != r.Throughput {
			out = append(out, &r.Sweep[i])
		}
	}
	return out
}

func emptyPerFiring(l *loadResult) float64 {
	if l.Recorded == 0 {
		return 0
	}
	return float64(l.EmptyReceives) / float64(l.Recorded)
}

// cdfOf is the empirical distribution of the window's lateness (clamped at 1 ms for the log axis).
func cdfOf(l *loadResult) ([]float64, []float64) {
	var lat []float64
	for _, s := range l.Samples {
		if !s.At.Before(l.WindowStart) && s.At.Before(l.WindowEnd) {
			lat = append(lat, math.Max(s.At.Sub(s.ScheduledAt).Seconds(), 0.001))
		}
	}
	slices.Sort(lat)
	xs, ys := make([]float64, 0, len(lat)), make([]float64, 0, len(lat))
	for i, v := range lat {
		if i+1 < len(lat) && lat[i+1] == v {
			continue
		}
		xs, ys = append(xs, v), append(ys, float64(i+1)/float64(len(lat)))
	}
	return xs, ys
}

// rateOf counts executions per bin of `bin` seconds since the start.
func rateOf(l *loadResult, bin float64) ([]float64, []float64) {
	end := l.WindowEnd.Sub(l.Start).Seconds()
	n := int(math.Ceil(end / bin))
	counts := make([]float64, n)
	for _, s := range l.Samples {
		if i := int(s.At.Sub(l.Start).Seconds() / bin); i >= 0 && i < n {
			counts[i]++
		}
	}
	xs, ys := make([]float64, n), make([]float64, n)
	for i := range counts {
		xs[i], ys[i] = (float64(i)+0.5)*bin, counts[i]/bin
	}
	return xs, ys
}

func sortedKeys(m map[string]float64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return strings.Compare(a, b) })
	return keys
}

// category names an operation by what it does for a firing.
func category(op string) string {
	switch op {
	case "DynamoDB.UpdateItem":
		return "DynamoDB UpdateItem (claim, finish)"
	case "DynamoDB.BatchWriteItem":
		return "DynamoDB BatchWriteItem (log items)"
	case "DynamoDB.BatchGetItem":
		return "DynamoDB BatchGetItem (fetch, recovery)"
	case "DynamoDB.TransactWriteItems":
		return "DynamoDB TransactWriteItems (finish + log, before issue 14)"
	case "DynamoDB.PutItem":
		return "DynamoDB PutItem (log item)"
	case "DynamoDB.GetItem":
		return "DynamoDB GetItem (watermark)"
	case "DynamoDB.Query":
		return "DynamoDB Query (fetch, recovery)"
	case "SQS.SendMessageBatch":
		return "SQS send"
	case "SQS.ReceiveMessage":
		return "SQS receive"
	case "SQS.DeleteMessageBatch":
		return "SQS delete"
	}
	return op
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
