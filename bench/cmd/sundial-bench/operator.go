package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/sundialhq/sundial/infra/lambdarun"
	"github.com/sundialhq/sundial/infra/provision"
	"github.com/sundialhq/sundial/internal/action"
	"github.com/sundialhq/sundial/internal/dynamo"
	"github.com/sundialhq/sundial/internal/schedule"
	"github.com/sundialhq/sundial/internal/timer"
)

// The operator_scale phase: the Service Center API function (its built bootstrap behind
// lambdarun's Runtime API, as the scale phases run theirs) answering an operator's requests
// over a multi-tenant app of n instances: every page of the app's timers and of every app's,
// Environment Health, a bulk pause and resume of every timer, a calendar edit reaching them
// all and a backfill start across every tenant of one timer. Each request is the API Gateway
// HTTP API event (payload 2.0) the gateway's AWS_IAM authorizer hands the function, naming the
// caller. A long operation may answer 202 with a job ({"job":{"id","state"}}); it is then
// polled (GET /api/jobs/{id}) until done, failed or cancelled, while the recovery function's
// bootstrap is invoked once a minute as its schedule (rate(1 minute)) does: its sweep works
// the jobs the API's request left (jobs.Service.Sweep). Each step's peak memory is the API
// bootstrap's VmHWM, reset (/proc/PID/clear_refs 5) as the step starts.
const phaseOperatorScale = "operator_scale"

// Limits an answer must fit: API Gateway's integration timeout and Lambda's response size.
const (
	apiTimeoutS   = 29.0
	lambdaMaxBody = 6 << 20
)

// operatorTimers is how many multi-tenant timers the app has; n/operatorTimers tenants each.
const operatorTimers = 50

// recoveryEvery is the recovery function's schedule (template.yaml: rate(1 minute)); a test
// of the phase shortens it.
var recoveryEvery = time.Minute

type operatorStep struct {
	Name     string  `json:"name"`
	Requests int     `json:"requests"`
	Pages    int     `json:"pages,omitempty"`
	Items    int     `json:"items,omitempty"`
	Seconds  float64 `json:"seconds"`
	LongestS float64 `json:"longest_request_s"`
	MaxBytes int     `json:"max_response_bytes"`
	// Job is the job's id when the API answered 202; JobSeconds until it ended.
	Job        string  `json:"job,omitempty"`
	JobState   string  `json:"job_state,omitempty"`
	JobSeconds float64 `json:"job_seconds,omitempty"`
	Status     int     `json:"status"`
	Error      string  `json:"error,omitempty"`
	// PeakRSSMB is the API bootstrap's peak RSS during the step.
	PeakRSSMB float64 `json:"peak_rss_mb"`
	// WithinLimits: no error, every request within the API's 29 s, every answer within
	// Lambda's 6 MB and the peak within the function's memory.
	WithinLimits bool `json:"within_limits"`
}

type operatorRun struct {
	Function    string         `json:"function"`
	Instances   int            `json:"instances"`
	Timers      int            `json:"timers"`
	Tenants     int            `json:"tenants"`
	SeedSeconds float64        `json:"seed_seconds"`
	Steps       []operatorStep `json:"steps"`
	PeakRSSMB   float64        `json:"peak_rss_mb"`
	MemoryMB    int            `json:"memory_mb"`
	TimeoutS    float64        `json:"timeout_s"`
	// Sweeps is how many times the recovery function ran (once a minute) and
	// SweepPeakRSSMB its bootstrap's peak (its memory: SweepMemoryMB).
	Sweeps         int     `json:"recovery_sweeps"`
	SweepPeakRSSMB float64 `json:"recovery_peak_rss_mb"`
	SweepMemoryMB  int     `json:"recovery_memory_mb"`
	// PhaseSeconds is the whole phase, seeding and deploying included.
	PhaseSeconds float64 `json:"phase_seconds"`
	// WithinLimits: every step within its limits.
	WithinLimits bool   `json:"within_limits"`
	Method       string `json:"method"`
}

