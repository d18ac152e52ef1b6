package orders

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Timer properties the action reads (the timer's `properties` in the manifest). tt_index and
// tt_total are the seed's names; `shards: N` in the manifest sets them on each shard.
const (
	PropEndpoint    = "endpoint"
	PropTable       = "table"
	PropBatch       = "batch"
	PropRetryDelay  = "retryDelay"
	PropMaxAttempts = "maxAttempts"
	PropPushTimeout = "pushTimeout"
	PropShardIndex  = "tt_index"
	PropShardTotal  = "tt_total"
)

// Defaults and bounds of the properties.
const (
	DefaultBatch       = 1 // the seed's LIMIT 1
	MaxBatch           = 1000
	DefaultRetryDelay  = 10 * time.Minute
	MaxRetryDelay      = 30 * 24 * time.Hour
	MaxAttemptsLimit   = 1000
	DefaultPushTimeout = 10 * time.Second
	MaxShards          = 1000
)

var knownProps = []string{PropBatch, PropEndpoint, PropMaxAttempts, PropPushTimeout, PropRetryDelay, PropTable, PropShardIndex, PropShardTotal}

// Config is one run's settings, from the timer's properties.
type Config struct {
	Endpoint    string        // the third party's URL; each order is POSTed to it as JSON
	Table       string        // orders table; "" means the function's (ORDERS_TABLE)
	Batch       int           // orders fetched per run (scenario 4: 100)
	RetryDelay  time.Duration // a failed order's next attempt waits this long (scenario 2)
	MaxAttempts int           // 0 = unlimited; else give up (order_push_state 90) after this many (scenario 3)
	PushTimeout time.Duration // bound of one push
	Shard       Shard         // scenario 5; the zero Shard is every order
}

// Shard is the slice of orders order_id % Total == Index; Total 0 means every order.
type Shard struct{ Index, Total int }

// Has reports whether the order with this id belongs to the shard.
func (s Shard) Has(id int64) bool { return s.Total == 0 || id%int64(s.Total) == int64(s.Index) }

// String is "index/total", or "" for every order.
func (s Shard) String() string {
	if s.Total == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Total)
}

// buckets are the push buckets holding the shard's orders; exact is false when they also hold
// other shards' orders (Total does not divide Buckets), which the caller must then filter out.
func (s Shard) buckets() (bs []int, exact bool) {
	if s.Total == 0 || Buckets%s.Total == 0 {
		for b := range Buckets {
			if s.Total == 0 || b%s.Total == s.Index {
				bs = append(bs, b)
			}
		}
		return bs, true
	}
	for b := range Buckets {
		bs = append(bs, b)
	}
	return bs, false
}

// ParseConfig reads the timer's properties; every problem is reported, each naming the
// property, its value and what is wanted. Unknown properties are errors (a misspelt
// "maxAttemps" must not silently mean unlimited).
func ParseConfig(props map[string]string) (Config, error) {
	c := Config{Batch: DefaultBatch, RetryDelay: DefaultRetryDelay, PushTimeout: DefaultPushTimeout}
	var errs []error
	bad := func(name, want string) {
		errs = append(errs, fmt.Errorf("property %s %q: want %s", name, props[name], want))
	}
	integer := func(name string, def, lo, hi int) int {
		v, ok := props[name]
		if !ok {
			return def
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < lo || n > hi {
			bad(name, fmt.Sprintf("an integer %d..%d", lo, hi))
			return def
		}
		return n
	}
	duration := func(name string, def, lo, hi time.Duration) time.Duration {
		v, ok := props[name]
		if !ok {
			return def
		}
		d, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil || d < lo || d > hi {
			bad(name, fmt.Sprintf("a duration %s..%s such as 10m or 30s", lo, hi))
			return def
		}
		return d
	}

	for _, k := range slices.Sorted(maps.Keys(props)) {
		if !slices.Contains(knownProps, k) {
			errs = append(errs, fmt.Errorf("unknown property %q (known: %s)", k, strings.Join(knownProps, ", ")))
		}
	}

	c.Endpoint = strings.TrimSpace(props[PropEndpoint])
	if c.Endpoint == "" {
		errs = append(errs, fmt.Errorf("property %s is required: the third party's URL, e.g. http://127.0.0.1:9100/orders", PropEndpoint))
	} else if u, err := url.Parse(c.Endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		bad(PropEndpoint, "an absolute http:// or https:// URL")
	}
	c.Table = strings.TrimSpace(props[PropTable])
	c.Batch = integer(PropBatch, DefaultBatch, 1, MaxBatch)
	c.RetryDelay = duration(PropRetryDelay, DefaultRetryDelay, 0, MaxRetryDelay)
	c.MaxAttempts = integer(PropMaxAttempts, 0, 0, MaxAttemptsLimit)
	c.PushTimeout = duration(PropPushTimeout, DefaultPushTimeout, 10*time.Millisecond, 5*time.Minute)

	idx, hasIdx := props[PropShardIndex]
	_, hasTotal := props[PropShardTotal]
	switch {
	case hasIdx && !hasTotal:
		errs = append(errs, fmt.Errorf("property %s %q needs %s (the number of shards)", PropShardIndex, idx, PropShardTotal))
	case hasTotal && !hasIdx:
		errs = append(errs, fmt.Errorf("property %s %q needs %s (this shard's index)", PropShardTotal, props[PropShardTotal], PropShardIndex))
	case hasIdx && hasTotal:
		total := integer(PropShardTotal, 0, 1, MaxShards)
		i, err := strconv.Atoi(strings.TrimSpace(idx))
		switch {
		case total == 0: // reported above; the index cannot be checked
		case err != nil || i < 0 || i >= total:
			bad(PropShardIndex, fmt.Sprintf("an integer 0..tt_total-1 (0..%d)", total-1))
		default:
			c.Shard = Shard{Index: i, Total: total}
		}
	}
	if len(errs) > 0 {
		return Config{}, errors.Join(errs...)
	}
	return c, nil
}
