// Package gateway is the local platform's AWS endpoint: one URL that every local client
// (the functions, the CLI, tests) is pointed at, as LocalStack's edge port is. It sends each
// request to the engine that serves its service — DynamoDB and DynamoDB Streams to DynamoDB
// Local (its ARNs translated to the stack's region, streams.go), SQS to the SQS engine,
// Lambda's Invoke to the emulated Invoke API — after checking it against the caller's IAM
// role (infra/iam) as AWS would, and answers CloudFormation's DescribeStacks for the stacks
// the platform provisioned, so that tools find a stack's outputs the way they do on AWS.
//
// The caller is known by the access key ID of its request's signature (functions are given
// their role's key and secret, as Lambda gives a function its role's credentials; the
// platform's administrator has its own), and the signature is verified (auth.go says what
// is checked, in which order).
package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sundialhq/sundial/infra/emulator"
	"github.com/sundialhq/sundial/infra/iam"
)

// Gateway routes and authorizes AWS requests.
type Gateway struct {
	// DynamoDB and SQS are the engines' endpoints.
	DynamoDB, SQS string
	// EngineSecret is the engines' per-run secret: every request forwarded to them carries
	// it in emulator.SecretHeader (they refuse requests without it); a caller's own value of
	// that header is never forwarded.
	EngineSecret string
	// Auth knows the callers' keys and decides requests; nil allows everything, unsigned.
	Auth *iam.Authorizer
	// MaxInFlight bounds the bytes of request bodies read at once (DefaultMaxInFlight).
	MaxInFlight int64
	Log         *slog.Logger
	// Throttle, when set, enforces provisioned tables' units (throttle.go).
	Throttle *Throttle
	// Region and Account are the stack's: DynamoDB Local's own ARNs are translated to them
	// and back (see streams.go). Empty: those of Auth's environment; no translation without.
	Region, Account string
	// Replica, when set, answers DynamoDB reads as a lagging replica and index may (replica.go).
	Replica *Replica
	// Partitions, when it names more than one engine, are the DynamoDB engines the items are
	// spread over by a hash of their partition key, as DynamoDB's partitions (partition.go);
	// DynamoDB is then ignored. Colocate lists partition-key prefixes whose keys all live on
	// the first engine, so that transactions among such items run on one engine.
	Partitions []string
	Colocate   []string
	parts      *partitions

	mu     sync.RWMutex
	lambda string
	stacks map[string]StackInfo

	eventSink  EventSink   // events.go; guarded by mu
	eventFault EventsFault // likewise
	snsSink    SNSSink     // likewise
	stall      Stall       // stall.go; likewise

	arns   *arnTranslator
	traces sqsTraces // trace.go
	hosts  map[string]bool
	budget *budget
	polls  shortPolls // shortpoll.go
	client *http.Client
	srv    *http.Server
	ln     net.Listener
	url    string
}

// StackInfo is what DescribeStacks answers for a local stack.
type StackInfo struct {
	Name       string
	Region     string
	Created    time.Time
	Parameters map[string]string
	Outputs    map[string]string
}

// Start serves on addr (e.g. 127.0.0.1:0) and returns the gateway's URL.
func (g *Gateway) Start(addr string) (string, error) {
	if g.Log == nil {
		g.Log = slog.New(slog.DiscardHandler)
	}
	if g.Region == "" && g.Auth != nil {
		g.Region = g.Auth.Env.Region
	}
	if g.Account == "" && g.Auth != nil {
		g.Account = g.Auth.Env.Account
	}
	g.arns = newARNTranslator(g.Region, g.Account)
	if len(g.Partitions) > 1 {
		g.parts = newPartitions(g.Partitions, g.Colocate)
		g.DynamoDB = g.Partitions[0]
	}
	if g.Replica != nil {
		g.Replica.secret = g.EngineSecret
		if p := g.parts; p != nil {
			g.Replica.owner = func(pk json.RawMessage) string { return p.engines[p.owner(pk)] }
		}
	}
	g.client = &http.Client{Transport: &http.Transport{
		Proxy:               nil,
		MaxIdleConns:        256,
		MaxIdleConnsPerHost: 128,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("gateway: listen on %s: %w", addr, err)
	}
	g.ln = ln
	g.url = "http://" + ln.Addr().String()
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && tcp.IP.IsUnspecified() {
		g.url = "http://127.0.0.1:" + strconv.Itoa(tcp.Port) // every interface, this machine's clients use loopback
	}
	g.hosts = ownHosts(ln.Addr())
	if g.MaxInFlight <= 0 {
		g.MaxInFlight = DefaultMaxInFlight
	}
	g.budget = newBudget(g.MaxInFlight)
	g.srv = &http.Server{Handler: g, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = g.srv.Serve(ln) }()
	return g.url, nil
}

// URL is the gateway's base URL.
func (g *Gateway) URL() string { return g.url }

// SetLambda routes Lambda's Invoke API to endpoint (the emulated Invoke API).
func (g *Gateway) SetLambda(endpoint string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.lambda = endpoint
}

// AddStack makes DescribeStacks answer for the stack.
func (g *Gateway) AddStack(s StackInfo) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stacks == nil {
		g.stacks = map[string]StackInfo{}
	}
	g.stacks[s.Name] = s
}

