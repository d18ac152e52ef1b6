package console

import (
	"slices"
	"time"

	"github.com/sundialhq/sundial/internal/timer"
)

// LastHour is the last hour's executions as Environment Health shows them. They come from
// the log table (the hour's entries Health reads, figuresMaxEntries at most), the same
// executions whose Firings, Lateness and Duration metrics the functions emit to CloudWatch;
// the other metrics (lost claims, zombies, rejected and re-sent messages) exist only in
// CloudWatch. Truncated: the hour held more entries than were read, so the counts are a
// lower bound and the percentiles are of the latest entries.
type LastHour struct {
	Since         time.Time      `json:"since"`
	Firings       int            `json:"firings"`
	ByOutcome     map[string]int `json:"byOutcome"`
	Failed        int            `json:"failed"` // error, timeout, recovered
	LatenessP50Ms int64          `json:"latenessP50Ms"`
	LatenessP95Ms int64          `json:"latenessP95Ms"`
	LatenessMaxMs int64          `json:"latenessMaxMs"`
	DurationP50Ms int64          `json:"durationP50Ms"`
	DurationMaxMs int64          `json:"durationMaxMs"`
	Truncated     bool           `json:"truncated"`
}

// lastHour summarizes the executions (newest first) that started in the hour before now;
// limit is how many entries the read could return.
func lastHour(now time.Time, recent []timer.Execution, limit int) LastHour {
	h := LastHour{Since: now.Add(-time.Hour), ByOutcome: map[string]int{}}
	var late, took []int64
	for _, e := range recent {
		if e.StartedAt.Before(h.Since) {
			continue
		}
		h.Firings++
		h.ByOutcome[string(e.Outcome)]++
		if e.Outcome.Failed() {
			h.Failed++
		}
		if e.Outcome == timer.OutcomeRecovered || e.Outcome == timer.OutcomeMissed {
			continue // the action did not run to an end: no lateness or duration to speak of
		}
		if e.Backfill {
			continue // a backfill run starts long after its instant by design: no lateness (as in CloudWatch)
		}
		late = append(late, max(e.StartedAt.Sub(e.ShouldHaveRunAt), 0).Milliseconds())
		took = append(took, e.Duration.Milliseconds())
	}
	h.Truncated = len(recent) >= limit && h.Firings == len(recent)
	h.LatenessP50Ms, h.LatenessP95Ms, h.LatenessMaxMs = percentile(late, 50), percentile(late, 95), percentile(late, 100)
	h.DurationP50Ms, h.DurationMaxMs = percentile(took, 50), percentile(took, 100)
	return h
}

// percentile is the nearest-rank percentile p (1..100) of vs; 0 for none.
func percentile(vs []int64, p int) int64 {
	if len(vs) == 0 {
		return 0
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	rank := (p*len(s) + 99) / 100 // ceil(p/100 × n)
	return s[max(rank, 1)-1]
}
