package emulator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Proxy is an HTTP reverse proxy in front of an emulator endpoint (moto) that gives every
// client going through it — whatever its process — what DynamoDB guarantees and moto lacks:
//
//   - Atomic conditional writes. moto checks a ConditionExpression and applies the write
//     without a lock (see atomic.go), so the proxy sends DynamoDB requests (X-Amz-Target
//     DynamoDB_*) upstream one at a time. A lock inside one process (the SDK middleware this
//     package used to install) cannot order the requests of separate processes: the
//     processor bootstraps that infra/local runs behind the Runtime API and the chaos harness
//     kills are separate processes, and two of them claiming one timer at once must not both
//     win. Every process is given the proxy as its AWS_ENDPOINT_URL instead.
//   - Transactions that cost what DynamoDB's cost. moto's TransactWriteItems deep-copies each
//     table it touches before it starts (to roll back), so a transaction that writes the log
//     table takes time proportional to the log's size (0.4 s per finish at 4,000 log items,
//     measured). Under its lock the proxy applies a transaction of Put, Update and Delete
//     operations as single-item writes that return the old item, and puts the old items back
//     if any condition fails (see proxytx.go): atomic to every other client, O(1) per item.
//
// Other requests (SQS, CloudFormation, …) are forwarded unchanged and concurrently. The proxy
// relies on the emulator not verifying request signatures (moto does not): it rewrites the
// Host header and, for the transactions it splits, the body and target.
type Proxy struct {
	// URL is the proxy's endpoint, e.g. http://127.0.0.1:41234.
	URL string

	upstream *url.URL
	ln       net.Listener
	srv      *http.Server
	client   *http.Client
	fwd      *httputil.ReverseProxy
	log      *slog.Logger
	turn     chan struct{} // one DynamoDB request upstream at a time; a waiting caller may give up
	keys     sync.Map      // table name -> []string key attribute names (to undo a Put)
}

// dynamoTargetPrefix starts the X-Amz-Target of every DynamoDB operation.
const dynamoTargetPrefix = "DynamoDB_20120810."

// maxBody bounds a DynamoDB request body (DynamoDB's own limit is 16 MB for a batch).
const maxBody = 32 << 20

// StartProxy serves a proxy for upstream (the emulator's endpoint) on a free 127.0.0.1 port
// until Close. log receives what the proxy could not do (nil discards it).
func StartProxy(upstream string, log *slog.Logger) (*Proxy, error) {
	u, err := url.Parse(upstream)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("emulator proxy: upstream %q is not a URL", upstream)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("emulator proxy: listen: %w", err)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	p := &Proxy{
		URL: "http://" + ln.Addr().String(), upstream: u, ln: ln, log: log,
		client: &http.Client{Transport: tr, Timeout: 2 * time.Minute}, turn: make(chan struct{}, 1),
	}
	p.fwd = &httputil.ReverseProxy{
		Rewrite:   func(r *httputil.ProxyRequest) { r.SetURL(u) },
		Transport: tr,
		ErrorLog:  slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// Close stops serving; requests in progress are cut off.
func (p *Proxy) Close() error {
	err := p.srv.Close()
	p.client.CloseIdleConnections()
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// ServeHTTP implements http.Handler.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	target := r.Header.Get("X-Amz-Target")
	if !strings.HasPrefix(target, dynamoTargetPrefix) {
		p.fwd.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil || len(body) > maxBody {
		http.Error(w, "emulator proxy: cannot read the request body", http.StatusBadRequest)
		return
	}
	resp, err := p.serialized(r, target, body)
	if errors.Is(err, context.Canceled) {
		return // the caller gave up waiting for its turn
	}
	if err != nil {
		if r.Context().Err() == nil {
			p.log.Warn("emulator proxy: upstream request failed", "target", target, "error", err)
		}
		http.Error(w, "emulator proxy: "+err.Error(), http.StatusBadGateway)
		return
	}
	for k, vs := range resp.header {
		if k == "Content-Length" || k == "Content-Encoding" || k == "Transfer-Encoding" || k == "Connection" {
			continue
		}
		w.Header()[k] = vs
	}
	// The DynamoDB client checks the body against this header; the body may be the proxy's own.
	w.Header().Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE(resp.body)), 10))
	w.WriteHeader(resp.status)
	_, _ = w.Write(resp.body)
}

// serialized sends one DynamoDB request upstream when no other is in flight. The turn ends
// when the emulator's answer has been read, before it is written back: a caller that is slow
// to read (a process stopped by the chaos test) holds up no one.
func (p *Proxy) serialized(r *http.Request, target string, body []byte) (upstreamResponse, error) {
	select {
	case p.turn <- struct{}{}:
	case <-r.Context().Done():
		return upstreamResponse{}, context.Canceled
	}
	defer func() { <-p.turn }()
	if strings.TrimPrefix(target, dynamoTargetPrefix) == "TransactWriteItems" {
		return p.transact(r.Context(), r.Header, body)
	}
	return p.do(r.Context(), r.Header, target, body)
}

// upstreamResponse is a whole answer from the emulator.
type upstreamResponse struct {
	status int
	header http.Header
	body   []byte
}

// do sends one DynamoDB operation upstream with the caller's headers and waits for all of its
// answer (so that the next operation starts after this one is done).
func (p *Proxy) do(ctx context.Context, hdr http.Header, target string, body []byte) (upstreamResponse, error) {
	u := *p.upstream
	u.Path = "/"
	req, err := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return upstreamResponse{}, err
	}
	for k, vs := range hdr {
		switch k {
		case "Content-Length", "Accept-Encoding", "Connection", "Host":
		default:
			req.Header[k] = vs
		}
	}
	req.Header.Set("X-Amz-Target", target)
	if req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return upstreamResponse{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return upstreamResponse{}, err
	}
	return upstreamResponse{status: resp.StatusCode, header: resp.Header, body: b}, nil
}
