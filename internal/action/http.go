package action

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
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

// defaultClient follows at most maxRedirects, and only within the action URL's origin.
var defaultClient = &http.Client{CheckRedirect: checkRedirect}

// checkRedirect caps redirects (a timer should not wander) and follows one only to the same
// origin (scheme, host and port) as the request it answers: Go re-sends the spec's headers
// (often credentials such as x-api-key; it drops only Authorization and cookies) and a 307/308's
// body on every hop, so a redirect to another origin — another host, even localhost for
// 127.0.0.1, another port, or http↔https — would hand them to whoever that is. Such a
// redirect fails the execution; the fix is to give the action the URL it redirects to.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	if len(via) > 0 {
		from := via[len(via)-1].URL
		if origin(from) != origin(req.URL) {
			return fmt.Errorf("refusing redirect from %s to another origin %s (the action's headers and payload are sent only to its own origin); set the action's URL to where it redirects", origin(from), origin(req.URL))
		}
	}
	return nil
}

// origin is a URL's scheme://host:port, the port explicit and the scheme and host lower case.
func origin(u *url.URL) string {
	scheme, port := strings.ToLower(u.Scheme), u.Port()
	if port == "" {
		switch scheme {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
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
	body, err := EncodePayload(p)
	if err != nil {
		return Result{}, err
	}
	limit := Budget(ctx)
	fenced, err := Fence(ctx)
	if err != nil {
		return Result{}, Classify(ctx, limit, &Failure{head: "http request not sent: its deadline had passed", Err: err})
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
		return Result{}, Classify(ctx, limit, &Failure{head: "http request failed", Err: err})
	}
	defer resp.Body.Close()

	status := resp.StatusCode
	head := fmt.Sprintf("http %d", status)
	raw, truncated, err := readCapped(resp.Body)
	if err != nil {
		f := &Failure{head: head, Status: status, Excerpt: Excerpt(raw), Err: fmt.Errorf("reading body: %w", err)}
		return Result{}, Classify(ctx, limit, f)
	}
	if status < 200 || status > 299 {
		return Result{}, &Failure{head: head, Status: status, Excerpt: Excerpt(raw)}
	}
	if p.Async && status == http.StatusAccepted {
		return Result{Status: status, Accepted: true}, nil
	}
	if truncated {
		// Only a complete body can carry a trustworthy nextRun; a cut one is not parsed.
		return Result{Status: status, Output: output(raw, true)}, nil
	}
	res, err := Answer(status, raw)
	if err != nil {
		return Result{}, &Failure{head: head, Status: status, Excerpt: Excerpt(raw), Err: err}
	}
	return res, nil
}

// readCapped reads at most bodyMax bytes and reports whether more were available.
func readCapped(r io.Reader) ([]byte, bool, error) {
	b, err := io.ReadAll(io.LimitReader(r, bodyMax+1))
	if len(b) > bodyMax {
		return b[:bodyMax], true, nil
	}
	return b, false, err
}