// Close stops serving.
func (g *Gateway) Close() error {
	if g.srv == nil {
		return nil
	}
	// Requests still in flight get a moment (a long poll ends within a second); then the
	// connections are closed: the engines behind are being stopped too.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := g.srv.Shutdown(ctx); err != nil {
		_ = g.srv.Close()
	}
	g.client.CloseIdleConnections()
	return nil
}

// IAMReportPath answers GET with the IAM check's report (iam.Report as JSON): what the
// functions were refused and which grants no call used. Tests of a `sundial up` process
// read it, signed with the administrator's key (service name ReportService); it is not an
// AWS API.
const IAMReportPath = "/_sundial/iam"

// ServeHTTP routes one request: it checks who sends it (auth.go) before reading its body,
// classifies it, authorizes it and forwards it.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	svc := service(r)
	if g.hosts != nil && !g.hosts[strings.ToLower(r.Host)] {
		refuse(w, svc, http.StatusMisdirectedRequest, "MisdirectedRequest",
			fmt.Sprintf("the local endpoint answers only to its own addresses (%s), not to Host %q", g.url, r.Host))
		return
	}
	if fromBrowser(r) {
		refuse(w, svc, http.StatusForbidden, "AccessDeniedException",
			"the local endpoint does not serve web pages' requests (Origin or Sec-Fetch-Site sent): use an AWS SDK or the CLI")
		return
	}
	if len(r.Header.Values("X-Amz-Target")) > 1 || len(r.Header.Values("Content-Type")) > 1 {
		// The check reads the first; an engine may read the last.
		refuse(w, svc, http.StatusBadRequest, "ValidationException", "the request has more than one X-Amz-Target or Content-Type header")
		return
	}
	report := r.URL.Path == IAMReportPath && r.Method == http.MethodGet
	var auth authHeader
	var cred iam.Credential
	if g.Auth != nil {
		var err error
		if auth, err = parseAuthorization(r); err != nil {
			code := "IncompleteSignatureException"
			if errors.Is(err, errNoAuth) {
				code = "MissingAuthenticationTokenException"
			}
			authError(w, svc, code, err.Error())
			return
		}
		var known bool
		if cred, known = g.Auth.Credential(auth.keyID); !known {
			authError(w, svc, "UnrecognizedClientException", "The security token included in the request is invalid.")
			return
		}
		if code, msg := g.scope(r, auth); code != "" {
			authError(w, svc, code, msg)
			return
		}
	}
	body, release, ok := g.readBody(w, r, svc, report)
	if !ok {
		return
	}
	defer release()
	if g.Auth != nil {
		if err := verify(r.Context(), r, auth, cred.Secret, body, svc, time.Now()); err != nil {
			authError(w, svc, "InvalidSignatureException", err.Error())
			return
		}
	}
	if report {
		if g.Auth != nil && !cred.Admin {
			writeJSONError(w, http.StatusForbidden, "AccessDeniedException", "only the platform's administrator may read the IAM report")
			return
		}
		var rep iam.Report
		if g.Auth != nil {
			rep = g.Auth.Report()
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(rep)
		return
	}
	req, upstream, err := g.classify(r, body)
	if err != nil {
		writeJSONError(w, http.StatusBadRequest, "UnknownOperationException", err.Error())
		return
	}
	var principal string
	if g.Auth != nil {
		role, refused, err := g.Auth.Authorize(auth.keyID, req)
		if err != nil {
			writeJSONError(w, http.StatusBadRequest, "ValidationException", err.Error())
			return
		}
		if refused != nil {
			g.Log.Warn("gateway: AccessDenied", "role", role, "action", refused.Action, "resource", refused.Resource)
			denied(w, req.Service, role, *refused)
			return
		}
		principal = role
	}
	if !g.hold(r.Context(), principal, req) {
		return
	}
	if req.Service == iam.CloudFormation {
		g.cloudFormation(w, req)
		return
	}
	if req.Service == iam.Events {
		g.serveEvents(w, req)
		return
	}
	if req.Service == iam.SNS {
		g.serveSNS(w, req) // events.go
		return
	}
	if req.Service == iam.DynamoDB {
		body = g.arns.request(r.Header.Get("X-Amz-Target"), body)
		engine := func(w http.ResponseWriter, b []byte) { g.forward(w, r, req.Service, upstream, b) }
		if g.parts != nil {
			engine = func(w http.ResponseWriter, b []byte) { g.routeDynamoDB(w, r, req.Operation, b) }
		}
		if g.Replica != nil { // innermost: it stands for the engine
			forward := engine
			engine = func(w http.ResponseWriter, b []byte) {
				g.Replica.serve(w, r, req.Operation, b, upstream, func(w http.ResponseWriter) { forward(w, b) })
			}
		}
		if g.Throttle != nil {
			g.Throttle.Serve(w, req.Operation, body, engine)
		} else {
			engine(w, body)
		}
		return
	}
	if req.Service == iam.SQS {
		g.serveSQS(w, r, req.Operation, upstream, body) // trace.go
		return
	}
	g.forward(w, r, req.Service, upstream, body)
}