// operatorScale runs the phase over n instances (operatorTimers timers × n/operatorTimers
// tenants of the app "bench").
func (e *env) operatorScale(ctx context.Context, outDir string, bins map[string]string, n int, only map[string]bool) (r operatorRun, err error) {
	phaseStart := time.Now()
	defer func() { r.PhaseSeconds = time.Since(phaseStart).Seconds() }()
	bin := bins["api"]
	d, err := e.deploy(ctx, "bench-operator-scale", time.Minute, nil)
	if err != nil {
		return operatorRun{}, err
	}
	tenants := max(1, n/operatorTimers)
	r = operatorRun{Function: "ApiFunction", Timers: operatorTimers, Tenants: tenants, Instances: operatorTimers * tenants,
		Method: "the API function's bootstrap run as the scale phases run theirs (" + scaleMethod + "); each request an API Gateway HTTP API " +
			"payload-2.0 event with the AWS_IAM authorizer's caller; every page followed by its cursor; a 202 job polled every 0.5 s until it ended, " +
			"the recovery function's bootstrap invoked once a minute (its schedule) working it; each step's peak = the API bootstrap's VmHWM, reset as the step starts"}
	seed, err := e.seedOperator(ctx, d, tenants)
	if err != nil {
		return r, err
	}
	r.SeedSeconds = seed.Seconds()

	fnDef := d.stack.Functions[r.Function]
	if fnDef == nil {
		return r, fmt.Errorf("operator_scale: the template has no %s", r.Function)
	}
	r.TimeoutS, r.MemoryMB = fnDef.Timeout.Seconds(), fnDef.MemoryMB
	stopWriter, err := e.serveAuditWriter(ctx, d, fnDef, bins["auditwriter"], outDir)
	if err != nil {
		return r, err
	}
	defer stopWriter()
	fn, err := e.startFunction(ctx, d, r.Function, bin, outDir, map[string]string{"SUNDIAL_LAMBDA_ENDPOINT": e.local.Endpoint})
	if err != nil {
		return r, err
	}
	defer func() { _ = fn.Stop() }()
	recDef := d.stack.Functions["RecoveryFunction"]
	if recDef == nil {
		return r, fmt.Errorf("operator_scale: the template has no RecoveryFunction")
	}
	r.SweepMemoryMB = recDef.MemoryMB
	rec, err := e.startFunction(ctx, d, "RecoveryFunction", bins["recovery"], outDir, map[string]string{"SUNDIAL_LAMBDA_ENDPOINT": e.local.Endpoint})
	if err != nil {
		return r, err
	}
	defer func() { _ = rec.Stop() }()
	logPath := filepath.Join(outDir, "scale", r.Function+".log")
	stop := make(chan struct{})
	var mu sync.Mutex
	var peak, sweepPeak float64
	sample := func() {
		for _, in := range fn.Instances() {
			if hwm, _, err := procMemory(in.PID); err == nil {
				mu.Lock()
				peak = max(peak, hwm)
				mu.Unlock()
			}
		}
		for _, in := range rec.Instances() {
			if hwm, _, err := procMemory(in.PID); err == nil {
				mu.Lock()
				sweepPeak = max(sweepPeak, hwm)
				mu.Unlock()
			}
		}
	}
	// resetPeak starts a step's peak: the kernel's high-water mark of the API bootstrap
	// set back to its current RSS.
	resetPeak := func() {
		for _, in := range fn.Instances() {
			_ = os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", in.PID), []byte("5"), 0)
		}
		mu.Lock()
		peak = 0
		mu.Unlock()
	}
	var sampler sync.WaitGroup
	sampler.Go(func() {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			sample()
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	})
	// The recovery function's schedule: an invocation a minute, the first a minute from now.
	sweepStop := make(chan struct{})
	var sweeper sync.WaitGroup
	sweeper.Go(func() {
		tick := time.NewTicker(recoveryEvery)
		defer tick.Stop()
		for {
			select {
			case <-sweepStop:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			ev, err := json.Marshal(events.CloudWatchEvent{Source: "aws.events", DetailType: "Scheduled Event", Time: time.Now().UTC(), Detail: json.RawMessage("{}")})
			if err != nil {
				return
			}
			mu.Lock()
			r.Sweeps++
			id := fmt.Sprintf("sweep-%d", r.Sweeps)
			mu.Unlock()
			if _, err := rec.Invoke(ctx, id, ev); err != nil {
				e.log.Warn("operator_scale: recovery sweep", "error", err)
			}
		}
	})
	defer func() {
		close(sweepStop)
		sweeper.Wait()
		r.SweepPeakRSSMB = sweepPeak
	}()

	calls := 0
	call := func(st *operatorStep, method, path string, query url.Values, body any) (events.APIGatewayV2HTTPResponse, error) {
		calls++
		ev := events.APIGatewayV2HTTPRequest{Version: "2.0", RawPath: path, RawQueryString: query.Encode(),
			Headers: map[string]string{"content-type": "application/json", "host": "bench.execute-api.local"},
			RequestContext: events.APIGatewayV2HTTPRequestContext{DomainName: "bench.execute-api.local", RequestID: fmt.Sprintf("bench-%d", calls),
				HTTP:       events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: method, Path: path, SourceIP: "127.0.0.1"},
				Authorizer: &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{IAM: &events.APIGatewayV2HTTPRequestContextAuthorizerIAMDescription{UserARN: "arn:aws:iam::000000000000:user/bench-operator", CallerID: "bench-operator"}}}}
		if body != nil {
			b, err := json.Marshal(body)
			if err != nil {
				return events.APIGatewayV2HTTPResponse{}, err
			}
			ev.Body = string(b)
		}
		payload, err := json.Marshal(ev)
		if err != nil {
			return events.APIGatewayV2HTTPResponse{}, err
		}
		start := time.Now()
		out, err := fn.Invoke(ctx, fmt.Sprintf("operator-%d", calls), payload)
		took := time.Since(start).Seconds()
		st.Requests++
		st.Seconds += took
		st.LongestS = max(st.LongestS, took)
		st.MaxBytes = max(st.MaxBytes, len(out))
		if err != nil {
			return events.APIGatewayV2HTTPResponse{}, fmt.Errorf("%s %s: %w (log: %s)", method, path, err, logPath)
		}
		var resp events.APIGatewayV2HTTPResponse
		if err := json.Unmarshal(out, &resp); err != nil {
			return resp, fmt.Errorf("%s %s answered %.200q: %w", method, path, out, err)
		}
		st.Status = resp.StatusCode
		if resp.StatusCode >= 300 {
			return resp, fmt.Errorf("%s %s: %d %.300s", method, path, resp.StatusCode, resp.Body)
		}
		return resp, nil
	}
	// pages reads every page of path (limit 1,000, each next followed), counting its items.
	pages := func(name, path string) operatorStep {
		st := operatorStep{Name: name}
		q := url.Values{"limit": {fmt.Sprint(timer.MaxPageSize)}}
		for {
			resp, err := call(&st, "GET", path, q, nil)
			if err != nil {
				st.Error = err.Error()
				return st
			}
			// A page ({items, next}), or Environment Health's ({counts, next}: each
			// answer counts a part of the instances, its items those it counted).
			var page struct {
				Items  []json.RawMessage `json:"items"`
				Next   string            `json:"next"`
				Counts struct {
					Timers int `json:"timers"`
				} `json:"counts"`
			}
			if err := json.Unmarshal([]byte(resp.Body), &page); err != nil {
				st.Error = fmt.Sprintf("GET %s answered no JSON object: %v", path, err)
				return st
			}
			st.Pages++
			st.Items += len(page.Items) + page.Counts.Timers
			if page.Next == "" {
				return st
			}
			q.Set("cursor", page.Next)
		}
	}
	// operate sends one long operation: a 200 is its answer; a 202 names a job, polled
	// every 500 ms until it ends.
	operate := func(name, method, path string, body any) operatorStep {
		st := operatorStep{Name: name}
		started := time.Now()
		resp, err := call(&st, method, path, url.Values{}, body)
		if err != nil {
			st.Error = err.Error()
			return st
		}
		if resp.StatusCode != 202 {
			return st
		}
		var accepted struct {
			Job struct {
				ID    string `json:"id"`
				State string `json:"state"`
			} `json:"job"`
		}
		if err := json.Unmarshal([]byte(resp.Body), &accepted); err != nil || accepted.Job.ID == "" {
			st.Error = fmt.Sprintf("202 without a job: %.300s", resp.Body)
			return st
		}
		st.Job, st.JobState = accepted.Job.ID, accepted.Job.State
		for deadline := time.Now().Add(30 * time.Minute); st.JobState != "done" && st.JobState != "failed" && st.JobState != "cancelled"; {
			if time.Now().After(deadline) {
				st.Error = "the job did not end within 30 minutes"
				break
			}
			time.Sleep(500 * time.Millisecond)
			poll := operatorStep{}
			resp, err := call(&poll, "GET", "/api/jobs/"+url.PathEscape(st.Job), url.Values{}, nil)
			st.Requests, st.Seconds = st.Requests+poll.Requests, st.Seconds+poll.Seconds
			st.MaxBytes, st.LongestS = max(st.MaxBytes, poll.MaxBytes), max(st.LongestS, poll.LongestS)
			if err != nil {
				st.Error = err.Error()
				break
			}
			// GET /api/jobs/{id} answers the job itself (jobs.Job), not the 202's {"job":…}:
			// read into the 202's shape, its state never moved (the smoke run's wait).
			var job struct {
				ID    string `json:"id"`
				State string `json:"state"`
			}
			if err := json.Unmarshal([]byte(resp.Body), &job); err != nil || job.ID != st.Job || job.State == "" {
				st.Error = fmt.Sprintf("GET /api/jobs/%s answered no such job: %.300s", st.Job, resp.Body)
				break
			}
			st.JobState = job.State
		}
		st.JobSeconds = time.Since(started).Seconds()
		if st.JobState == "failed" || st.JobState == "cancelled" {
			st.Error = "job " + st.JobState
		}
		return st
	}

	hour := time.Now().UTC().Truncate(time.Hour)
	steps := []struct {
		name string // operatorStepNames
		run  func() operatorStep
	}{
		{"timers", func() operatorStep { return pages("list the app's timers", "/api/apps/bench/timers") }},
		{"timers", func() operatorStep { return pages("list every app's timers", "/api/timers") }},
		{"health", func() operatorStep { return pages("every app's health", "/api/health") }},
		{"health", func() operatorStep { return pages("the app's health", "/api/apps/bench/health") }},
		{"bulk", func() operatorStep {
			return operate("bulk pause every timer", "POST", "/api/apps/bench/deactivate", map[string]any{"all": true, "note": "bench: operator_scale"})
		}},
		{"bulk", func() operatorStep {
			return operate("bulk resume every timer", "POST", "/api/apps/bench/activate", map[string]any{"all": true})
		}},
		{"calendar", func() operatorStep {
			return operate("calendar edit reaching every timer", "PUT", "/api/apps/bench/calendars/holidays",
				schedule.CalendarRules{Dates: []string{hour.AddDate(0, 0, 7).Format(time.DateOnly), hour.AddDate(0, 0, 8).Format(time.DateOnly)}})
		}},
		{"backfill", func() operatorStep {
			return operate(fmt.Sprintf("backfill start across %d tenants", tenants), "POST", "/api/apps/bench/timers/B00/backfill",
				map[string]any{"from": hour.Add(-3 * time.Hour), "to": hour.Add(-time.Hour), "parallel": 10})
		}},
	}
	r.WithinLimits = true
	for _, step := range steps {
		if len(only) > 0 && !only[step.name] {
			continue
		}
		resetPeak()
		st := step.run()
		sample()
		mu.Lock()
		st.PeakRSSMB = peak
		r.PeakRSSMB = max(r.PeakRSSMB, peak)
		mu.Unlock()
		st.WithinLimits = st.Error == "" && st.LongestS <= apiTimeoutS && st.MaxBytes <= lambdaMaxBody && st.PeakRSSMB <= float64(r.MemoryMB)
		r.WithinLimits = r.WithinLimits && st.WithinLimits
		e.log.Info("operator_scale", "step", st.Name, "requests", st.Requests, "pages", st.Pages, "items", st.Items, "seconds", fmt.Sprintf("%.1f", st.Seconds),
			"longest_s", fmt.Sprintf("%.1f", st.LongestS), "max_bytes", st.MaxBytes, "peak_mb", fmt.Sprintf("%.0f", st.PeakRSSMB), "status", st.Status,
			"job", st.Job, "job_state", st.JobState, "job_s", fmt.Sprintf("%.0f", st.JobSeconds), "error", st.Error)
		r.Steps = append(r.Steps, st)
	}
	close(stop)
	sampler.Wait()
	return r, nil
}

