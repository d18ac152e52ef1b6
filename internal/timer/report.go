package timer

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sundialhq/sundial/internal/errkind"
)

// Report is what a successful run says it did (an answer's "summary", "counters" and
// "warnings"): it goes into the execution's log entry, its event, the console's execution
// view and `sundial logs`. A run with warnings ends as OutcomeWarnings.
type Report struct {
	// Summary is a line of text, at most SummaryMaxBytes.
	Summary string `json:"summary,omitempty"`
	// Counters are named numbers ("rows": 1200), at most MaxCounters.
	Counters map[string]float64 `json:"counters,omitempty"`
	// Warnings are short texts, at most MaxWarnings of WarningMaxBytes each.
	Warnings []string `json:"warnings,omitempty"`
}

// The bounds of a Report.
const (
	SummaryMaxBytes = 1024
	MaxCounters     = 20
	MaxWarnings     = 10
	WarningMaxBytes = 256
)

// Truncated ends a summary or a warning cut to its bound.
const Truncated = "…[truncated]"

// counterName is what a counter may be called (an alert rule names it).
var counterName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]{0,63}$`)

// ValidCounterName reports whether name may name a counter.
func ValidCounterName(name string) bool { return counterName.MatchString(name) }

// Empty reports whether the report says nothing.
func (r Report) Empty() bool { return r.Summary == "" && len(r.Counters) == 0 && len(r.Warnings) == 0 }

// Normalize checks a report an action returned: counters must be well named, finite and at
// most MaxCounters (an error: an alert may test them, and a guess would hide the mistake);
// a summary or warning over its bound is cut and marked, warnings past MaxWarnings are
// dropped with a last warning saying how many, and empty warnings are dropped.
func (r Report) Normalize() (Report, error) {
	if len(r.Counters) > MaxCounters {
		return Report{}, fmt.Errorf("%w: %d counters, more than the %d allowed", errkind.Invalid, len(r.Counters), MaxCounters)
	}
	for name, v := range r.Counters {
		if !ValidCounterName(name) {
			return Report{}, fmt.Errorf("%w: counter name %q must match %s", errkind.Invalid, clipText(name, 80), counterName)
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return Report{}, fmt.Errorf("%w: counter %q is not a finite number", errkind.Invalid, name)
		}
	}
	if len(r.Counters) == 0 {
		r.Counters = nil
	}
	r.Summary = cut(strings.TrimSpace(r.Summary), SummaryMaxBytes)
	var ws []string
	for _, w := range r.Warnings {
		if w = strings.TrimSpace(w); w != "" {
			ws = append(ws, cut(w, WarningMaxBytes))
		}
	}
	if len(ws) > MaxWarnings {
		ws = append(ws[:MaxWarnings-1], fmt.Sprintf("…and %d more warnings", len(ws)-MaxWarnings+1))
	}
	r.Warnings = ws
	return r, nil
}

// cut returns s (valid UTF-8) if it fits in limit bytes, else its start ending with Truncated.
func cut(s string, limit int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= limit {
		return s
	}
	return clipText(s, limit-len(Truncated)) + Truncated
}

// clipText is s's longest prefix of at most limit bytes that ends at a character boundary.
func clipText(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	for limit > 0 && !utf8.RuneStart(s[limit]) {
		limit--
	}
	return s[:limit]
}

// Progress is what a running async execution last reported of its progress (the client's
// Progress, through its heartbeat): shown live while it runs, removed by its finish.
type Progress struct {
	// Fraction is done/total, 0..1.
	Fraction float64 `json:"fraction"`
	// Note is a short text (at most ProgressNoteMaxBytes).
	Note string    `json:"note,omitempty"`
	At   time.Time `json:"at"`
}

// ProgressNoteMaxBytes bounds a progress note.
const ProgressNoteMaxBytes = 256

// ValidateProgress checks a progress report: a fraction in 0..1; a longer note is cut.
func ValidateProgress(fraction float64, note string) (Progress, error) {
	if math.IsNaN(fraction) || fraction < 0 || fraction > 1 {
		return Progress{}, fmt.Errorf("%w: progress %v must be a fraction in 0..1 (done/total)", errkind.Invalid, fraction)
	}
	return Progress{Fraction: fraction, Note: cut(strings.TrimSpace(note), ProgressNoteMaxBytes)}, nil
}
