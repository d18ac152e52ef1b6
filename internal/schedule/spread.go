package schedule

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"strings"

	"github.com/sundialhq/sundial/internal/errkind"
)

// Spread start times, after Jenkins' H ("hash"): a schedule may leave a value for Sundial to
// pick, so that timers written "once an hour" do not all fire at :00. The value is a hash of
// the timer's identity, never random, so a timer keeps its instant across runs, deploys and
// releases:
//
//	H            a value in the field's range (cron and OutSystems HH:MM)
//	H(a-b)       a value in a-b
//	H/n, H(a-b)/n every n from a start picked in the first n values of the range
//	every N spread  "every N" with its slots moved by an offset picked in 0..N-1 seconds
//
// H in day-of-month picks 1-28, so that the timer fires every month (Jenkins' rule); in
// day-of-week 0-6 (Unix) or 1-7 (Quartz, cron(...)). H is refused in the year field and in
// rate() and at().
//
// The identity is the instance's (Seed): app, timer and tenant, so each tenant's instance of
// a multi-tenant timer is spread on its own. A schedule with H parsed without one
// (WithSeed) is refused with ErrNeedsTimer, after its syntax has been checked.

// Seed is the identity H values are picked from: App is the app's name ("default" for the
// default app; "" means the same), Tenant "" for a timer that is not per tenant.
type Seed struct {
	App, Timer, Tenant string
}

// ErrNeedsTimer is wrapped by Parse's error for a valid schedule that spreads its start
// (H, "every N spread") when no timer identity was given (WithSeed) to resolve it.
var ErrNeedsTimer = errkind.New(errkind.Invalid, "the schedule spreads its start time (H or \"spread\") and needs a timer to resolve it")

// WithSeed resolves the schedule's H values for the timer s.
func WithSeed(s Seed) Option { return func(o *options) { o.seed = &s } }

// spreader picks H values for one parse and records that it did.
type spreader struct {
	seed *Seed // nil: validating only; values are picked for the empty identity
	used bool
}

// defaultApp is timer.DefaultApp, the default app's name outside the program, which the
// canonical text spells for App "". schedule cannot import timer (timer imports schedule),
// so the name is repeated here; TestSeedSpellsTheDefaultAppAsTimerDoes (spread_app_test.go)
// fails if the two differ.
const defaultApp = "default"

// canonical is the text hashed for the seed: fixed so that values never change between
// releases (vectors in spread_test.go).
func (s Seed) canonical() string {
	app := s.App
	if app == "" {
		app = defaultApp
	}
	return app + "\x00" + s.Timer + "\x00" + s.Tenant
}

// Hash is the first 8 bytes (big-endian) of SHA-256 of the seed's canonical text, a NUL and
// tag (the field's name and the item's position in its list).
func (s Seed) Hash(tag string) uint64 {
	sum := sha256.Sum256([]byte(s.canonical() + "\x00" + tag))
	return binary.BigEndian.Uint64(sum[:8])
}

// pick returns a value in lo..lo+n-1 for tag.
func (sp *spreader) pick(tag string, lo, n int) int {
	sp.used = true
	var s Seed
	if sp.seed != nil {
		s = *sp.seed
	}
	return lo + int(s.Hash(tag)%uint64(n))
}

// done turns a successful parse that used H without a seed into ErrNeedsTimer.
func (sp *spreader) done(expr string) error {
	if sp.used && sp.seed == nil {
		return &parseError{expr: expr, msg: `it spreads its start time (H or "spread"), which is picked per timer: ` +
			`it can only be resolved for a named timer`, wrapped: ErrNeedsTimer}
	}
	return nil
}

// Spreads reports whether expr is a valid schedule that spreads its start time (H or
// "every N spread"), so that its instants depend on the timer.
func Spreads(expr string) bool {
	_, err := Parse(expr, nil)
	return errors.Is(err, ErrNeedsTimer)
}

// MaySpread is a cheap conservative test for Spreads, for caches keyed without the timer:
// false means the schedule's instants do not depend on the timer.
func MaySpread(expr string) bool {
	return strings.Contains(expr, "H") || strings.Contains(expr, "spread")
}

// hashItem reads an item starting with "H": "H", "H(a-b)", either with "/n". lo..hi is the
// field's H range; tag names the item.
func (p *fieldParser) hashItem(rng, stepText string, hasStep bool, tag string) (lo, hi, step int, err error) {
	if p.f.hashMax == 0 {
		return 0, 0, 0, p.errf(`H cannot be used in the %s field`, p.f.name)
	}
	lo, hi = p.f.hashMin, p.f.hashMax
	if rng != "H" {
		inner, ok := strings.CutPrefix(rng, "H(")
		inner, closed := strings.CutSuffix(inner, ")")
		a, b, isRange := strings.Cut(inner, "-")
		if !ok || !closed || !isRange {
			return 0, 0, 0, p.errf(`unexpected %q; expected H, H(a-b), H/n or H(a-b)/n`, rng)
		}
		if lo, err = p.value(a); err != nil {
			return 0, 0, 0, err
		}
		if hi, err = p.value(b); err != nil {
			return 0, 0, 0, err
		}
		if lo > hi {
			return 0, 0, 0, p.errf("range %q runs backwards; H(a-b) needs a <= b", rng)
		}
	}
	n := hi - lo + 1
	if !hasStep {
		v := p.sp.pick(tag, lo, n)
		return v, v, 1, nil
	}
	s, ok := parseUint(stepText)
	if !ok || s == 0 {
		return 0, 0, 0, p.errf("step %q must be a positive integer", stepText)
	}
	if s > int64(n) {
		return 0, 0, 0, p.errf("step %d is larger than the %d values of %s (%d-%d)", s, n, rng, lo, hi)
	}
	return p.sp.pick(tag, lo, int(s)), hi, int(s), nil
}