// startFunction runs the function id's bootstrap as the scale phases do: the template's
// environment, timeout and memory, its role's credentials; its output in OUT/scale/<id>.log.
func (e *env) startFunction(ctx context.Context, d deployed, id, bin, outDir string, extra map[string]string) (*lambdarun.ProcessFunction, error) {
	fnDef := d.stack.Functions[id]
	if fnDef == nil {
		return nil, fmt.Errorf("the template has no %s", id)
	}
	role, err := e.local.Config(d.name, id)
	if err != nil {
		return nil, err
	}
	creds, err := role.Credentials.Retrieve(ctx)
	if err != nil {
		return nil, err
	}
	fenv := maps.Clone(fnDef.Env)
	maps.Copy(fenv, map[string]string{"AWS_ENDPOINT_URL": aws.ToString(e.aws.BaseEndpoint),
		"AWS_ACCESS_KEY_ID": creds.AccessKeyID, "AWS_SECRET_ACCESS_KEY": creds.SecretAccessKey})
	maps.Copy(fenv, extra)
	logPath := filepath.Join(outDir, "scale", id+".log")
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return nil, err
	}
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	fn, err := lambdarun.NewProcessFunction(lambdarun.ProcessConfig{Name: "sundial-" + id, Bootstrap: bin, Env: fenv,
		Timeout: fnDef.Timeout, MemoryMB: fnDef.MemoryMB, Concurrency: 1, Output: logf})
	if err != nil {
		logf.Close()
		return nil, err
	}
	return fn, nil
}

