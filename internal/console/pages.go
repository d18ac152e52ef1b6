package console

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/sundialhq/sundial/internal/errkind"
)

// page authenticates a page request (a session, or the bearer token), checks the CSRF token
// of a form post, and renders the handler's error as an error page.
func (s *Server) page(h func(w http.ResponseWriter, r *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.mode == AuthIAM {
			s.renderError(w, r, http.StatusNotFound, "The web console is served by `sundial up`; on AWS only the API (/api/) is deployed.")
			return
		}
		p, ok, wait := s.authenticatePage(r)
		if wait > 0 {
			s.tooMany(w, r, wait, false)
			return
		}
		if !ok {
			if safeMethod(r.Method) {
				http.Redirect(w, r, "/login", http.StatusSeeOther)
				return
			}
			s.log.Warn("page request refused", "method", r.Method, "path", r.URL.Path, "status", http.StatusUnauthorized, "remote", r.RemoteAddr)
			s.renderError(w, r, http.StatusUnauthorized, "Log in first: open the login link that sundial up printed.")
			return
		}
		r = r.WithContext(withPrincipal(r.Context(), p))
		if p.gated && s.gate != nil {
			method, path, err := pageRoute(r)
			if err == nil && path != "" {
				err = s.gate.Authorize(p.name, method, path)
			}
			if err != nil {
				status := http.StatusBadRequest
				var denied *Denied
				if errors.As(err, &denied) {
					status = http.StatusForbidden
					err = fmt.Errorf("IAM refused this: %w", err)
				}
				s.log.Warn("page request refused", "method", r.Method, "path", r.URL.Path, "status", status, "reason", err.Error(), "by", p.name)
				s.renderError(w, r, status, err.Error())
				return
			}
		}
		if !safeMethod(r.Method) {
			if err := r.ParseForm(); err != nil {
				s.fail(w, r, formError(err), true)
				return
			}
			if p.session != nil && !csrfOK(p.session, r.PostForm.Get("csrf")) {
				s.log.Warn("form refused: missing or invalid CSRF token", "method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr)
				s.renderError(w, r, http.StatusForbidden, "This form did not come from your console session (missing or invalid CSRF token). Reload the page and try again.")
				return
			}
		}
		if err := h(w, r); err != nil {
			s.fail(w, r, err, true)
		}
	})
}

// authenticatePage returns the request's principal; wait > 0 when it sent a wrong bearer
// token from a throttled address.
func (s *Server) authenticatePage(r *http.Request) (p principal, ok bool, wait time.Duration) {
	if ok, present := s.auth.bearer(r); present {
		if !ok && s.gate != nil {
			if name, isOp := s.gate.TokenOperator(bearerToken(r)); isOp {
				return principal{kind: "operator", name: name, gated: true}, true, 0
			}
		}
		if !ok {
			if wait, over := s.wrongCredential(r); over {
				return principal{}, false, wait
			}
		}
		return principal{kind: "token", name: "api"}, ok, 0
	}
	sess, ok := s.auth.sessionOf(r)
	if !ok {
		return principal{}, false, 0
	}
	return sessionPrincipal(sess), true, 0
}

// loginPage redeems a one-time login link, or shows the form that takes the token.
func (s *Server) loginPage(w http.ResponseWriter, r *http.Request) {
	code := r.URL.Query().Get("code")
	if code == "" {
		if _, ok := s.auth.sessionOf(r); ok {
			http.Redirect(w, r, "/", http.StatusSeeOther)
			return
		}
		s.render(w, r, http.StatusOK, "login", pageData{Title: "Log in"})
		return
	}
	if !s.auth.redeem(code) {
		if wait, over := s.wrongCredential(r); over {
			s.tooMany(w, r, wait, false)
			return
		}
		s.log.Warn("login link refused", "remote", r.RemoteAddr)
		s.render(w, r, http.StatusUnauthorized, "login", pageData{Title: "Log in",
			Data: "This login link is invalid, expired or already used. Paste the token, or ask sundial up for a new link."})
		return
	}
	s.startSession(w, r, "")
}

func (s *Server) loginWithToken(w http.ResponseWriter, r *http.Request) {
	if s.mode == AuthIAM {
		s.renderError(w, r, http.StatusNotFound, "No login on AWS: the API uses IAM.")
		return
	}
	if err := r.ParseForm(); err != nil {
		s.fail(w, r, formError(err), true)
		return
	}
	operator := ""
	if s.gate != nil && !s.auth.tokenOK(r.PostForm.Get("token")) {
		operator, _ = s.gate.TokenOperator(r.PostForm.Get("token"))
	}
	if operator == "" && !s.auth.tokenOK(r.PostForm.Get("token")) {
		if wait, over := s.wrongCredential(r); over {
			s.tooMany(w, r, wait, false)
			return
		}
		s.log.Warn("login with a wrong token", "remote", r.RemoteAddr)
		s.render(w, r, http.StatusUnauthorized, "login", pageData{Title: "Log in", Data: "Wrong token."})
		return
	}
	s.startSession(w, r, operator)
}

// startSession starts a browser session, for operator ("": the console's administrator).
func (s *Server) startSession(w http.ResponseWriter, r *http.Request, operator string) {
	id, _ := s.auth.newSession(operator)
	http.SetCookie(w, sessionCookieFor(r, id, int(SessionTTL.Seconds())))
	s.log.Info("console session started", "remote", r.RemoteAddr, "operator", operator)
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

func (s *Server) logout(w http.ResponseWriter, r *http.Request) error {
	s.auth.endSession(r)
	http.SetCookie(w, sessionCookieFor(r, "", -1))
	http.Redirect(w, r, "/login", http.StatusSeeOther)
	return nil
}

// flashAndRedirect shows msg on the next page of the session (after the redirect).
func (s *Server) flashAndRedirect(w http.ResponseWriter, r *http.Request, to, msg string) {
	if p, ok := principalOf(r.Context()); ok && p.session != nil {
		s.auth.setFlash(p.session, msg)
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

func timerURL(key string) string { return "/timers/" + url.PathEscape(key) }

// formError keeps a too-large body a 413 and makes anything else a usage error.
func formError(err error) error {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return err
	}
	return fmt.Errorf("%w: form: %v", errkind.Invalid, err)
}
