package console

import (
	"bytes"
	"context"
	"encoding/base64"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
)

// LambdaHandler adapts API Gateway HTTP API events (payload format 2.0) to h, so the API
// function serves the very handler `sundial up` serves. The caller the gateway's AWS_IAM
// authorizer verified is passed on; a request without one is refused by the server.
func LambdaHandler(h http.Handler) func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	return func(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		body := []byte(ev.Body)
		if ev.IsBase64Encoded {
			var err error
			if body, err = base64.StdEncoding.DecodeString(ev.Body); err != nil {
				return textResponse(http.StatusBadRequest, "request body is not valid base64"), nil
			}
		}
		target := ev.RawPath
		if ev.RawQueryString != "" {
			target += "?" + ev.RawQueryString
		}
		if az := ev.RequestContext.Authorizer; az != nil && az.IAM != nil {
			who := az.IAM.UserARN
			if who == "" {
				who = az.IAM.CallerID
			}
			ctx = withPrincipal(ctx, principal{kind: "iam", name: who})
		}
		req, err := http.NewRequestWithContext(ctx, ev.RequestContext.HTTP.Method, target, bytes.NewReader(body))
		if err != nil {
			return textResponse(http.StatusBadRequest, "bad request: "+err.Error()), nil
		}
		for k, v := range ev.Headers {
			req.Header.Set(k, v) // HTTP APIs join repeated headers with commas
		}
		if len(ev.Cookies) > 0 {
			req.Header.Set("Cookie", strings.Join(ev.Cookies, "; "))
		}
		req.Host = ev.RequestContext.DomainName
		req.RemoteAddr = ev.RequestContext.HTTP.SourceIP
		req.ContentLength = int64(len(body))
		w := &bufferedResponse{header: http.Header{}}
		h.ServeHTTP(w, req)
		return w.event(), nil
	}
}

// bufferedResponse collects what the handler writes.
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (w *bufferedResponse) Header() http.Header { return w.header }

func (w *bufferedResponse) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.body.Write(p)
}

func (w *bufferedResponse) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *bufferedResponse) event() events.APIGatewayV2HTTPResponse {
	out := events.APIGatewayV2HTTPResponse{StatusCode: w.status, Headers: map[string]string{}}
	if out.StatusCode == 0 {
		out.StatusCode = http.StatusOK
	}
	for k, vs := range w.header {
		if http.CanonicalHeaderKey(k) == "Set-Cookie" {
			out.Cookies = append(out.Cookies, vs...)
			continue
		}
		out.Headers[k] = strings.Join(vs, ", ")
	}
	if utf8.Valid(w.body.Bytes()) {
		out.Body = w.body.String()
	} else {
		out.Body, out.IsBase64Encoded = base64.StdEncoding.EncodeToString(w.body.Bytes()), true
	}
	return out
}

func textResponse(status int, msg string) events.APIGatewayV2HTTPResponse {
	return events.APIGatewayV2HTTPResponse{StatusCode: status, Headers: map[string]string{"Content-Type": "text/plain; charset=utf-8"}, Body: msg}
}