// seedOperator writes the app's instances (operatorTimers multi-tenant timers B00.. for tenants
// t00000.., each on the business calendar "holidays") through the local endpoint
// (seedInstances), and registers the app.
func (e *env) seedOperator(ctx context.Context, d deployed, tenants int) (time.Duration, error) {
	store := dynamo.New(e.seedDynamoDB(), d.cfg.TimersTable, d.cfg.LogTable, time.Hour)
	if err := store.RegisterApps(ctx, []string{"bench"}); err != nil {
		return 0, err
	}
	// Due tomorrow: nothing comes due during the phase (no firing, no recovery re-send, no
	// instance a deactivate must pause before it answers).
	next := time.Now().UTC().Add(24 * time.Hour).Truncate(time.Hour)
	return e.seedInstances(ctx, d, operatorTimers*tenants, func(i int) timer.Instance {
		key := timer.Key{App: "bench", Timer: fmt.Sprintf("B%02d", i%operatorTimers), Tenant: fmt.Sprintf("t%05d", i/operatorTimers)}
		return timer.Instance{Key: key, Active: true, ActiveBy: timer.ActiveByManifest, NextRun: next, Shard: dynamo.ShardOf(key, d.cfg.DueShards),
			Settings: timer.Settings{Schedule: "every 1h", Timezone: "UTC", Priority: timer.DefaultPriority, Timeout: time.Minute,
				Calendar: &timer.Calendar{Name: "holidays", CalendarRules: schedule.CalendarRules{Dates: []string{next.AddDate(0, 0, 30).Format(time.DateOnly)}}},
				Action:   action.Spec{HTTP: &action.HTTPSpec{URL: "http://127.0.0.1:9/bench"}}}}
	})
}

