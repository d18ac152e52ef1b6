package schedule

import (
	"fmt"
	"strings"
	"time"
)

// Parse validates expr and returns a Schedule evaluated in loc (nil loc = UTC), with the
// DST policy of its options (shift by default; see DST).
//
// Formats are case-sensitive, as in OutSystems (cron month and weekday names
// excepted, as in cron). Each format lives in its own file; adding one means
// adding a case here that recognises its shape:
//
//	"HH:MM ..." [days]         daily.go, days.go (OutSystems)
//	"every N s|m|h [spread]"   every.go
//	H, H(a-b), H/n in cron and HH:MM, and "spread": spread.go (needs WithSeed)
//	"rate(N unit)"             rate.go (EventBridge)
//	"at(yyyy-mm-ddThh:mm:ss)"  at.go (EventBridge)
//	5 fields, 6 or 7 fields    cronparse.go (Unix, Quartz)
//	"cron(6 fields)"           cronparse.go (EventBridge)
//	"When Published"           whenpublished.go
func Parse(expr string, loc *time.Location, opts ...Option) (Schedule, error) {
	o := options{dst: DSTShift}
	for _, opt := range opts {
		opt(&o)
	}
	dst, err := ParseDST(string(o.dst))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	policy, err := ParseOnExcluded(string(o.onExcluded))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	sp := &spreader{seed: o.seed}
	s, err := parse(expr, loc, sp)
	if err != nil {
		return nil, err
	}
	if err := sp.done(expr); err != nil {
		return nil, err
	}
	s = applyDST(s, dst)
	if o.calendar != nil {
		if loc == nil {
			loc = time.UTC
		}
		s = excluding{base: s, loc: loc, cal: o.calendar, policy: policy, skipGaps: dst == DSTSkip}
	}
	if !o.start.IsZero() || !o.end.IsZero() {
		s = window{base: s, start: o.start, end: o.end}
	}
	return s, nil
}

func parse(expr string, loc *time.Location, sp *spreader) (Schedule, error) {
	if loc == nil {
		loc = time.UTC
	}
	fields := strings.Fields(expr)
	trimmed := strings.TrimSpace(expr)
	switch {
	case len(fields) == 0:
		return nil, invalid(expr, "empty schedule; %s", expectedFormats)
	case IsWhenPublished(expr):
		return whenPublished{expr: expr}, nil
	case fields[0] == "every":
		return parseEvery(expr, fields[1:], loc, sp)
	case strings.HasPrefix(trimmed, "rate("):
		inner, err := callArgs(expr, trimmed, "rate", rateSyntax)
		if err != nil {
			return nil, err
		}
		if strings.Contains(inner, "H") {
			return nil, invalid(expr, `H (a spread start time) cannot be used in rate(); "every N s|m|h spread" spreads an interval`)
		}
		return parseRate(expr, inner, loc)
	case strings.HasPrefix(trimmed, "at("):
		inner, err := callArgs(expr, trimmed, "at", atSyntax)
		if err != nil {
			return nil, err
		}
		if strings.Contains(inner, "H") {
			return nil, invalid(expr, "H (a spread start time) cannot be used in at(): a one-time schedule names its instant; %s", atSyntax)
		}
		return parseAt(expr, inner, loc)
	case strings.HasPrefix(trimmed, "cron("):
		inner, err := callArgs(expr, trimmed, "cron", `expected "cron(minute hour day-of-month month day-of-week year)"`)
		if err != nil {
			return nil, err
		}
		return parseEventBridgeCron(expr, inner, loc, sp)
	case isCronShape(fields):
		return parseCronFields(expr, fields, loc, sp)
	case isDigit(fields[0][0]) || strings.HasPrefix(fields[0], "H"):
		return parseDaily(expr, fields, loc, sp)
	default:
		return nil, invalid(expr, "unknown format; %s", expectedFormats)
	}
}

// callArgs returns the text between "name(" and the closing ")" that must end
// the (trimmed) expression.
func callArgs(expr, trimmed, name, syntax string) (string, error) {
	inner := trimmed[len(name)+1:]
	if !strings.HasSuffix(inner, ")") {
		return "", invalid(expr, "missing \")\" at the end; %s", syntax)
	}
	inner = inner[:len(inner)-1]
	if i := strings.IndexAny(inner, "()"); i >= 0 {
		return "", invalid(expr, "unexpected %q inside %s(...); %s", inner[i:i+1], name, syntax)
	}
	return inner, nil
}

// IsWhenPublished reports whether expr is the "When Published" schedule.
func IsWhenPublished(expr string) bool {
	return strings.TrimSpace(expr) == whenPublishedExpr
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
