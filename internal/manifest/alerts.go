package manifest

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/sundialhq/sundial/internal/timer"
)

// Alerts are alert rules as the manifest writes them: at the top, the app's defaults; on a
// timer, its own, which replace the defaults whole (`alerts: {}` turns them off).
type Alerts struct {
	ConsecutiveFailures *int      `yaml:"consecutiveFailures" json:"consecutiveFailures,omitempty"`
	NoSuccessWithin     *Duration `yaml:"noSuccessWithin" json:"noSuccessWithin,omitempty"`
	DurationOver        *Duration `yaml:"durationOver" json:"durationOver,omitempty"`
	// Counter: a rule per counter an action reports ("counter: {rows: {below: 1}}").
	Counter map[string]timer.CounterBound `yaml:"counter" json:"counter,omitempty"`
	// Notify is an SNS topic also told of each alert raised or resolved; the stack's
	// AlertTopicArns parameter must cover it.
	Notify string `yaml:"notify" json:"notify,omitempty"`
}

// snsTopicARN: arn:<partition>:sns:<region>:<account>:<topic>.
var snsTopicARN = regexp.MustCompile(`^arn:aws[a-z-]*:sns:[a-z0-9-]+:[0-9]{12}:[A-Za-z0-9_-]{1,256}$`)

// Rules are the rules these alerts set (nil: none).
func (a *Alerts) Rules() timer.AlertRules {
	var r timer.AlertRules
	if a == nil {
		return r
	}
	if a.ConsecutiveFailures != nil {
		r.ConsecutiveFailures = *a.ConsecutiveFailures
	}
	if a.NoSuccessWithin != nil {
		r.NoSuccessWithin = a.NoSuccessWithin.Duration
	}
	if a.DurationOver != nil {
		r.DurationOver = a.DurationOver.Duration
	}
	if len(a.Counter) > 0 {
		r.Counters = a.Counter
	}
	r.Notify = a.Notify
	return r
}

func (a *Alerts) problems() []error {
	if a == nil {
		return nil
	}
	var errs []error
	if a.ConsecutiveFailures != nil && (*a.ConsecutiveFailures < 1 || *a.ConsecutiveFailures > 1000) {
		errs = append(errs, fmt.Errorf("alerts: consecutiveFailures: %d is out of range 1..1000 (leave it out for no such rule)", *a.ConsecutiveFailures))
	}
	if a.NoSuccessWithin != nil && (a.NoSuccessWithin.Duration < time.Second || a.NoSuccessWithin.Duration > 90*24*time.Hour) {
		errs = append(errs, fmt.Errorf("alerts: noSuccessWithin: %s is out of range 1s..2160h (recovery checks it at each sweep, every minute on AWS)", a.NoSuccessWithin.Duration))
	}
	if a.DurationOver != nil && (a.DurationOver.Duration < time.Second || a.DurationOver.Duration > 24*time.Hour) {
		errs = append(errs, fmt.Errorf("alerts: durationOver: %s is out of range 1s..24h", a.DurationOver.Duration))
	}
	for name, b := range a.Counter {
		switch {
		case !timer.ValidCounterName(name):
			errs = append(errs, fmt.Errorf("alerts: counter: %q is not a counter name ([A-Za-z][A-Za-z0-9_.-]{0,63})", name))
		case b.Below == nil && b.Above == nil:
			errs = append(errs, fmt.Errorf("alerts: counter: %s: give below, above or both (e.g. {below: 1})", name))
		case b.Below != nil && b.Above != nil && *b.Below > *b.Above:
			errs = append(errs, fmt.Errorf("alerts: counter: %s: below %v is over above %v: it would always hold", name, *b.Below, *b.Above))
		}
	}
	if len(a.Counter) > timer.MaxCounters {
		errs = append(errs, fmt.Errorf("alerts: counter: %d rules, more than the %d counters a run may report", len(a.Counter), timer.MaxCounters))
	}
	if a.Notify != "" && !snsTopicARN.MatchString(a.Notify) {
		errs = append(errs, fmt.Errorf("alerts: notify: %q is not an SNS topic's ARN (arn:aws:sns:REGION:ACCOUNT:TOPIC)", a.Notify))
	}
	if a.Notify != "" && a.ConsecutiveFailures == nil && a.NoSuccessWithin == nil && a.DurationOver == nil && len(a.Counter) == 0 {
		errs = append(errs, fmt.Errorf("alerts: notify: no rule to notify of; add consecutiveFailures, noSuccessWithin or durationOver"))
	}
	return errs
}

// regionProblem is the error for a notify topic outside region (the stack's), or nil: SNS
// answers Publish only for topics in the Region of the endpoint called, the function's own
// (https://docs.aws.amazon.com/sns/latest/api/API_Publish.html), so such a topic would never
// be told of an alert although every deploy accepted it.
func (a *Alerts) regionProblem(region string) error {
	if a == nil || a.Notify == "" || region == "" || !snsTopicARN.MatchString(a.Notify) {
		return nil // no topic, no region to check against, or already refused by Validate
	}
	if r := strings.Split(a.Notify, ":")[3]; r != region {
		return fmt.Errorf("alerts: notify: topic %s is in %s, the stack in %s: SNS Publish reaches only topics in the caller's region; "+
			"name a topic in %s (it may forward to subscribers anywhere)", a.Notify, r, region, region)
	}
	return nil
}

// withAlertDefaults gives every timer without alerts of its own the manifest's.
func (m *Manifest) withAlertDefaults() {
	for i := range m.Timers {
		if m.Timers[i].Alerts == nil {
			m.Timers[i].Alerts = m.Alerts
		}
	}
}

// HasNotify reports whether the manifest or any of its timers names a notify topic.
func (m Manifest) HasNotify() bool {
	if m.Alerts != nil && m.Alerts.Notify != "" {
		return true
	}
	for _, t := range m.Timers {
		if t.Alerts != nil && t.Alerts.Notify != "" {
			return true
		}
	}
	return false
}
