package engine

import (
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
}

type noMetrics struct{}

func (noMetrics) Firing(string, int, bool, time.Duration, time.Duration) {}
func (noMetrics) ClaimLost()                                             {}
func (noMetrics) ZombieDiscarded()                                       {}
func (noMetrics) MessageRejected()                                       {}
func (noMetrics) FiringsResent(int)                                      {}
func (noMetrics) FetchTick(int)                                          {}

func metricsOr(m Metrics) Metrics {
	if m == nil {
		return noMetrics{}
	}
	return m
}

// recordFiring reports an ended execution of an instance with the given priority.
func recordFiring(m Metrics, priority int, e timer.Execution) {
	ran := e.Outcome != timer.OutcomeRecovered && e.Outcome != timer.OutcomeMissed
	metricsOr(m).Firing(string(e.Outcome), priority, ran, e.StartedAt.Sub(e.ShouldHaveRunAt), e.Duration)
}
