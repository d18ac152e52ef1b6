// Package chaos injects the failures a serverless deployment meets into Sundial's own AWS
// clients, for the chaos test: throttling and 5xx errors on DynamoDB and SQS calls, SQS
// messages sent twice, and a skewed clock. It is wired only into the chaos run's own
// bootstraps (infra/chaosrun/bootstrap, which read SUNDIAL_CHAOS), never into the functions'
// (a test in functions/ keeps it out of them).
//
// Errors are injected inside the SDK's request pipeline, after its retry middleware, so every
// attempt draws its own chance and the SDK retries them exactly as it retries the real ones:
// throttling as ProvisionedThroughputExceededException (DynamoDB) or RequestThrottled (SQS),
// server errors as HTTP 500. What survives the retries reaches Sundial's code as the real
// error would.
package chaos

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// EnvVar holds a Config in its String form, e.g.
// "ddb_throttle=0.05,ddb_5xx=0.02,sqs_5xx=0.02,sqs_dup=0.1,clock_skew=2s,seed=42".
const EnvVar = "SUNDIAL_CHAOS"

// Faults are the per-attempt probabilities of the failures injected into one service's calls.
type Faults struct {
	// Throttle: the request is refused as throttled before it reaches the service.
	Throttle float64
	// Server: the request fails with HTTP 500 before it reaches the service.
	Server float64
	// ServerAfter: the request is applied, then its reply is lost and the caller sees HTTP 500
	// (an ambiguous failure: the SDK retries a request that already took effect).
	ServerAfter float64
}

func (f Faults) total() float64 { return f.Throttle + f.Server + f.ServerAfter }

// Config is what to inject.
type Config struct {
	DynamoDB Faults
	SQS      Faults
	// Dup is the probability that an entry of a SendMessageBatch is sent twice.
	Dup float64
	// ClockSkew bounds the offset of each process's clock: uniform in [-ClockSkew, +ClockSkew].
	ClockSkew time.Duration
	// Seed makes a run reproducible; each process derives its own stream from it and its node name.
	Seed uint64
}

// keys maps each setting's name to where its value goes.
func (c *Config) rates() map[string]*float64 {
	return map[string]*float64{
		"ddb_throttle": &c.DynamoDB.Throttle, "ddb_5xx": &c.DynamoDB.Server, "ddb_5xx_after": &c.DynamoDB.ServerAfter,
		"sqs_throttle": &c.SQS.Throttle, "sqs_5xx": &c.SQS.Server, "sqs_5xx_after": &c.SQS.ServerAfter,
		"sqs_dup": &c.Dup,
	}
}

var rateOrder = []string{"ddb_throttle", "ddb_5xx", "ddb_5xx_after", "sqs_throttle", "sqs_5xx", "sqs_5xx_after", "sqs_dup"}

// Parse reads the comma-separated key=value form. Keys: ddb_throttle, ddb_5xx, ddb_5xx_after,
// sqs_throttle, sqs_5xx, sqs_5xx_after, sqs_dup (probabilities in 0..1), clock_skew (a Go
// duration) and seed (an unsigned integer). Unknown keys and bad values are errors.
func Parse(s string) (Config, error) {
	var c Config
	rates := c.rates()
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok {
			return Config{}, fmt.Errorf("%s: %q: want key=value", EnvVar, part)
		}
		switch {
		case rates[k] != nil:
			p, err := strconv.ParseFloat(v, 64)
			if err != nil || p < 0 || p > 1 {
				return Config{}, fmt.Errorf("%s: %s=%q: want a probability in 0..1", EnvVar, k, v)
			}
			*rates[k] = p
		case k == "clock_skew":
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 || d > time.Hour {
				return Config{}, fmt.Errorf("%s: clock_skew=%q: want a duration in 0..1h", EnvVar, v)
			}
			c.ClockSkew = d
		case k == "seed":
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return Config{}, fmt.Errorf("%s: seed=%q: want an unsigned integer", EnvVar, v)
			}
			c.Seed = n
		default:
			return Config{}, fmt.Errorf("%s: unknown setting %q (want %s, clock_skew or seed)", EnvVar, k, strings.Join(rateOrder, ", "))
		}
	}
	for name, f := range map[string]Faults{"ddb": c.DynamoDB, "sqs": c.SQS} {
		if f.total() > 1 {
			return Config{}, fmt.Errorf("%s: %s_throttle + %s_5xx + %s_5xx_after = %g: the rates of one service add up to more than 1", EnvVar, name, name, name, f.total())
		}
	}
	return c, nil
}

// String is the form Parse reads; zero settings are left out.
func (c Config) String() string {
	var parts []string
	rates := c.rates()
	for _, k := range rateOrder {
		if v := *rates[k]; v != 0 {
			parts = append(parts, k+"="+strconv.FormatFloat(v, 'g', -1, 64))
		}
	}
	if c.ClockSkew != 0 {
		parts = append(parts, "clock_skew="+c.ClockSkew.String())
	}
	parts = append(parts, "seed="+strconv.FormatUint(c.Seed, 10))
	return strings.Join(parts, ",")
}

// Enabled reports whether anything is injected at all.
func (c Config) Enabled() bool {
	return c.DynamoDB.total() > 0 || c.SQS.total() > 0 || c.Dup > 0 || c.ClockSkew > 0
}
