package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/cfn"
	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"golang.org/x/sync/errgroup"

	"github.com/sundialhq/sundial/infra/lambdarun"
	"github.com/sundialhq/sundial/internal/action"
	"github.com/sundialhq/sundial/internal/dynamo"
	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/timer"
)

// The scale phases: one invocation of a periodic function over a data set larger than the
// load runs', as the local platform runs it (its built bootstrap behind lambdarun's Runtime
// API, with the template's environment, timeout, memory and role), timed, with the process's
// peak resident set.
const (
	phaseFetchWindow   = "fetch_window"
	phaseRecoverySweep = "recovery_sweep"
	phasePublish       = "publish"
)

var scalePhases = []string{phaseFetchWindow, phaseRecoverySweep, phasePublish}

// scaleRun is what one scale phase measured. Firings (fetch) or Instances (recovery,
// publish) is the data set; Seconds the invocations' wall time; PeakRSSMB the bootstrap's
// VmHWM, sampled while it ran.
type scaleRun struct {
	Function  string  `json:"function"`
	Firings   int     `json:"firings,omitempty"`
	Instances int     `json:"instances,omitempty"`
	Seconds   float64 `json:"seconds"`
	PeakRSSMB float64 `json:"peak_rss_mb"`
	// LongestSeconds is the longest invocation (each must end within TimeoutS).
	LongestSeconds float64 `json:"longest_invocation_s"`
	// Done is how many of the data set the function handled (firings sent, instances
	// re-sent or created); Invocations how many it took (sweeps, for recovery, which resumes).
	Done        int     `json:"done"`
	Invocations int     `json:"invocations"`
	TimeoutS    float64 `json:"timeout_s"`
	MemoryMB    int     `json:"memory_mb"`
	Fits        bool    `json:"fits"`
	SeedSeconds float64 `json:"seed_seconds,omitempty"`
	Result      string  `json:"result,omitempty"`
	Error       string  `json:"error,omitempty"`
}

const scaleMethod = "the function's bootstrap (go build -tags lambda.norpc -trimpath -ldflags=-s -w, CGO_ENABLED=0) run by infra/lambdarun.ProcessFunction " +
	"behind its emulated Runtime API with the template's environment, timeout and memory (declared, not enforced) and its role's credentials " +
	"(every call checked by the local endpoint); data seeded with BatchWriteItem straight to DynamoDB Local; peak RSS = the highest VmHWM of the bootstrap's " +
	"/proc/PID/status, sampled every 50 ms while it ran"

// scaleBootstraps builds the functions the scale phases run.
func scaleBootstraps(ctx context.Context, outDir string) (map[string]string, error) {
	out := map[string]string{}
	for _, name := range []string{"fetch", "recovery", "publish", "auditwriter"} { // the publish audits through the writer
		bin, err := buildFunction(ctx, outDir, name)
		if err != nil {
			return nil, err
		}
		out[name] = bin
	}
	return out, nil
}

// buildFunction builds functions/<name> as `make build` does, for this machine's architecture.
func buildFunction(ctx context.Context, outDir, name string) (string, error) {
	dir := filepath.Join(outDir, "scale", name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	bin, err := filepath.Abs(filepath.Join(dir, "bootstrap"))
	if err != nil {
		return "", err
	}
	build := exec.CommandContext(ctx, "go", "build", "-tags", "lambda.norpc", "-trimpath", "-ldflags=-s -w", "-o", bin, "./functions/"+name)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("scale: build the %s function (run from the repository root): %w\n%s", name, err, out)
	}
	return bin, nil
}

// scale runs one scale phase over n firings or instances.
func (e *env) scale(ctx context.Context, phase, outDir string, bins map[string]string, n int) (scaleRun, error) {
	switch phase {
	case phaseFetchWindow:
		return e.scaleFetch(ctx, outDir, bins["fetch"], n)
	case phaseRecoverySweep:
		return e.scaleRecovery(ctx, outDir, bins["recovery"], n)
	case phasePublish:
		return e.scalePublish(ctx, outDir, bins, n)
	}
	return scaleRun{}, fmt.Errorf("no scale phase %q (phases: %v)", phase, scalePhases)
}

