package engine

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"

	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/timer"
)

// Token identifies an async execution to the action that runs it; every report it makes
// (heartbeat, complete, fail) is fenced by the owner token and version it carries.
type Token struct {
	App         string    `json:"a,omitempty"` // "" for the default app
	Timer       string    `json:"t"`
	Tenant      string    `json:"n,omitempty"`
	ExecutionID string    `json:"e"`
	Version     int64     `json:"v"`
	Deadline    time.Time `json:"d"` // isRunningSince + timeout × 1.2: no lease extends past it
	Window      int64     `json:"w"` // heartbeat window, milliseconds
}

// ErrBadToken wraps every token decoding error.
var ErrBadToken = errkind.New(errkind.Invalid, "invalid execution token")

// NewToken is the token for a claimed instance.
func NewToken(running timer.Instance) Token {
	return Token{
		App: running.App, Timer: running.Timer, Tenant: running.Tenant, ExecutionID: running.ExecutionID, Version: running.Version,
		Deadline: running.IsRunningSince.Add(running.Lease()), Window: running.HeartbeatWindow().Milliseconds(),
	}
}

// Key is the instance the token is for.
func (t Token) Key() timer.Key {
	return timer.Key{App: t.App, Timer: t.Timer, Tenant: t.Tenant}
}

// Fence is the execution's fence.
func (t Token) Fence() timer.Fence {
	return timer.Fence{ExecutionID: t.ExecutionID, Version: t.Version}
}

// String encodes the token (URL-safe, opaque to actions).
func (t Token) String() string {
	b, _ := json.Marshal(t)
	return base64.RawURLEncoding.EncodeToString(b)
}

// ParseToken decodes and validates a token.
func ParseToken(s string) (Token, error) {
	if len(s) > 2048 {
		return Token{}, fmt.Errorf("%w: %d bytes", ErrBadToken, len(s))
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return Token{}, fmt.Errorf("%w: %v", ErrBadToken, err)
	}
	var t Token
	if err := json.Unmarshal(b, &t); err != nil {
		return Token{}, fmt.Errorf("%w: %v", ErrBadToken, err)
	}
	t.App = timer.NormApp(t.App) // a token's app as it came in
	if err := t.Key().Validate(); err != nil {
		return Token{}, fmt.Errorf("%w: %v", ErrBadToken, err)
	}
	if t.ExecutionID == "" || t.Version < 1 || t.Deadline.IsZero() || t.Window <= 0 {
		return Token{}, fmt.Errorf("%w: missing execution id, version, deadline or window", ErrBadToken)
	}
	return t, nil
}
