package orders

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// Headers of a push. The receiver can deduplicate on Idempotency-Key (see the package
// documentation); the others say which run pushed it.
const (
	HeaderIdempotencyKey = "Idempotency-Key"
	HeaderTimer          = "X-Sundial-Timer"
	HeaderExecution      = "X-Sundial-Execution-Id"
	HeaderShard          = "X-Sundial-Shard"
	HeaderAttempt        = "X-Order-Push-Attempt"
)

// PushMeta says which run pushes an order.
type PushMeta struct {
	Timer     string
	Execution string
	Shard     Shard
	Attempt   int // the order's attempt: retry_count + 1
}

// Pusher sends one order to the third party; an error means it was not accepted.
type Pusher interface {
	Push(ctx context.Context, endpoint string, o Order, m PushMeta) error
}

// HTTPPusher POSTs the order as JSON; a 2xx answer is acceptance.
type HTTPPusher struct {
	Client *http.Client // default http.DefaultClient; the ctx bounds each push
}

// PushError is a push the third party did not accept.
type PushError struct {
	Status int    // HTTP status, 0 when there was no answer
	Body   string // the start of the answer
	Err    error  // transport error
}

func (e *PushError) Error() string {
	var b strings.Builder
	if e.Status != 0 {
		fmt.Fprintf(&b, "third party answered %d", e.Status)
	} else {
		b.WriteString("push failed")
	}
	if e.Err != nil {
		b.WriteString(": " + e.Err.Error())
	}
	if e.Body != "" {
		b.WriteString(": " + e.Body)
	}
	return b.String()
}

func (e *PushError) Unwrap() error { return e.Err }

// IdempotencyKey is the key a push of order id carries.
func IdempotencyKey(id int64) string { return "order-" + strconv.FormatInt(id, 10) }

// Push implements Pusher.
func (p *HTTPPusher) Push(ctx context.Context, endpoint string, o Order, m PushMeta) error {
	body, err := json.Marshal(o)
	if err != nil {
		return fmt.Errorf("encode order %d: %w", o.ID, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("push order %d: %w", o.ID, err)
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", "sundial-example-orderpush")
	h.Set(HeaderIdempotencyKey, IdempotencyKey(o.ID))
	h.Set(HeaderAttempt, strconv.Itoa(m.Attempt))
	if m.Timer != "" {
		h.Set(HeaderTimer, m.Timer)
	}
	if m.Execution != "" {
		h.Set(HeaderExecution, m.Execution)
	}
	if s := m.Shard.String(); s != "" {
		h.Set(HeaderShard, s)
	}
	client := p.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return &PushError{Err: err}
	}
	defer resp.Body.Close()
	head, _ := io.ReadAll(io.LimitReader(resp.Body, 256))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20)) // let the connection be reused
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return &PushError{Status: resp.StatusCode, Body: strings.TrimSpace(string(head))}
	}
	return nil
}