// scaleFetch: n timers due in one fetch window (between 30 s and 90 s from now, inside the
// two-tick look-ahead), and the fetch's tick that sends them.
func (e *env) scaleFetch(ctx context.Context, outDir, bin string, n int) (scaleRun, error) {
	d, err := e.deploy(ctx, "bench-scale-fetch", time.Minute, nil)
	if err != nil {
		return scaleRun{}, err
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	seed, err := e.seed(ctx, d, n, func(i int) time.Time { return now.Add(30*time.Second + time.Duration(i%60_000)*time.Millisecond) })
	if err != nil {
		return scaleRun{}, err
	}
	r := scaleRun{Function: "FetchFunction", Firings: n, SeedSeconds: seed.Seconds()}
	err = e.runScale(ctx, d, &r, outDir, bin, nil, 1, func() ([]byte, error) {
		return json.Marshal(events.CloudWatchEvent{Source: "aws.events", DetailType: "Scheduled Event", Time: time.Now().UTC(), Detail: json.RawMessage("{}")})
	}, func(out []byte) (int, error) {
		var st engine.FetchStats
		if err := json.Unmarshal(out, &st); err != nil {
			return 0, fmt.Errorf("fetch answered %q: %w", out, err)
		}
		return st.Sent, nil
	})
	return r, err
}

// recoverySweeps bounds the recovery phase: sweeps, back to back (a minute apart on AWS),
// until every overdue firing was re-sent.
const recoverySweeps = 10

// scaleRecovery: n instances whose firing is overdue (due 10 minutes ago, never claimed) and
// recovery's sweeps that re-send them.
func (e *env) scaleRecovery(ctx context.Context, outDir, bin string, n int) (scaleRun, error) {
	d, err := e.deploy(ctx, "bench-scale-recovery", time.Minute, nil)
	if err != nil {
		return scaleRun{}, err
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	seed, err := e.seed(ctx, d, n, func(i int) time.Time { return now.Add(-10*time.Minute - time.Duration(i%60_000)*time.Millisecond) })
	if err != nil {
		return scaleRun{}, err
	}
	r := scaleRun{Function: "RecoveryFunction", Instances: n, SeedSeconds: seed.Seconds()}
	err = e.runScale(ctx, d, &r, outDir, bin, nil, recoverySweeps, func() ([]byte, error) {
		return json.Marshal(events.CloudWatchEvent{Source: "aws.events", DetailType: "Scheduled Event", Time: time.Now().UTC(), Detail: json.RawMessage("{}")})
	}, func(out []byte) (int, error) {
		var st engine.RecoveryStats
		if err := json.Unmarshal(out, &st); err != nil {
			return 0, fmt.Errorf("recovery answered %q: %w", out, err)
		}
		return st.Requeued, nil
	})
	return r, err
}

// publishTimers is the publish phase's multi-tenant timers.
const publishTimers = 50

// scalePublish: a manifest of n timers published by the publish function, as CloudFormation
// asks it to on a deploy (its Custom::SundialPublish Create request, answered at the
// request's ResponseURL).
func (e *env) scalePublish(ctx context.Context, outDir string, bins map[string]string, n int) (scaleRun, error) {
	d, err := e.deploy(ctx, "bench-scale-publish", time.Minute, nil)
	if err != nil {
		return scaleRun{}, err
	}
	// The publish writes its audit record through the audit writer (Lambda Invoke): without
	// it every publish answered FAILED ("its audit record was not written").
	fnDef := d.stack.Functions["PublishFunction"]
	if fnDef == nil {
		return scaleRun{}, fmt.Errorf("publish: the template has no PublishFunction")
	}
	stopWriter, err := e.serveAuditWriter(ctx, d, fnDef, bins["auditwriter"], outDir)
	if err != nil {
		return scaleRun{}, err
	}
	defer stopWriter()
	bin := bins["publish"]
	// A manifest file is at most manifest.MaxFileBytes (1 MB), too small for 50,000 timers
	// written out: n instances are publishTimers multi-tenant timers for n/publishTimers
	// tenants, as a SaaS app's would be.
	var body bytes.Buffer
	body.WriteString("# the benchmark's publish phase\ntenants:\n")
	for i := range (n + publishTimers - 1) / publishTimers {
		fmt.Fprintf(&body, "  - t%05d\n", i)
	}
	body.WriteString("timers:\n")
	for i := range publishTimers {
		fmt.Fprintf(&body, "  - {name: P%02d, multiTenant: true, schedule: \"%d * * * *\", action: {http: {url: \"http://127.0.0.1:9/bench\"}}}\n", i, i%60)
	}
	n = publishTimers * ((n + publishTimers - 1) / publishTimers)
	path, err := filepath.Abs(filepath.Join(outDir, "scale", "timers.yaml"))
	if err != nil {
		return scaleRun{}, err
	}
	if err := os.WriteFile(path, body.Bytes(), 0o644); err != nil {
		return scaleRun{}, err
	}
	var mu sync.Mutex
	var answer cfn.Response
	responses := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		mu.Lock()
		_ = json.Unmarshal(b, &answer)
		mu.Unlock()
	}))
	defer responses.Close()
	r := scaleRun{Function: "PublishFunction", Instances: n}
	request := cfn.Event{RequestType: cfn.RequestCreate, RequestID: "bench-scale-publish", ResponseURL: responses.URL + "/response",
		ResourceType: "Custom::SundialPublish", LogicalResourceID: "TimersPublish",
		StackID:            "arn:aws:cloudformation:us-east-1:000000000000:stack/" + d.name + "/bench",
		ResourceProperties: map[string]any{"FunctionVersion": "1", "DeployId": "bench-scale"}}
	extra := map[string]string{"SUNDIAL_MANIFEST": path, "SUNDIAL_LAMBDA_ENDPOINT": e.local.Endpoint}
	// succeeded is the publish's last answer to CloudFormation, an error unless SUCCESS.
	succeeded := func(what string) (cfn.Response, error) {
		mu.Lock()
		a := answer
		mu.Unlock()
		if a.Status != cfn.StatusSuccess {
			return a, fmt.Errorf("%s answered CloudFormation %q: %s", what, a.Status, a.Reason)
		}
		return a, nil
	}
	err = e.runScale(ctx, d, &r, outDir, bin, extra, 1, func() ([]byte, error) {
		return json.Marshal(request)
	}, func([]byte) (int, error) {
		if _, err := succeeded("publish"); err != nil {
			return 0, err
		}
		count, err := e.countInstances(ctx, d)
		return count, err
	})
	if err != nil || !*publishAgain {
		return r, err
	}
	// The next deploy of the same manifest, by a fresh process: every instance read, none
	// written (logged, not reported).
	again := scaleRun{Function: "PublishFunction", Instances: n}
	request.RequestType, request.RequestID = cfn.RequestUpdate, "bench-scale-publish-again"
	request.ResourceProperties = map[string]any{"FunctionVersion": "2", "DeployId": "bench-scale-again"}
	err = e.runScale(ctx, d, &again, outDir, bin, extra, 1, func() ([]byte, error) {
		return json.Marshal(request)
	}, func([]byte) (int, error) {
		a, err := succeeded("the publish again")
		if err != nil {
			return 0, err
		}
		if u, _ := a.Data["Unchanged"].(float64); int(u) != n {
			return 0, fmt.Errorf("the publish again left %v of %d instances unchanged: %v", a.Data["Unchanged"], n, a.Data)
		}
		return n, nil
	})
	return r, err
}

