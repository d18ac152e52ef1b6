// Package awshttp is the HTTP client every Sundial AWS client uses: the SDK's own client,
// returning only once the whole response body has been read.
//
// Why: aws-sdk-go-v2 issue #1825. Against a fast server (DynamoDB Local, fauxqs; seen here
// about once in 3,000 calls whose response exceeds ~3.8 KB) smithy-go closes the request
// body when the response headers arrive, and net/http may then close the connection while
// the response body is still being read: the call fails with "use of closed network
// connection" after the server applied it. The retryer repeats it, which is harmless for a
// Query but not for a ReceiveMessage: the first batch stays hidden for the queue's
// visibility timeout (90 minutes here). Reading the body before Do returns closes that
// window; AWS's responses are small, so the cost is a copy.
package awshttp

import (
	"bytes"
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
)

// Client is an aws.HTTPClient that reads each response body in full before returning it.
type Client struct {
	// Inner does the requests (default: the SDK's BuildableClient).
	Inner interface {
		Do(*http.Request) (*http.Response, error)
	}
}

// New returns a Client on the SDK's default HTTP client.
func New() *Client { return &Client{Inner: pooled(awshttp.NewBuildableClient())} }

// IdleConnsPerHost is how many idle connections a client keeps to one host. The SDK keeps
// 10: enough for a Lambda sandbox's batch, but a process that runs many functions' calls at
// once (the local platform's endpoint and benchmark, where every function shares one
// process) would open and close a connection for most calls.
const IdleConnsPerHost = 128

// pooled raises the SDK client's idle connections per host to IdleConnsPerHost.
func pooled(c *awshttp.BuildableClient) *awshttp.BuildableClient {
	return c.WithTransportOptions(func(t *http.Transport) {
		t.MaxIdleConns = max(t.MaxIdleConns, 2*IdleConnsPerHost)
		t.MaxIdleConnsPerHost = IdleConnsPerHost
	})
}

// Wrap makes a loaded configuration's clients read whole responses. It wraps the client
// the configuration was loaded with (a custom CA bundle, AWS_CA_BUNDLE, is set up on the
// SDK's own client, which the loader insists on), once.
func Wrap(cfg *aws.Config) {
	if _, done := cfg.HTTPClient.(*Client); done {
		return
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = New()
		return
	}
	inner := cfg.HTTPClient
	if b, ok := inner.(*awshttp.BuildableClient); ok {
		inner = pooled(b)
	}
	cfg.HTTPClient = &Client{Inner: inner}
}

// Do sends the request and returns the response with its body already read into memory.
func (c *Client) Do(req *http.Request) (*http.Response, error) {
	resp, err := c.Inner.Do(req)
	if err != nil {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	cerr := resp.Body.Close()
	if err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err // a transport error: the SDK's retryer decides, as for any other
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	return resp, nil
}
