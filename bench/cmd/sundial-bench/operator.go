package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/sundialhq/sundial/infra/lambdarun"
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
// polled (GET /api/jobs/{id}) until done, failed or cancelled.
const phaseOperatorScale = "operator_scale"

// Limits an answer must fit: API Gateway's integration timeout and Lambda's response size.
const (
	apiTimeoutS   = 29.0
	lambdaMaxBody = 6 << 20
)

// operatorTimers is how many multi-tenant timers the app has; n/operatorTimers tenants each.
const operatorTimers = 50

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
	Fits       bool    `json:"fits"`
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
	Fits        bool           `json:"fits"`
	Method      string         `json:"method"`
}

// operatorScale runs the phase over n instances (operatorTimers timers × n/operatorTimers
// tenants of the app "bench").
func (e *env) operatorScale(ctx context.Context, outDir, bin string, n int) (operatorRun, error) {
	d, err := e.deploy(ctx, "bench-operator-scale", time.Minute, nil)
	if err != nil {
		return operatorRun{}, err
	}
	tenants := max(1, n/operatorTimers)
	r := operatorRun{Function: "ApiFunction", Timers: operatorTimers, Tenants: tenants, Instances: operatorTimers * tenants,
		Method: "the API function's bootstrap run as the scale phases run theirs (" + scaleMethod + "); each request an API Gateway HTTP API " +
			"payload-2.0 event with the AWS_IAM authorizer's caller; every page followed by its cursor; a 202 job polled until it ended"}
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
	// The audit writer the API function invokes (Lambda's Invoke API, behind the endpoint
	// that checks lambda:InvokeFunction against the API's role).
	writerBin, err := buildFunction(ctx, outDir, "auditwriter")
	if err != nil {
		return r, err
	}
	writer, err := e.startFunction(ctx, d, "AuditWriterFunction", writerBin, outDir, nil)
	if err != nil {
		return r, err
	}
	defer func() { _ = writer.Stop() }()
	invoke := lambdarun.NewInvokeAPI()
	writerName := fnDef.Env["SUNDIAL_AUDIT_WRITER"]
	if i := strings.LastIndex(writerName, ":function:"); i >= 0 {
		writerName = writerName[i+len(":function:"):]
	}
	if err := invoke.Register(writerName, writer); err != nil {
		return r, err
	}
	invokeURL, err := invoke.Start("127.0.0.1:0")
	if err != nil {
		return r, err
	}
	defer func() { _ = invoke.Close(context.Background()) }()
	e.local.Gateway.SetLambda(invokeURL)
	defer e.local.Gateway.SetLambda("")
	fn, err := e.startFunction(ctx, d, r.Function, bin, outDir, map[string]string{"SUNDIAL_LAMBDA_ENDPOINT": e.local.Endpoint})
	if err != nil {
		return r, err
	}
	defer func() { _ = fn.Stop() }()
	logPath := filepath.Join(outDir, "scale", r.Function+".log")
	stop := make(chan struct{})
	var mu sync.Mutex
	var peak float64
	sample := func() {
		for _, in := range fn.Instances() {
			if hwm, _, err := procMemory(in.PID); err == nil {
				mu.Lock()
				peak = max(peak, hwm)
				mu.Unlock()
			}
		}
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
	// pages lists every page of path (limit 1,000), counting its items.
	pages := func(name, path string) operatorStep {
		st := operatorStep{Name: name}
		q := url.Values{"limit": {fmt.Sprint(timer.MaxPageSize)}}
		for {
			resp, err := call(&st, "GET", path, q, nil)
			if err != nil {
				st.Error = err.Error()
				return st
			}
			var page struct {
				Items []json.RawMessage `json:"items"`
				Next  string            `json:"next"`
			}
			if err := json.Unmarshal([]byte(resp.Body), &page); err != nil {
				st.Error = fmt.Sprintf("GET %s answered no page: %v", path, err)
				return st
			}
			st.Pages++
			st.Items += len(page.Items)
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
			st.MaxBytes, st.LongestS = max(st.MaxBytes, poll.MaxBytes), max(st.LongestS, poll.LongestS)
			if err != nil {
				st.Error = err.Error()
				break
			}
			if err := json.Unmarshal([]byte(resp.Body), &accepted); err != nil {
				st.Error = fmt.Sprintf("job answered %.300s", resp.Body)
				break
			}
			st.JobState = accepted.Job.State
		}
		st.JobSeconds = time.Since(started).Seconds()
		if st.JobState == "failed" || st.JobState == "cancelled" {
			st.Error = "job " + st.JobState
		}
		return st
	}

	hour := time.Now().UTC().Truncate(time.Hour)
	steps := []func() operatorStep{
		func() operatorStep { return pages("list the app's timers", "/api/apps/bench/timers") },
		func() operatorStep { return pages("list every app's timers", "/api/timers") },
		func() operatorStep {
			st := operatorStep{Name: "every app's health"}
			if _, err := call(&st, "GET", "/api/health", url.Values{}, nil); err != nil {
				st.Error = err.Error()
			}
			return st
		},
		func() operatorStep {
			st := operatorStep{Name: "the app's health"}
			if _, err := call(&st, "GET", "/api/apps/bench/health", url.Values{}, nil); err != nil {
				st.Error = err.Error()
			}
			return st
		},
		func() operatorStep {
			return operate("bulk pause every timer", "POST", "/api/apps/bench/deactivate", map[string]any{"all": true, "note": "bench: operator_scale"})
		},
		func() operatorStep {
			return operate("bulk resume every timer", "POST", "/api/apps/bench/activate", map[string]any{"all": true})
		},
		func() operatorStep {
			return operate("calendar edit reaching every timer", "PUT", "/api/apps/bench/calendars/holidays",
				schedule.CalendarRules{Dates: []string{hour.AddDate(0, 0, 7).Format(time.DateOnly), hour.AddDate(0, 0, 8).Format(time.DateOnly)}})
		},
		func() operatorStep {
			return operate(fmt.Sprintf("backfill start across %d tenants", tenants), "POST", "/api/apps/bench/timers/B00/backfill",
				map[string]any{"from": hour.Add(-3 * time.Hour), "to": hour.Add(-time.Hour), "parallel": 10})
		},
	}
	r.Fits = true
	for _, step := range steps {
		st := step()
		st.Fits = st.Error == "" && st.LongestS <= apiTimeoutS && st.MaxBytes <= lambdaMaxBody
		r.Fits = r.Fits && st.Fits
		e.log.Info("operator_scale", "step", st.Name, "requests", st.Requests, "pages", st.Pages, "seconds", fmt.Sprintf("%.1f", st.Seconds),
			"longest_s", fmt.Sprintf("%.1f", st.LongestS), "max_bytes", st.MaxBytes, "status", st.Status, "error", st.Error)
		r.Steps = append(r.Steps, st)
	}
	close(stop)
	sampler.Wait()
	sample()
	r.PeakRSSMB = peak
	r.Fits = r.Fits && r.PeakRSSMB <= float64(r.MemoryMB)
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
	next := time.Now().UTC().Add(time.Hour).Truncate(time.Hour)
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
	fmt.Fprintf(&b, "operator_scale: %d instances, API function peak %.0f of %d MB, fits %v", r.Instances, r.PeakRSSMB, r.MemoryMB, r.Fits)
	for _, s := range r.Steps {
		fmt.Fprintf(&b, "\n  %s: %d requests, %d pages, %.1f s (longest %.1f s), max %d bytes%s", s.Name, s.Requests, s.Pages, s.Seconds, s.LongestS, s.MaxBytes,
			map[bool]string{true: "", false: " — " + s.Error}[s.Error == ""])
	}
	return b.String()
}