// publishAgain: the publish phase publishes its manifest a second time, as the next deploy.
var publishAgain = flag.Bool("publish-again", false, "publish: then publish the same manifest again as the next deploy (every instance read, none written), logged as a second scale phase")

// runScale invokes the function's bootstrap until it has handled the data set, at most
// maxInvocations times (one for a function that must do it in one invocation; more for one
// that resumes where its previous invocation stopped, as recovery's next sweep does), sampling
// its memory, and fills r. answer reads an invocation's output: how many it handled.
func (e *env) runScale(ctx context.Context, d deployed, r *scaleRun, outDir, bin string, extra map[string]string, maxInvocations int,
	payload func() ([]byte, error), answer func([]byte) (done int, err error)) error {
	fnDef := d.stack.Functions[r.Function]
	if fnDef == nil {
		return fmt.Errorf("scale: the template has no %s", r.Function)
	}
	r.TimeoutS, r.MemoryMB = fnDef.Timeout.Seconds(), fnDef.MemoryMB
	role, err := e.local.Config(d.name, r.Function)
	if err != nil {
		return err
	}
	creds, err := role.Credentials.Retrieve(ctx)
	if err != nil {
		return err
	}
	env := maps.Clone(fnDef.Env)
	maps.Copy(env, map[string]string{"AWS_ENDPOINT_URL": aws.ToString(e.aws.BaseEndpoint),
		"AWS_ACCESS_KEY_ID": creds.AccessKeyID, "AWS_SECRET_ACCESS_KEY": creds.SecretAccessKey})
	maps.Copy(env, extra)
	logPath := filepath.Join(outDir, "scale", r.Function+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logf.Close()
	fn, err := lambdarun.NewProcessFunction(lambdarun.ProcessConfig{Name: "sundial-" + r.Function, Bootstrap: bin, Env: env,
		Timeout: fnDef.Timeout, MemoryMB: fnDef.MemoryMB, Concurrency: 1, Output: logf})
	if err != nil {
		return err
	}
	defer func() { _ = fn.Stop() }()

	stop := make(chan struct{})
	var peak float64
	var sampler sync.WaitGroup
	sampler.Go(func() {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			for _, in := range fn.Instances() {
				if hwm, _, err := procMemory(in.PID); err == nil {
					peak = max(peak, hwm)
				}
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	})
	want := max(r.Firings, r.Instances)
	for r.Invocations < maxInvocations && r.Done < want {
		ev, err := payload()
		if err != nil {
			return err
		}
		start := time.Now()
		out, invokeErr := fn.Invoke(ctx, fmt.Sprintf("scale-%s-%d", r.Function, r.Invocations+1), ev)
		took := time.Since(start).Seconds()
		r.Seconds += took
		r.LongestSeconds = max(r.LongestSeconds, took)
		r.Invocations++
		if invokeErr != nil {
			r.Error = fmt.Sprintf("%v (log: %s)", invokeErr, logPath)
			e.log.Warn("scale phase did not complete", "function", r.Function, "error", invokeErr, "seconds", fmt.Sprintf("%.1f", took))
			break // measured: it does not fit
		}
		r.Result = string(out)
		done, err := answer(out)
		r.Done += done
		if err != nil {
			r.Error = err.Error()
			break
		}
		if done == 0 {
			break // no progress
		}
	}
	close(stop)
	sampler.Wait()
	for _, in := range fn.Instances() { // the process is still there after a successful invocation
		if hwm, _, err := procMemory(in.PID); err == nil {
			peak = max(peak, hwm)
		}
	}
	r.PeakRSSMB = peak
	r.Fits = r.Error == "" && r.Done >= want && r.LongestSeconds <= r.TimeoutS && r.PeakRSSMB <= float64(r.MemoryMB)
	e.log.Info("scale phase", "function", r.Function, "of", want, "done", r.Done, "invocations", r.Invocations, "seconds", fmt.Sprintf("%.1f", r.Seconds),
		"peak_rss_mb", fmt.Sprintf("%.1f", r.PeakRSSMB), "fits", r.Fits)
	return nil
}

// seed writes n instances (every 1 h, due at due(i)); see seedInstances.
func (e *env) seed(ctx context.Context, d deployed, n int, due func(i int) time.Time) (time.Duration, error) {
	return e.seedInstances(ctx, d, n, func(i int) timer.Instance {
		key := timer.Key{Timer: fmt.Sprintf("S%06d", i)}
		return timer.Instance{Key: key, Active: true, NextRun: due(i), Shard: dynamo.ShardOf(key, d.cfg.DueShards),
			Settings: timer.Settings{Schedule: "every 1h", Priority: timer.DefaultPriority, Timeout: time.Minute,
				Action: action.Spec{HTTP: &action.HTTPSpec{URL: "http://127.0.0.1:9/bench"}}}}
	})
}

// seedDynamoDB is a DynamoDB client with the administrator's key at the local endpoint, not
// counted: seeding is not the measured function's work. The endpoint places each item on its
// DynamoDB partition's engine, where the functions' calls look for it.
func (e *env) seedDynamoDB() *dynamodb.Client {
	cfg := e.aws.Copy()
	cfg.BaseEndpoint = aws.String(e.local.Endpoint)
	cfg.Credentials = credentials.StaticCredentialsProvider{Value: e.local.Admin()}
	cfg.APIOptions = nil
	return dynamodb.NewFromConfig(cfg)
}

// seedInstances writes instance(0..n-1) with BatchWriteItem through the local endpoint
// (seedDynamoDB), bypassing the engine: the phase measures the function, not the loading.
func (e *env) seedInstances(ctx context.Context, d deployed, n int, instance func(i int) timer.Instance) (time.Duration, error) {
	start := time.Now()
	ddb := e.seedDynamoDB()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	for lo := 0; lo < n; lo += 25 {
		hi := min(n, lo+25)
		g.Go(func() error {
			var reqs []types.WriteRequest
			for i := lo; i < hi; i++ {
				item, err := dynamo.InstanceItem(instance(i))
				if err != nil {
					return err
				}
				reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: item}})
			}
			for len(reqs) > 0 {
				out, err := ddb.BatchWriteItem(gctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{d.cfg.TimersTable: reqs}})
				if err != nil {
					return fmt.Errorf("seed: %w", err)
				}
				reqs = out.UnprocessedItems[d.cfg.TimersTable]
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return 0, err
	}
	e.log.Info("seeded", "stack", d.name, "instances", n, "took", time.Since(start).Round(time.Millisecond))
	return time.Since(start), nil
}

// countInstances counts the stack's instance items.
func (e *env) countInstances(ctx context.Context, d deployed) (int, error) {
	ddb := dynamodb.NewFromConfig(e.aws)
	p := dynamodb.NewScanPaginator(ddb, &dynamodb.ScanInput{TableName: &d.cfg.TimersTable, Select: types.SelectCount,
		FilterExpression: aws.String("kind = :k"), ExpressionAttributeValues: map[string]types.AttributeValue{":k": &types.AttributeValueMemberS{Value: "instance"}}})
	n := 0
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return 0, fmt.Errorf("count instances: %w", err)
		}
		n += int(page.Count)
	}
	return n, nil
}