// tooLarge answers a body over the service's limit as the service does.
func tooLarge(w http.ResponseWriter, svc iam.Service, n, limit int64) {
	msg := fmt.Sprintf("Request size %d exceeded %d bytes", n, limit)
	switch svc {
	case iam.Lambda:
		refuse(w, svc, http.StatusRequestEntityTooLarge, "RequestTooLargeException",
			fmt.Sprintf("Request must be smaller than %d bytes for the Invoke operation", limit))
	case iam.SQS:
		refuse(w, svc, http.StatusBadRequest, "InvalidParameterValue", msg)
	case iam.CloudFormation:
		refuse(w, svc, http.StatusBadRequest, "ValidationError", msg)
	case iam.DynamoDB:
		refuse(w, svc, http.StatusBadRequest, "ValidationException", msg)
	default:
		refuse(w, svc, http.StatusRequestEntityTooLarge, "RequestEntityTooLarge",
			"the local endpoint serves DynamoDB, SQS, Lambda Invoke and CloudFormation DescribeStacks; this request is none of them and has a body")
	}
}

// classify names the request's service and operation and the engine that serves it.
func (g *Gateway) classify(r *http.Request, body []byte) (iam.Request, string, error) {
	target := r.Header.Get("X-Amz-Target")
	switch {
	case strings.HasPrefix(target, "DynamoDB_"), strings.HasPrefix(target, "DynamoDBStreams_"):
		_, op, _ := strings.Cut(target, ".")
		return iam.Request{Service: iam.DynamoDB, Operation: op, Body: body}, g.DynamoDB, nil
	case strings.HasPrefix(target, "AWSEvents."):
		return iam.Request{Service: iam.Events, Operation: strings.TrimPrefix(target, "AWSEvents."), Body: body}, "", nil
	case strings.HasPrefix(target, "AmazonSQS."):
		return iam.Request{Service: iam.SQS, Operation: strings.TrimPrefix(target, "AmazonSQS."), Body: body}, g.SQS, nil
	case strings.HasPrefix(r.URL.Path, "/2015-03-31/functions/"):
		g.mu.RLock()
		lambda := g.lambda
		g.mu.RUnlock()
		if lambda == "" {
			return iam.Request{}, "", errors.New("no Lambda functions are served by this local platform")
		}
		op := "Invoke"
		if !strings.HasSuffix(r.URL.Path, "/invocations") {
			op = "GetFunction"
		}
		return iam.Request{Service: iam.Lambda, Operation: op, Path: r.URL.EscapedPath(), Query: r.URL.RawQuery}, lambda, nil
	case target == "" && strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded"):
		form, err := url.ParseQuery(string(body))
		if err == nil && form.Get("Version") == "2010-05-15" {
			return iam.Request{Service: iam.CloudFormation, Operation: form.Get("Action"), Form: form}, "", nil
		}
		if err == nil && form.Get("Version") == "2010-03-31" {
			return iam.Request{Service: iam.SNS, Operation: form.Get("Action"), Form: form}, "", nil
		}
	}
	return iam.Request{}, "", fmt.Errorf("the local platform serves DynamoDB, SQS, Lambda Invoke and CloudFormation DescribeStacks; this request is none of them (X-Amz-Target %q, path %s)", target, r.URL.Path)
}

