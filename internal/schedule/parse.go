package schedule

import (
	"strings"
	"time"
)

// Parse validates expr and returns a Schedule evaluated in loc (nil loc = UTC).
//
// Formats are case-sensitive, as in OutSystems. Each format lives in its own file;
// adding one means adding a case here that recognises its first token.
func Parse(expr string, loc *time.Location) (Schedule, error) {
	if loc == nil {
		loc = time.UTC
	}
	fields := strings.Fields(expr)
	switch {
	case len(fields) == 0:
		return nil, invalid(expr, "empty schedule; %s", expectedFormats)
	case IsWhenPublished(expr):
		return whenPublished{expr: expr}, nil
	case fields[0] == "every":
		return parseEvery(expr, fields[1:], loc)
	case isDigit(fields[0][0]):
		return parseDaily(expr, fields, loc)
	default:
		return nil, invalid(expr, "unknown format; %s", expectedFormats)
	}
}

// IsWhenPublished reports whether expr is the "When Published" schedule.
func IsWhenPublished(expr string) bool {
	return strings.TrimSpace(expr) == whenPublishedExpr
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
