// Package config reads the functions' settings from the environment template.yaml gives them.
package config

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Config is what every function needs.
type Config struct {
	TimersTable       string
	LogTable          string
	Queues            [4]string // P1..P4 URLs
	DLQ               string
	DueShards         int
	DefaultMaxRetries int
	DefaultRetryDelay time.Duration
	LogRetention      time.Duration
	// AuditRetention is how long audit records are kept (SUNDIAL_AUDIT_RETENTION_DAYS).
	AuditRetention time.Duration
	// ProcessorTimeout is the processor function's timeout (SUNDIAL_PROCESSOR_TIMEOUT_SECONDS,
	// the template's ProcessorTimeoutSeconds, which is also that function's Timeout): it bounds
	// the timeout of a timer that is not async (timer.MaxSyncTimeout).
	ProcessorTimeout time.Duration
	// Tick is the fetch interval; the fetch looks ahead two ticks. It is the interval of the
	// fetch's schedule (SUNDIAL_FETCH_SCHEDULE, from the template's FetchTickMinutes parameter, a
	// rate() expression), unless SUNDIAL_TICK sets it (the local platform's sub-minute ticks).
	Tick time.Duration
	// IndexLag bounds how long a write takes to show in the due index (a global secondary
	// index: "within a second" normally on AWS); the fetch looks at the index again this
	// long after its first look, and looks ahead two ticks plus IndexLag
	// (engine.Fetcher.IndexLag). SUNDIAL_INDEX_LAG.
	IndexLag time.Duration
	// LostAfter: an unclaimed firing this far past due is re-sent by recovery.
	LostAfter time.Duration
	// ShardGrace is how long the shards above a lowered DueShards must stay empty before the
	// fetch stops reading them (0: the engine's default, engine.RetireGrace).
	ShardGrace time.Duration
	// ClaimRate is the claims per second the fetch assumes when it sends a crowded second's
	// firings early (SUNDIAL_CLAIM_RATE; 0: engine.DefaultClaimRate).
	ClaimRate int
	// FailedBackoff hides a failed SQS record for FailedBackoff x its receive count before
	// redelivery, so a bad message reaches the dead-letter queue in minutes, not hours.
	FailedBackoff time.Duration
	// LambdaEndpoint, when set, is the base endpoint of the Lambda client that invokes Lambda
	// actions instead of the AWS endpoint: the local platform's emulated Invoke API (see
	// infra/lambdarun.InvokeAPI), since the AWS emulator cannot run functions.
	LambdaEndpoint string
	// AuditWriter is the audit writer function (name or ARN, SUNDIAL_AUDIT_WRITER, from the
	// template's !Ref AuditWriterFunction): set for the functions whose roles may not write
	// audit items (API, recovery), which append by invoking it; empty: audit records are
	// appended straight to the log table (the writer itself, the CLI with its credentials).
	AuditWriter string
	// EventBus is the EventBridge bus (name or ARN) the log writer and recovery put Sundial's
	// events on (SUNDIAL_EVENT_BUS, from the template's EventBusName parameter); empty: no
	// events are put.
	EventBus string
}

// DefaultIndexLag is twice the second within which AWS says a write normally reaches a
// global secondary index.
const DefaultIndexLag = 2 * time.Second

// MaxTick is the longest fetch interval: the fetch looks ahead two ticks and SQS delays a
// message at most 15 minutes.
const MaxTick = 450 * time.Second

