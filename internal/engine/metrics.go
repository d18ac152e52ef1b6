package engine

import (
	"log/slog"
	"time"

	"github.com/sundialhq/sundial/internal/timer"
)

// Metrics is where the engine reports what it measures; internal/emf.Recorder writes it as
// CloudWatch Embedded Metric Format lines. A nil Metrics reports nowhere.
type Metrics interface {
	// Firing: an execution ended with outcome; ran says whether the action ran (success,
	// error, timeout), and so whether lateness (start − due) and duration mean anything.
	Firing(outcome string, priority int, ran bool, lateness, duration time.Duration)
	ClaimLost()
	ZombieDiscarded()
	MessageRejected()
	FiringsResent(n int)
	FetchTick(sent int)
	// Flush writes what the recorder keeps back (Firing may batch); called when an
	// invocation's work ends.
	Flush()
}

type noMetrics struct{}

func (noMetrics) Firing(string, int, bool, time.Duration, time.Duration) {}
func (noMetrics) ClaimLost()                                             {}
func (noMetrics) ZombieDiscarded()                                       {}
func (noMetrics) MessageRejected()                                       {}
func (noMetrics) FiringsResent(int)                                      {}
func (noMetrics) FetchTick(int)                                          {}
func (noMetrics) Flush()                                                 {}

func metricsOr(m Metrics) Metrics {
	if m == nil {
		return noMetrics{}
	}
	return m
}

// recordFiring reports an ended execution of an instance with the given priority.
func recordFiring(m Metrics, priority int, e timer.Execution) {
	// A backfill run starts long after its instant by design: its "lateness" is no lateness,
	// and would set off the Lateness alarm and fill its percentiles. It counts as a
	// firing, without lateness and duration samples.
	ran := e.Outcome != timer.OutcomeRecovered && e.Outcome != timer.OutcomeMissed && !e.Backfill
	metricsOr(m).Firing(string(e.Outcome), priority, ran, e.StartedAt.Sub(e.ShouldHaveRunAt), e.Duration)
}

// executionLevel is the level of an ended execution's log line: Debug when it succeeded (the
// run log has it; a line per firing would be most of what CloudWatch Logs bills), Info
// otherwise.
func executionLevel(e timer.Execution) slog.Level {
	if e.Outcome == timer.OutcomeSuccess {
		return slog.LevelDebug
	}
	return slog.LevelInfo
}
