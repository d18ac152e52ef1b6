package console

import (
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Defences for a console reachable by browsers: a Host allowlist against DNS rebinding, and
// a throttle on failed credentials. TLS cookies are in auth.go (sessionCookieFor).

// hostPolicy is the set of Host header values the console answers to: its own address and
// the names an operator configured. A DNS-rebinding page reaches the console under the
// attacker's name (Host: evil.example), so refusing foreign names refuses it.
type hostPolicy struct {
	exact map[string]bool // host:port
	names map[string]bool // host, any port
	// loopback admits the loopback addresses and localhost on any port (no base URL was
	// configured: a console for tests or a local tool).
	loopback bool
}

func newHostPolicy(base *url.URL, hosts []string) (hostPolicy, error) {
	p := hostPolicy{exact: map[string]bool{}, names: map[string]bool{}}
	if base == nil {
		p.loopback = true
	} else {
		p.exact[canonHost(base.Host)] = true
		if h, port := splitHost(base.Host); isLoopbackName(h) {
			for _, alias := range []string{"127.0.0.1", "localhost", "[::1]"} {
				p.exact[canonHost(alias+":"+port)] = true
			}
		}
	}
	for _, h := range hosts {
		h = strings.TrimSpace(h)
		switch {
		case h == "":
		case strings.ContainsAny(h, "/@ "):
			return p, fmt.Errorf("console: host %q: give a name or name:port", h)
		case net.ParseIP(h) != nil:
			p.names[canonName(h)] = true // a bare IPv6 address has colons but no port
		default:
			if _, port := splitHost(h); port != "" {
				p.exact[canonHost(h)] = true
			} else {
				p.names[canonName(h)] = true
			}
		}
	}
	return p, nil
}

func (p hostPolicy) allows(host string) bool {
	if host == "" {
		return false
	}
	if p.exact[canonHost(host)] {
		return true
	}
	name, _ := splitHost(host)
	return p.names[canonName(name)] || (p.loopback && isLoopbackName(name))
}

func splitHost(hostport string) (host, port string) {
	if h, p, err := net.SplitHostPort(hostport); err == nil {
		return h, p
	}
	return strings.TrimSuffix(strings.TrimPrefix(hostport, "["), "]"), ""
}

func canonName(h string) string {
	return strings.TrimSuffix(strings.ToLower(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")), ".")
}

func canonHost(hostport string) string {
	h, port := splitHost(hostport)
	return net.JoinHostPort(canonName(h), port)
}

func isLoopbackName(h string) bool {
	h = canonName(h)
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// checkHost refuses requests whose Host is not one the console answers to, with 421
// Misdirected Request.
func (s *Server) checkHost(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.mode == AuthToken && !s.hosts.allows(r.Host) {
			s.log.Warn("request for a foreign host refused", "host", r.Host, "method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr)
			msg := fmt.Sprintf("this console does not answer to host %q", r.Host)
			if strings.HasPrefix(r.URL.Path, "/api/") {
				s.writeAPIError(w, r, http.StatusMisdirectedRequest, msg)
			} else {
				http.Error(w, msg, http.StatusMisdirectedRequest)
			}
			return
		}
		h.ServeHTTP(w, r)
	})
}

// Failed credentials (a wrong bearer token, a wrong token typed into the login page, an
// invalid login code) are counted per remote address; past DefaultMaxAuthFailures (or
// Options.MaxAuthFailures) in AuthFailureWindow a wrong credential from the address is answered
// 429 until the window ends. A credential is checked before the throttle is consulted, and a
// right one is never throttled: every local process shares 127.0.0.1, so throttling the address
// would let any of them lock the real token out by sending wrong ones. The token (256 bits) and
// login codes (130 bits) cannot be guessed anyway: the throttle keeps a guessing client from
// being a load (its answers cost a map lookup), and says so.
const (
	DefaultMaxAuthFailures = 20
	AuthFailureWindow      = time.Minute
	maxThrottled           = 10000 // addresses remembered; bounded memory
)

type throttle struct {
	now func() time.Time
	max int

	mu sync.Mutex
	m  map[string]*strikes
}

type strikes struct {
	n     int
	since time.Time
}

func newThrottle(now func() time.Time, max int) *throttle {
	return &throttle{now: now, max: max, m: map[string]*strikes{}}
}

// remote is the address a request is counted under (its IP, without the port).
func remote(r *http.Request) string {
	if h, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return h
	}
	return r.RemoteAddr
}

// blocked reports how long addr must wait before it may present a credential again.
func (t *throttle) blocked(addr string) (time.Duration, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.m[addr]
	if !ok {
		return 0, false
	}
	left := s.since.Add(AuthFailureWindow).Sub(t.now())
	if left <= 0 {
		delete(t.m, addr)
		return 0, false
	}
	return left, s.n >= t.max
}

// fail counts a failed credential from addr.
func (t *throttle) fail(addr string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	s, ok := t.m[addr]
	if !ok || !now.Before(s.since.Add(AuthFailureWindow)) {
		if len(t.m) >= maxThrottled {
			for k, v := range t.m {
				if !now.Before(v.since.Add(AuthFailureWindow)) || len(t.m) >= maxThrottled {
					delete(t.m, k)
				}
				if len(t.m) < maxThrottled/2 {
					break
				}
			}
		}
		s = &strikes{since: now}
		t.m[addr] = s
	}
	s.n++
}

// wrongCredential counts a wrong credential from r's address, and reports how long the
// address must wait when it is throttled (then the caller answers tooMany, else 401).
func (s *Server) wrongCredential(r *http.Request) (time.Duration, bool) {
	if wait, throttled := s.limiter.blocked(remote(r)); throttled {
		return wait, true
	}
	s.limiter.fail(remote(r))
	return 0, false
}

// tooMany answers a throttled address: 429 with Retry-After.
func (s *Server) tooMany(w http.ResponseWriter, r *http.Request, wait time.Duration, api bool) {
	secs := int(math.Ceil(wait.Seconds()))
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	msg := fmt.Sprintf("too many failed authentication attempts from this address; retry in %ds", secs)
	s.log.Warn("authentication throttled", "method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr, "retry_after_s", secs)
	if api {
		s.writeAPIError(w, r, http.StatusTooManyRequests, msg)
		return
	}
	s.renderError(w, r, http.StatusTooManyRequests, "Too many failed attempts to log in from this address: wait "+strconv.Itoa(secs)+" s and try again.")
}

// crossOriginDenied answers a request that the cross-origin protection refused: in the
// API's JSON error shape under /api/.
func (s *Server) crossOriginDenied(w http.ResponseWriter, r *http.Request) {
	s.log.Warn("cross-origin request refused", "method", r.Method, "path", r.URL.Path, "origin", r.Header.Get("Origin"), "remote", r.RemoteAddr)
	if strings.HasPrefix(r.URL.Path, "/api/") {
		s.writeAPIError(w, r, http.StatusForbidden, "cross-origin request refused")
		return
	}
	http.Error(w, "cross-origin request refused", http.StatusForbidden)
}