// FromEnv reads SUNDIAL_* variables; every problem is reported, not just the first. The
// variables template.yaml's Globals give every function are required: their values, defaults
// included, come from the template alone (the stack's, or stack.Outputs.Env for a deployed
// one), never from here. The others are the local platform's and tests' knobs, with defaults.
func FromEnv(getenv func(string) string) (Config, error) {
	var errs []error
	req := func(name string) string {
		v := getenv(name)
		if v == "" {
			errs = append(errs, fmt.Errorf("%s is required", name))
		}
		return v
	}
	// reqNum reads a required integer in lo..hi.
	reqNum := func(name string, lo, hi int) int {
		v := req(name)
		if v == "" {
			return 0
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < lo || n > hi {
			errs = append(errs, fmt.Errorf("%s=%q: want an integer in %d..%d", name, v, lo, hi))
			return 0
		}
		return n
	}
	num := func(name string, def, lo, hi int) int {
		if getenv(name) == "" {
			return def
		}
		return reqNum(name, lo, hi)
	}
	// reqDur reads a required duration in lo..hi.
	reqDur := func(name string, lo, hi time.Duration) time.Duration {
		v := req(name)
		if v == "" {
			return 0
		}
		d, err := time.ParseDuration(v)
		if err != nil || d < lo || d > hi {
			errs = append(errs, fmt.Errorf("%s=%q: want a duration in %s..%s", name, v, lo, hi))
			return 0
		}
		return d
	}
	dur := func(name string, def, lo, hi time.Duration) time.Duration {
		if getenv(name) == "" {
			return def
		}
		return reqDur(name, lo, hi)
	}
	const day = 24 * time.Hour
	c := Config{
		TimersTable: req("SUNDIAL_TIMERS_TABLE"),
		LogTable:    req("SUNDIAL_LOG_TABLE"),
		Queues: [4]string{
			req("SUNDIAL_QUEUE_P1"), req("SUNDIAL_QUEUE_P2"), req("SUNDIAL_QUEUE_P3"), req("SUNDIAL_QUEUE_P4"),
		},
		DLQ:               getenv("SUNDIAL_DLQ"),
		DueShards:         reqNum("SUNDIAL_DUE_SHARDS", 1, 64),
		DefaultMaxRetries: reqNum("SUNDIAL_DEFAULT_MAX_RETRIES", 0, 100),
		DefaultRetryDelay: reqDur("SUNDIAL_DEFAULT_RETRY_DELAY", 0, day),
		LogRetention:      time.Duration(reqNum("SUNDIAL_LOG_RETENTION_DAYS", 1, 3650)) * day,
		ProcessorTimeout:  time.Duration(reqNum("SUNDIAL_PROCESSOR_TIMEOUT_SECONDS", 1, 900)) * time.Second,
		AuditRetention:    time.Duration(reqNum("SUNDIAL_AUDIT_RETENTION_DAYS", 1, 3650)) * day,
	}
	if v := req("SUNDIAL_FETCH_SCHEDULE"); v != "" {
		tick, err := RateInterval(v)
		if err == nil && tick > MaxTick {
			err = fmt.Errorf("the interval %s is above %s (the fetch looks ahead two ticks; SQS delays a message at most 15 minutes)", tick, MaxTick)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("SUNDIAL_FETCH_SCHEDULE=%q: %w", v, err))
		} else {
			c.Tick = tick
		}
	}
	c.Tick = dur("SUNDIAL_TICK", c.Tick, 100*time.Millisecond, MaxTick)
	c.IndexLag = dur("SUNDIAL_INDEX_LAG", DefaultIndexLag, 0, time.Minute)
	c.LostAfter = dur("SUNDIAL_LOST_AFTER", 2*c.Tick+30*time.Second, time.Second, 24*time.Hour)
	c.ShardGrace = dur("SUNDIAL_SHARD_GRACE", 0, 0, 24*time.Hour)
	c.ClaimRate = num("SUNDIAL_CLAIM_RATE", 0, 0, 1_000_000)
	c.FailedBackoff = dur("SUNDIAL_FAILED_BACKOFF", 30*time.Second, time.Second, time.Hour)
	if v := getenv("SUNDIAL_LAMBDA_ENDPOINT"); v != "" {
		if u, err := url.Parse(v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("SUNDIAL_LAMBDA_ENDPOINT=%q: want an absolute http:// or https:// URL", v))
		} else {
			c.LambdaEndpoint = v
		}
	}
	c.EventBus = strings.TrimSpace(getenv("SUNDIAL_EVENT_BUS"))
	c.AuditWriter = strings.TrimSpace(getenv("SUNDIAL_AUDIT_WRITER"))
	return c, errors.Join(errs...)
}

// RateInterval reads an EventBridge rate() expression: rate(1 minute), rate(5 minutes),
// rate(1 hour), rate(2 days).
func RateInterval(expr string) (time.Duration, error) {
	inner, prefixed := strings.CutPrefix(expr, "rate(")
	inner, suffixed := strings.CutSuffix(inner, ")")
	if !prefixed || !suffixed {
		return 0, errors.New("not a rate() expression")
	}
	num, unit, _ := strings.Cut(inner, " ")
	n, err := strconv.Atoi(num)
	if err != nil || n < 1 {
		return 0, errors.New("want rate(<positive integer> <unit>)")
	}
	units := map[string]time.Duration{"minute": time.Minute, "hour": time.Hour, "day": 24 * time.Hour}
	if base, ok := units[unit]; ok && n == 1 {
		return base, nil
	}
	if base, ok := units[strings.TrimSuffix(unit, "s")]; ok && strings.HasSuffix(unit, "s") && n > 1 {
		return time.Duration(n) * base, nil
	}
	return 0, errors.New("the unit must be minute, hour or day for 1, and minutes, hours or days above")
}
