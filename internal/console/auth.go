package console

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/sundialhq/sundial/internal/ops"
)

// Authentication. Locally (AuthToken) every request carries the console's token as
// "Authorization: Bearer TOKEN", or a session cookie that a one-time login link (or the
// token, typed into the login page) set for a browser. Behind API Gateway (AuthIAM) the
// gateway has verified the caller's SigV4 signature; the adapter passes the caller on.

// AuthMode selects how requests are authenticated.
type AuthMode int

// Authentication modes.
const (
	AuthToken AuthMode = iota // local console: bearer token, login links, session cookies
	AuthIAM                   // API Gateway with AWS_IAM authorization: API only
)

const (
	sessionCookie = "sundial_session"
	// tlsSessionCookie is the cookie's name over TLS: the __Host- prefix makes browsers
	// accept it only Secure, for this host, path /, so no plain-HTTP page or sibling domain
	// can set or shadow it.
	tlsSessionCookie = "__Host-sundial_session"
	// SessionTTL bounds a browser session; LoginLinkTTL a login link, which works once.
	SessionTTL   = 12 * time.Hour
	LoginLinkTTL = time.Hour
	maxSessions  = 1000
)

// NewToken returns a random token (256 bits, base32).
func NewToken() string { return rand.Text() + rand.Text() }

type session struct {
	csrf    string
	expires time.Time
	flash   string // shown once by the next page (after a redirect); guarded by auth.mu
	// operator is who the session acts for when an operator's token started it (Gate); ""
	// for the console's own token or a login link.
	operator string
}

// principal is who a request acts for.
type principal struct {
	kind    string // "token", "session" or "iam"
	name    string // the IAM caller, for the log
	session *session
	gated   bool // an operator's: the Gate decides each request by their policies
}

type principalKey struct{}

// withPrincipal is ctx for the caller p, who is also the actor of the operations
// (internal/ops) the request asks for.
func withPrincipal(ctx context.Context, p principal) context.Context {
	return ops.WithActor(context.WithValue(ctx, principalKey{}, p), p.actor())
}

// actor is the principal as the operations layer names it: an IAM principal (behind API
// Gateway, or an operator's signed request locally), else a console operator (the token,
// a session, an operator's console token).
func (p principal) actor() ops.Actor {
	if p.kind == "iam" {
		return ops.Actor{Kind: ops.IAM, Name: p.name}
	}
	return ops.Actor{Kind: ops.Operator, Name: p.name}
}

func principalOf(ctx context.Context) (principal, bool) {
	p, ok := ctx.Value(principalKey{}).(principal)
	return p, ok
}

// auth holds the token, the unused login codes and the sessions (in memory: a restarted
// console asks browsers to log in again).
type auth struct {
	token []byte
	now   func() time.Time

	mu       sync.Mutex
	codes    map[[32]byte]time.Time // sha256 of a login code → expiry
	sessions map[[32]byte]*session  // sha256 of a session id → session
}

func newAuth(token string, now func() time.Time) *auth {
	return &auth{token: []byte(token), now: now, codes: map[[32]byte]time.Time{}, sessions: map[[32]byte]*session{}}
}

func (a *auth) tokenOK(given string) bool {
	return len(a.token) > 0 && subtle.ConstantTimeCompare([]byte(given), a.token) == 1
}

// bearer checks the Authorization header; present reports whether one was sent at all.
func (a *auth) bearer(r *http.Request) (ok, present bool) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return false, false
	}
	scheme, tok, found := strings.Cut(h, " ")
	if !found || !strings.EqualFold(scheme, "Bearer") {
		return false, true
	}
	return a.tokenOK(strings.TrimSpace(tok)), true
}

// bearerToken is the Authorization header's bearer token ("" for none).
func bearerToken(r *http.Request) string {
	scheme, tok, found := strings.Cut(r.Header.Get("Authorization"), " ")
	if !found || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(tok)
}

// sessionPrincipal is who a browser session acts for.
func sessionPrincipal(sess *session) principal {
	if sess.operator != "" {
		return principal{kind: "session", name: sess.operator, session: sess, gated: true}
	}
	return principal{kind: "session", name: "console", session: sess}
}

// newLoginCode mints a login code that works once, within LoginLinkTTL.
func (a *auth) newLoginCode() string {
	code := rand.Text()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.sweep()
	a.codes[sha256.Sum256([]byte(code))] = a.now().Add(LoginLinkTTL)
	return code
}

// redeem consumes a login code.
func (a *auth) redeem(code string) bool {
	h := sha256.Sum256([]byte(code))
	a.mu.Lock()
	defer a.mu.Unlock()
	exp, ok := a.codes[h]
	delete(a.codes, h)
	return ok && a.now().Before(exp)
}

// newSession starts a browser session and returns its cookie value.
func (a *auth) newSession(operator string) (string, *session) {
	id := rand.Text() + rand.Text()
	s := &session{csrf: rand.Text(), expires: a.now().Add(SessionTTL), operator: operator}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.sweep()
	if len(a.sessions) >= maxSessions { // bounded memory: the oldest sessions go first
		var oldest [32]byte
		var at time.Time
		for k, v := range a.sessions {
			if at.IsZero() || v.expires.Before(at) {
				oldest, at = k, v.expires
			}
		}
		delete(a.sessions, oldest)
	}
	a.sessions[sha256.Sum256([]byte(id))] = s
	return id, s
}

func (a *auth) sessionOf(r *http.Request) (*session, bool) {
	c, err := r.Cookie(sessionCookieName(r))
	if err != nil || c.Value == "" {
		return nil, false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.sessions[sha256.Sum256([]byte(c.Value))]
	if !ok || !a.now().Before(s.expires) {
		return nil, false
	}
	return s, true
}

func (a *auth) endSession(r *http.Request) {
	if c, err := r.Cookie(sessionCookieName(r)); err == nil {
		a.mu.Lock()
		delete(a.sessions, sha256.Sum256([]byte(c.Value)))
		a.mu.Unlock()
	}
}

// sweep drops expired codes and sessions; the caller holds mu.
func (a *auth) sweep() {
	now := a.now()
	for k, exp := range a.codes {
		if !now.Before(exp) {
			delete(a.codes, k)
		}
	}
	for k, s := range a.sessions {
		if !now.Before(s.expires) {
			delete(a.sessions, k)
		}
	}
}

// setFlash leaves a message for the session's next page.
func (a *auth) setFlash(s *session, msg string) {
	a.mu.Lock()
	s.flash = msg
	a.mu.Unlock()
}

func (a *auth) takeFlash(s *session) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	msg := s.flash
	s.flash = ""
	return msg
}

// csrfOK checks a form's or header's CSRF token against the session's.
func csrfOK(s *session, given string) bool {
	return s != nil && given != "" && subtle.ConstantTimeCompare([]byte(given), []byte(s.csrf)) == 1
}

func sessionCookieName(r *http.Request) string {
	if r.TLS != nil {
		return tlsSessionCookie
	}
	return sessionCookie
}

func sessionCookieFor(r *http.Request, value string, maxAge int) *http.Cookie {
	return &http.Cookie{
		Name: sessionCookieName(r), Value: value, Path: "/", MaxAge: maxAge,
		HttpOnly: true, Secure: r.TLS != nil, SameSite: http.SameSiteLaxMode,
	}
}