// operatorSummary is the phase's line in the summary.
func (r *operatorRun) summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "operator_scale: %d instances (seeded in %.0f s; phase %.0f s), API function peak %.0f of %d MB, within limits %v", r.Instances, r.SeedSeconds, r.PhaseSeconds, r.PeakRSSMB, r.MemoryMB, r.WithinLimits)
	for _, s := range r.Steps {
		job := ""
		if s.Job != "" {
			job = fmt.Sprintf(", job %s %.0f s", s.JobState, s.JobSeconds)
		}
		fmt.Fprintf(&b, "\n  %s: %d requests, %d pages, %.1f s (longest %.1f s), max %d bytes, peak %.0f MB%s, within limits %v%s", s.Name, s.Requests, s.Pages, s.Seconds, s.LongestS, s.MaxBytes,
			s.PeakRSSMB, job, s.WithinLimits, map[bool]string{true: "", false: " — " + s.Error}[s.Error == ""])
	}
	return b.String()
}

// operatorStepNames are the operator phase's steps -operator-steps chooses from: timers
// (every page of the app's and every app's timers), health (every page of every app's and
// the app's health), bulk (pause all, resume all), calendar, backfill.
var operatorStepNames = []string{"timers", "health", "bulk", "calendar", "backfill"}

// parseOperatorSteps reads -operator-steps: nil (every step) when empty.
func parseOperatorSteps(v string) (map[string]bool, error) {
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	only := map[string]bool{}
	for _, s := range strings.Split(v, ",") {
		s = strings.TrimSpace(s)
		if !slices.Contains(operatorStepNames, s) {
			return nil, fmt.Errorf("-operator-steps: unknown step %q: want some of %s, comma-separated", s, strings.Join(operatorStepNames, ", "))
		}
		only[s] = true
	}
	return only, nil
}

