package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/sundialhq/sundial/infra/lambdarun"
	"github.com/sundialhq/sundial/internal/action"
	"github.com/sundialhq/sundial/internal/dynamo"
	"github.com/sundialhq/sundial/internal/message"
	"github.com/sundialhq/sundial/internal/timer"
)

// memoryRun is the processor's memory on batches of ten.
type memoryRun struct {
	Method     string  `json:"method"`
	Batches    int     `json:"batches"`
	Records    int     `json:"records"`
	Failures   int     `json:"failures"`
	Executions int     `json:"executions"`
	Misfired   int     `json:"misfired"` // claimed > 60 s late (still run once)
	ColdStarts int64   `json:"coldStarts"`
	PeakRSSMB  float64 `json:"peakRssMB"`
	// FirstPeakRSSMB is the peak after the first batch (init and one invocation).
	FirstPeakRSSMB float64 `json:"firstBatchPeakRssMB"`
	// RSSMB is VmRSS after each batch, for the plot.
	RSSMB      []float64 `json:"rssMBByBatch"`
	MaxBatchMs float64   `json:"maxBatchMs"`
	LimitMB    int       `json:"limitMB"`
}

const memoryMethod = "the real processor bootstrap (go build -tags lambda.norpc -trimpath -ldflags=-s -w ./functions/processor, " +
	"CGO_ENABLED=0, this machine's architecture) run by infra/lambdarun.ProcessFunction behind its emulated Lambda Runtime API " +
	"with the stack's environment and 128 MB declared (not enforced), one execution environment, invoked with SQS events of 10 " +
	"real firings one after the other; its DynamoDB and SQS calls go to the emulator and its HTTP actions to a local endpoint; " +
	"peak RSS = VmHWM of the bootstrap's /proc/PID/status"

// buildBootstrap builds the processor as `make build` does, for this machine's architecture.
// It runs before anything is timed: a compile would compete for the CPU with the measurements.
func buildBootstrap(ctx context.Context, outDir string) (string, error) {
	dir := filepath.Join(outDir, "memory")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	bin, err := filepath.Abs(filepath.Join(dir, "bootstrap"))
	if err != nil {
		return "", err
	}
	build := exec.CommandContext(ctx, "go", "build", "-tags", "lambda.norpc", "-trimpath", "-ldflags=-s -w", "-o", bin, "./functions/processor")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("memory: build the processor (run from the repository root): %w\n%s", err, out)
	}
	return bin, nil
}

