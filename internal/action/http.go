package action

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
)

const (
	userAgent    = "sundial"
	bodyMax      = 64 << 10 // a timer answer is small; a huge body must not exhaust the processor
	maxRedirects = 3
)

// HTTPInvoker POSTs the Payload to an HTTP action.
// A nil Client means a default client with no overall timeout: the ctx carries the timer's
// deadline. A non-nil Client is used as is, including its redirect policy.
type HTTPInvoker struct {
	Client *http.Client
}

// defaultClient follows at most maxRedirects and never downgrades https to http.
var defaultClient = &http.Client{CheckRedirect: checkRedirect}

// checkRedirect caps redirects (a timer should not wander) and refuses an https→http hop, which
// would send the payload and the spec's headers (often credentials) in clear text.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	if len(via) > 0 && via[len(via)-1].URL.Scheme == "https" && req.URL.Scheme != "https" {
		return fmt.Errorf("refusing redirect from https to %s", req.URL.Scheme)
	}
	return nil
}

func (h *HTTPInvoker) client() *http.Client {
	if h == nil || h.Client == nil {
		return defaultClient
	}
	return h.Client
}

// Invoke POSTs p as JSON. 2xx is success; any other status, a transport error, an unreadable
// body or an invalid "nextRun" is a *Failure.
func (h *HTTPInvoker) Invoke(ctx context.Context, spec Spec, p Payload) (Result, error) {
	if err := spec.Validate(); err != nil {
		return Result{}, err
	}
	if spec.HTTP == nil {
		return Result{}, fmt.Errorf("action: the HTTP invoker cannot call %s", spec)
	}
	body, err := encodePayload(p)
	if err != nil {
		return Result{}, err
	}
	limit := budget(ctx)
	fenced, err := fence(ctx)
	if err != nil {
		return Result{}, classify(ctx, limit, &Failure{head: "http request not sent: its deadline had passed", Err: err})
	}
	req, err := http.NewRequestWithContext(fenced, http.MethodPost, spec.HTTP.URL, bytes.NewReader(body))
	if err != nil {
		return Result{}, fmt.Errorf("action: build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range spec.HTTP.Headers {
		req.Header.Set(k, v)
	}
	// Set last so the receiver can always tell (and allow-list) Sundial's calls.
	req.Header.Set("User-Agent", userAgent)

	resp, err := h.client().Do(req)
	if err != nil {
		return Result{}, classify(ctx, limit, &Failure{head: "http request failed", Err: err})
	}
	defer resp.Body.Close()

	status := resp.StatusCode
	head := fmt.Sprintf("http %d", status)
	raw, truncated, err := readCapped(resp.Body)
	if err != nil {
		f := &Failure{head: head, Status: status, Excerpt: excerpt(raw), Err: fmt.Errorf("reading body: %w", err)}
		return Result{}, classify(ctx, limit, f)
	}
	if status < 200 || status > 299 {
		return Result{}, &Failure{head: head, Status: status, Excerpt: excerpt(raw)}
	}
	if p.Async && status == http.StatusAccepted {
		return Result{Status: status, Accepted: true}, nil
	}
	if truncated {
		// Only a complete body can carry a trustworthy nextRun; a cut one is not parsed.
		return Result{Status: status}, nil
	}
	next, err := decodeResult(raw)
	if err != nil {
		return Result{}, &Failure{head: head, Status: status, Excerpt: excerpt(raw), Err: err}
	}
	return Result{Status: status, NextRun: next}, nil
}

// readCapped reads at most bodyMax bytes and reports whether more were available.
func readCapped(r io.Reader) ([]byte, bool, error) {
	b, err := io.ReadAll(io.LimitReader(r, bodyMax+1))
	if len(b) > bodyMax {
		return b[:bodyMax], true, nil
	}
	return b, false, err
}