// operatorInstances is the operator phase's size: -operator-scale, else -scale.
func (o *options) operatorInstances() int {
	if o.operatorScale > 0 {
		return o.operatorScale
	}
	return o.scale
}

// operatorBootstraps builds the functions the operator phase runs: the API, the audit
// writer it invokes, and recovery, whose sweep works the jobs.
func operatorBootstraps(ctx context.Context, outDir string) (map[string]string, error) {
	out := map[string]string{}
	for _, name := range []string{"api", "auditwriter", "recovery"} {
		bin, err := buildFunction(ctx, outDir, name)
		if err != nil {
			return nil, err
		}
		out[name] = bin
	}
	return out, nil
}

// serveAuditWriter runs the audit writer the function fnDef invokes (its SUNDIAL_AUDIT_WRITER)
// behind Lambda's emulated Invoke API, reached through the endpoint (which checks
// lambda:InvokeFunction against the caller's role): the API, recovery and publish functions
// audit through it. The function started with SUNDIAL_LAMBDA_ENDPOINT = the endpoint reaches
// it. stop ends it.
func (e *env) serveAuditWriter(ctx context.Context, d deployed, fnDef *provision.Function, bin, outDir string) (stop func(), err error) {
	writer, err := e.startFunction(ctx, d, "AuditWriterFunction", bin, outDir, nil)
	if err != nil {
		return nil, err
	}
	invoke := lambdarun.NewInvokeAPI()
	writerName := fnDef.Env["SUNDIAL_AUDIT_WRITER"]
	if i := strings.LastIndex(writerName, ":function:"); i >= 0 {
		writerName = writerName[i+len(":function:"):]
	}
	invokeURL := ""
	if err = invoke.Register(writerName, writer); err == nil {
		invokeURL, err = invoke.Start("127.0.0.1:0")
	}
	if err != nil {
		_ = writer.Stop()
		return nil, err
	}
	e.local.Gateway.SetLambda(invokeURL)
	return func() {
		e.local.Gateway.SetLambda("")
		_ = invoke.Close(context.Background())
		_ = writer.Stop()
	}, nil
}
