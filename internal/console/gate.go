package console

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/timer"
)

// Gate decides requests as API Gateway's AWS_IAM authorization does, for the local console
// of `sundial up --operators FILE` (infra/operators implements it): SigV4-signed API
// requests are verified, and an operator's requests (signed, or with their console token,
// or from a session their token started) are allowed only what their IAM policies allow
// (execute-api:Invoke on the route's ARN). The console's own token and login links, and the
// platform administrator's key, keep full access. Without a Gate every caller with the
// token is the administrator.
type Gate interface {
	// VerifySigned verifies a SigV4-signed request: the caller's name and whether it is the
	// administrator; an error for a key no one has or a wrong signature.
	VerifySigned(ctx context.Context, r *http.Request, body []byte) (name string, admin bool, err error)
	// TokenOperator is the operator whose console token tok is.
	TokenOperator(tok string) (name string, ok bool)
	// Authorize decides an operator's request to the API route method path; a *Denied
	// when their policies do not allow it.
	Authorize(name, method, path string) error
}

// Denied is a request the caller's IAM policies do not allow: it names the action and the
// resource refused, in AWS's words.
type Denied struct{ Who, Action, Resource string }

func (d *Denied) Error() string {
	return fmt.Sprintf("User: %s is not authorized to perform: %s on resource: %s", d.Who, d.Action, d.Resource)
}

// signed: the request carries a SigV4 Authorization header.
func signed(r *http.Request) bool {
	return strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 ")
}

// authenticateSigned verifies a SigV4-signed API request with the gate; the body is read
// (within the body limit) and given back to the handler.
func (s *Server) authenticateSigned(r *http.Request) (principal, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return principal{}, err
		}
		return principal{}, fmt.Errorf("request body could not be read: %w", err)
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	name, admin, err := s.gate.VerifySigned(r.Context(), r, body)
	if err != nil {
		return principal{}, &refusedSignature{err.Error()}
	}
	return principal{kind: "iam", name: name, gated: !admin}, nil
}

// refusedSignature is a signed request the gate refused (403, as API Gateway answers).
type refusedSignature struct{ msg string }

func (e *refusedSignature) Error() string { return e.msg }

// authorize applies the gate to an operator's API request.
func (s *Server) authorize(p principal, r *http.Request) error {
	if !p.gated || s.gate == nil {
		return nil
	}
	return s.gate.Authorize(p.name, r.Method, r.URL.Path)
}

// pageRoute is the API route a page request stands for: an operator may open a page or post
// its form when their policies allow that route ("" for pages that act on nothing).
func pageRoute(r *http.Request) (method, path string, err error) {
	q := r.URL.Query()
	listing := func(what string) string {
		if app := q.Get("app"); app != "" {
			return "/api/apps/" + app + "/" + what
		}
		return "/api/" + what
	}
	instance := func(name string) (string, error) {
		k, err := timer.ParseKey(name)
		if err != nil {
			return "", err
		}
		n := k.Timer
		if k.Tenant != "" {
			n += "@" + k.Tenant
		}
		return "/api/apps/" + k.AppName() + "/timers/" + n, nil
	}
	switch r.Pattern {
	case "GET /{$}":
		return "GET", listing("health"), nil
	case "GET /timers":
		return "GET", listing("timers"), nil
	case "GET /logs":
		if t := q.Get("timer"); t != "" && strings.Contains(t, ":") {
			k, err := timer.ParseKey(t)
			if err != nil {
				return "", "", err
			}
			return "GET", "/api/apps/" + k.AppName() + "/logs", nil
		}
		return "GET", listing("logs"), nil
	case "GET /audit":
		return "GET", listing("audit"), nil
	case "GET /jobs":
		return "GET", listing("jobs"), nil
	case "POST /apps/{app}/jobs/{id}/cancel":
		return "POST", "/api/apps/" + r.PathValue("app") + "/jobs/" + r.PathValue("id") + "/cancel", nil
	case "GET /logs/entry":
		k, err := timer.ParseKey(q.Get("timer"))
		if err != nil {
			return "", "", err
		}
		return "GET", "/api/apps/" + k.AppName() + "/logs/entry", nil
	case "GET /timers/{name}", "GET /timers/{name}/edit":
		p, err := instance(r.PathValue("name"))
		return "GET", p, err
	case "POST /timers/{name}/edit":
		p, err := instance(r.PathValue("name"))
		return "PATCH", p, err
	case "GET /calendars":
		return "GET", listing("calendars"), nil
	case "POST /apps/{app}/calendars/{name}":
		return "PUT", "/api/apps/" + r.PathValue("app") + "/calendars/" + r.PathValue("name"), nil
	case "POST /apps/{app}/{op}":
		return "POST", "/api/apps/" + r.PathValue("app") + "/" + r.PathValue("op"), nil
	case "POST /timers/{name}/backfill", "POST /timers/{name}/backfill/cancel":
		k, err := timer.ParseKey(r.PathValue("name"))
		if err != nil {
			return "", "", err
		}
		p := "/api/apps/" + k.AppName() + "/timers/" + k.Timer + "/backfill"
		if strings.HasSuffix(r.Pattern, "/cancel") {
			p += "/cancel"
		}
		return "POST", p, nil
	case "POST /timers/{name}/state/reset":
		p, err := instance(r.PathValue("name"))
		return "POST", p + "/state/reset", err
	case "POST /timers/{name}/{op}":
		p, err := instance(r.PathValue("name"))
		return "POST", p + "/" + r.PathValue("op"), err
	}
	return "", "", nil
}

func errkindStatus(err error) int { return errkind.HTTPStatus(err) }

// forward authenticates a console API request as the console's own (token, or session with
// its CSRF header on a change), then hands it to the remote API.
func (s *Server) forward(to func(http.ResponseWriter, *http.Request)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := s.authenticateAPI(r); err != nil {
			var th throttled
			if errors.As(err, &th) {
				s.tooMany(w, r, th.wait, true)
				return
			}
			s.writeAPIError(w, r, errkindStatus(err), err.Error())
			return
		}
		to(w, r)
	})
}

// mayRead reports whether the page request's caller may read the API route path (GET): what
// a page shows beside what its route authorized (the App filter's suggestions, a form's
// re-rendered list) is limited to it. The console's token, its login links and the
// administrator read everything; an operator what their policies allow.
func (s *Server) mayRead(r *http.Request, path string) bool {
	p, ok := principalOf(r.Context())
	if !ok {
		return false
	}
	if !p.gated || s.gate == nil {
		return true
	}
	return s.gate.Authorize(p.name, http.MethodGet, path) == nil
}