// memory runs the processor bootstrap on `batches` SQS events of ten real firings, each due as
// it is handed over, and reads the process's memory after every batch.
func (e *env) memory(ctx context.Context, outDir, bootstrap string, batches int) (memoryRun, error) {
	d, err := e.deploy(ctx, "bench-memory", time.Minute, nil)
	if err != nil {
		return memoryRun{}, err
	}
	actions := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{}`))
	}))
	defer actions.Close()

	logPath := filepath.Join(outDir, "memory", "processor.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return memoryRun{}, err
	}
	defer logf.Close()
	env := maps.Clone(d.env)
	// At DEBUG every successful execution has its line: the phase counts them.
	for k, v := range map[string]string{"AWS_ENDPOINT_URL": aws.ToString(e.aws.BaseEndpoint), "AWS_ACCESS_KEY_ID": e.local.Admin().AccessKeyID, "AWS_SECRET_ACCESS_KEY": e.local.Admin().SecretAccessKey,
		"AWS_LAMBDA_LOG_LEVEL": "DEBUG"} {
		env[k] = v
	}
	fn, err := lambdarun.NewProcessFunction(lambdarun.ProcessConfig{
		Name: "sundial-processor", Bootstrap: bootstrap, Env: env, Timeout: 900 * time.Second,
		MemoryMB: lambdaMemoryMB, Concurrency: 1, Output: logf,
	})
	if err != nil {
		return memoryRun{}, err
	}
	defer func() { _ = fn.Stop() }()

	store := dynamo.New(dynamodb.NewFromConfig(e.aws), d.cfg.TimersTable, d.cfg.LogTable, d.cfg.LogRetention)
	// The watermark covers the next runs, so each batch also sends its follow-up firings, as
	// the processor does for sub-minute schedules.
	now := time.Now().UTC().Truncate(time.Millisecond)
	if _, err := store.AdvanceWatermark(ctx, now.Add(time.Hour), now); err != nil {
		return memoryRun{}, err
	}
	arn := "arn:aws:sqs:us-east-1:000000000000:" + d.cfg.Queues[2][strings.LastIndex(d.cfg.Queues[2], "/")+1:]
	r := memoryRun{Method: memoryMethod, LimitMB: lambdaMemoryMB}
	for b := range batches {
		payload, err := memoryBatch(ctx, store, d, b, actions.URL, arn)
		if err != nil {
			return memoryRun{}, err
		}
		start := time.Now()
		out, err := fn.Invoke(ctx, fmt.Sprintf("rss-%d", b), payload)
		if err != nil {
			return memoryRun{}, fmt.Errorf("memory: batch %d: %w (log: %s)", b, err, logPath)
		}
		r.MaxBatchMs = max(r.MaxBatchMs, float64(time.Since(start).Microseconds())/1000)
		var resp events.SQSEventResponse
		if err := json.Unmarshal(out, &resp); err != nil {
			return memoryRun{}, fmt.Errorf("memory: batch %d: response %q: %w", b, out, err)
		}
		r.Batches++
		r.Records += 10
		r.Failures += len(resp.BatchItemFailures)
		inst := fn.Instances()
		if len(inst) != 1 {
			return memoryRun{}, fmt.Errorf("memory: %d processor instances after batch %d, want 1 (log: %s)", len(inst), b, logPath)
		}
		hwm, rss, err := procMemory(inst[0].PID)
		if err != nil {
			return memoryRun{}, err
		}
		r.PeakRSSMB = max(r.PeakRSSMB, hwm)
		if b == 0 {
			r.FirstPeakRSSMB = hwm
		}
		r.RSSMB = append(r.RSSMB, rss)
	}
	r.ColdStarts = fn.Stats().ColdStarts
	if err := fn.Stop(); err != nil {
		return memoryRun{}, err
	}
	logged, err := os.ReadFile(logPath)
	if err != nil {
		return memoryRun{}, err
	}
	r.Executions = strings.Count(string(logged), `"msg":"execution"`)
	r.Misfired = strings.Count(string(logged), `"msg":"processor: misfired firing"`)
	if r.Failures > 0 || r.Executions != r.Records {
		return r, fmt.Errorf("memory: %d records, %d failed, %d executed (log: %s)", r.Records, r.Failures, r.Executions, logPath)
	}
	e.log.Info("memory measured", "peak_rss_mb", fmt.Sprintf("%.1f", r.PeakRSSMB), "batches", r.Batches)
	return r, nil
}

// memoryBatch creates ten timers due now and returns the SQS event that delivers their
// firings, shaped as the event source mapping shapes it.
func memoryBatch(ctx context.Context, store *dynamo.Store, d deployed, b int, actionURL, arn string) ([]byte, error) {
	now := time.Now().UTC().Truncate(time.Millisecond)
	var ev events.SQSEvent
	for i := range 10 {
		in := timer.Instance{
			Key: timer.Key{Timer: fmt.Sprintf("Mem%03d%02d", b, i)},
			Settings: timer.Settings{Schedule: "every 5s", Priority: timer.DefaultPriority, Timeout: 20 * time.Second,
				Action:     action.Spec{HTTP: &action.HTTPSpec{URL: actionURL + "/ok"}},
				Properties: map[string]string{"tenantRegion": "eu-west-1", "batch": strconv.Itoa(b)}},
			Active: true, NextRun: now,
		}
		in.Shard = dynamo.ShardOf(in.Key, d.cfg.DueShards)
		if err := store.Create(ctx, in); err != nil {
			return nil, err
		}
		body, err := message.Encode(message.ForInstance(in, message.ReasonSchedule))
		if err != nil {
			return nil, err
		}
		three := "3"
		id := fmt.Sprintf("m-%d-%d", b, i)
		ev.Records = append(ev.Records, events.SQSMessage{
			MessageId: id, ReceiptHandle: "rh-" + id, Body: body, EventSource: "aws:sqs", EventSourceARN: arn, AWSRegion: "us-east-1",
			Attributes:        map[string]string{"ApproximateReceiveCount": "1", "SentTimestamp": strconv.FormatInt(now.UnixMilli(), 10)},
			MessageAttributes: map[string]events.SQSMessageAttribute{"priority": {DataType: "Number", StringValue: &three}},
		})
	}
	return json.Marshal(ev)
}

// procMemory reads VmHWM (peak resident set) and VmRSS of a process, in MB.
func procMemory(pid int) (hwm, rss float64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, fmt.Errorf("memory: read the processor's /proc status (Linux only): %w", err)
	}
	field := func(name string) (float64, error) {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, name+":"); ok {
				kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
				return kb / 1024, err
			}
		}
		return 0, fmt.Errorf("memory: /proc/%d/status has no %s", pid, name)
	}
	if hwm, err = field("VmHWM"); err != nil {
		return 0, 0, err
	}
	rss, err = field("VmRSS")
	return hwm, rss, err
}
