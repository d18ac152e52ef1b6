// Package actionspec is what a timer calls and what it sends: the action part of a timer
// definition (an HTTP endpoint or a Lambda function) and the JSON payload the action receives.
// It is a leaf, so the core (internal/timer) can hold an action without the transports that
// call it (internal/action, with net/http and the Lambda SDK).
package actionspec

import (
	"errors"
	"fmt"
	"mime"
	"net/textproto"
	"net/url"
	"strings"
)

// Spec is the action part of a timer definition. Exactly one of HTTP or Lambda is set.
// The tags matter: the same struct is read from the YAML manifest, the JSON API and DynamoDB.
type Spec struct {
	HTTP   *HTTPSpec   `json:"http,omitempty" yaml:"http,omitempty" dynamodbav:"http,omitempty"`
	Lambda *LambdaSpec `json:"lambda,omitempty" yaml:"lambda,omitempty" dynamodbav:"lambda,omitempty"`
}

// HTTPSpec is an action reached by POSTing the Payload to URL.
type HTTPSpec struct {
	URL     string            `json:"url" yaml:"url" dynamodbav:"url"`
	Headers map[string]string `json:"headers,omitempty" yaml:"headers,omitempty" dynamodbav:"headers,omitempty"`
}

// LambdaSpec is an action run by a synchronous Lambda invocation.
type LambdaSpec struct {
	Function string `json:"function" yaml:"function" dynamodbav:"function"` // name or ARN
}

// errExactlyOne is shared so every caller (manifest sync, API, processor) reports the same text.
var errExactlyOne = errors.New(`action: exactly one of "http" or "lambda" is required`)

// managedHeaders are set by net/http itself (framing, routing); a spec value would be silently
// ignored or break the request, so Validate rejects them instead.
var managedHeaders = map[string]bool{
	"Host": true, "Content-Length": true, "Transfer-Encoding": true, "Connection": true,
}

// Validate reports the first problem that would make the action impossible to call.
// It is cheap and pure, so it runs both when a definition is saved and before every call.
func (s Spec) Validate() error {
	switch {
	case s.HTTP == nil && s.Lambda == nil:
		return errExactlyOne
	case s.HTTP != nil && s.Lambda != nil:
		return fmt.Errorf("%w, not both", errExactlyOne)
	case s.HTTP != nil:
		return s.HTTP.validate()
	default:
		return s.Lambda.validate()
	}
}

func (h *HTTPSpec) validate() error {
	if strings.TrimSpace(h.URL) == "" {
		return errors.New("action: http.url is required")
	}
	u, err := url.Parse(h.URL)
	if err != nil {
		return fmt.Errorf("action: http.url is not a valid URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("action: http.url %q must be an absolute http:// or https:// URL", u.Redacted())
	}
	if u.Hostname() == "" {
		return fmt.Errorf("action: http.url %q has no host", u.Redacted())
	}
	for name, value := range h.Headers {
		if err := validateHeader(name, value); err != nil {
			return err
		}
	}
	return nil
}

// validateHeader rejects what net/http would refuse at call time, so the mistake surfaces when
// the timer is defined rather than as a failed run. Values are never echoed: they hold secrets.
func validateHeader(name, value string) error {
	if !isToken(name) {
		return fmt.Errorf("action: http.headers: %q is not a valid header name", name)
	}
	canon := textproto.CanonicalMIMEHeaderKey(name) // what http.CanonicalHeaderKey returns
	if managedHeaders[canon] {
		return fmt.Errorf("action: http.headers: %q cannot be set (managed by the HTTP client)", canon)
	}
	for i := 0; i < len(value); i++ {
		if c := value[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			return fmt.Errorf("action: http.headers: value of %q contains a control character", canon)
		}
	}
	// The body is always JSON; allow restating that (e.g. with a charset) but not contradicting it.
	if canon == "Content-Type" {
		if mt, _, err := mime.ParseMediaType(value); err != nil || mt != "application/json" {
			return errors.New(`action: http.headers: "Content-Type" must be application/json (the payload is JSON)`)
		}
	}
	return nil
}

// isToken reports whether s is an RFC 9110 token (the grammar of a header name).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
		if !ok {
			return false
		}
	}
	return true
}

func (l *LambdaSpec) validate() error {
	f := l.Function
	if strings.TrimSpace(f) == "" {
		return errors.New("action: lambda.function is required (a function name or ARN)")
	}
	for _, r := range f {
		if r <= ' ' || r == 0x7f {
			return fmt.Errorf("action: lambda.function %q must not contain spaces or control characters", f)
		}
	}
	return nil
}

// String is a short, log-safe description: URL passwords are redacted and headers never shown.
func (s Spec) String() string {
	switch {
	case s.HTTP != nil && s.Lambda != nil:
		return "invalid action (both http and lambda)"
	case s.HTTP != nil:
		target := s.HTTP.URL
		if u, err := url.Parse(target); err == nil {
			target = u.Redacted()
		}
		return "http POST " + target
	case s.Lambda != nil:
		return "lambda " + s.Lambda.Function
	default:
		return "no action"
	}
}