var hopHeaders = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// forward sends the request to the engine and copies its whole answer back.
func (g *Gateway) forward(w http.ResponseWriter, r *http.Request, svc iam.Service, upstream string, body []byte) {
	u, err := url.Parse(upstream)
	if err != nil {
		writeJSONError(w, http.StatusInternalServerError, "InternalFailure", err.Error())
		return
	}
	// The path and query as sent (a resolved URL would drop dot segments: the request
	// authorized must be the one forwarded).
	out := &url.URL{Scheme: u.Scheme, Host: u.Host, Path: r.URL.Path, RawPath: r.URL.RawPath, RawQuery: r.URL.RawQuery}
	req, err := http.NewRequestWithContext(r.Context(), r.Method, out.String(), bytes.NewReader(body))
	if err != nil {
		writeJSONError(w, http.StatusInternalServerError, "InternalFailure", err.Error())
		return
	}
	req.Header = r.Header.Clone()
	for _, h := range hopHeaders {
		req.Header.Del(h)
	}
	req.Header.Del(emulator.SecretHeader)
	if svc == iam.DynamoDB || svc == iam.SQS {
		req.Header.Set(emulator.SecretHeader, g.EngineSecret)
	}
	req.ContentLength = int64(len(body))
	resp, err := g.client.Do(req)
	if err != nil {
		g.Log.Error("gateway: engine unreachable", "engine", upstream, "error", err)
		writeJSONError(w, http.StatusServiceUnavailable, "ServiceUnavailable", "the local engine did not answer: "+err.Error())
		return
	}
	defer resp.Body.Close()
	rb, err := io.ReadAll(resp.Body)
	if err != nil {
		writeJSONError(w, http.StatusBadGateway, "InternalFailure", "the local engine's answer was cut: "+err.Error())
		return
	}
	for k, v := range resp.Header {
		w.Header()[k] = v
	}
	for _, h := range hopHeaders {
		w.Header().Del(h)
	}
	rewritten := false
	if svc == iam.DynamoDB {
		rb, rewritten = g.arns.response(rb)
	}
	if svc == iam.DynamoDB && (rewritten || w.Header().Get("X-Amz-Crc32") == "") {
		// DynamoDB sends the body's CRC32 on every answer, DynamoDB Local not on errors, and
		// the Go SDK then logs a checksum warning for every failed condition
		// (aws-sdk-go-v2 #3545).
		w.Header().Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE(rb)), 10))
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(rb)))
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(rb)
}

// denied answers as AWS answers a call the identity's policies do not allow.
func denied(w http.ResponseWriter, svc iam.Service, role string, c iam.Call) {
	msg := fmt.Sprintf("User: arn:aws:sts::000000000000:assumed-role/%s/local is not authorized to perform: %s on resource: %s because no identity-based policy allows the %s action",
		role, c.Action, c.Resource, c.Action)
	switch svc {
	case iam.DynamoDB:
		writeJSONError(w, http.StatusBadRequest, "com.amazonaws.dynamodb.v20120810#AccessDeniedException", msg)
	case iam.SQS:
		w.Header().Set("x-amzn-query-error", "AccessDenied;Sender")
		writeJSONError(w, http.StatusForbidden, "com.amazonaws.sqs#AccessDenied", msg)
	case iam.Lambda:
		w.Header().Set("X-Amzn-ErrorType", "AccessDeniedException")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		_ = json.NewEncoder(w).Encode(map[string]string{"Type": "User", "Message": msg})
	case iam.Events:
		writeJSON11Error(w, http.StatusBadRequest, "AccessDeniedException", msg) // events.go
	default:
		writeXMLError(w, http.StatusForbidden, "AccessDenied", msg)
	}
}

func writeJSONError(w http.ResponseWriter, status int, typ, msg string) {
	body, _ := json.Marshal(map[string]string{"__type": typ, "message": msg})
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.Header().Set("X-Amzn-ErrorType", typ)
	w.Header().Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE(body)), 10)) // as DynamoDB's answers
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
