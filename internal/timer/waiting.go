package timer

import (
	"fmt"
	"slices"
	"time"
)

// Waiting is a firing the dependency gate (gate.go) parked: its claim ended without an
// execution, its window kept (PendingScheduledAt/PendingAttempt) and NextRun set to the
// gate's bound, until an upstream's successful finish wakes it (Instance.Waiters).
type Waiting struct {
	// Since is when the firing first waited for its window (kept when it waits again).
	Since time.Time `json:"since"`
	// For is the waiting firing's scheduled instant (its window).
	For time.Time `json:"for"`
	// Reason is the gate's reason: "waiting for A (running since 04:02), billing:B (not started)".
	Reason string `json:"reason"`
	// Exec is the claim the park ended: the log writer tells a park from a finish by it.
	Exec string `json:"exec"`
	// Alert: past its bound, onUpstreamFailed: alert raised an alert and it waits on.
	Alert bool `json:"alert,omitempty"`
}

// Park ends a claim that the dependency gate held back, without an execution.
type Park struct {
	Fence Fence
	// NextRun is when the firing is due again if no upstream wakes it first (zero: only a
	// wake ends its wait).
	NextRun time.Time
	Now     time.Time
	Reason  string
	Alert   bool
}

// Park applies p to the claimed instance: the claim ends (fenced, as a finish), the firing
// it claimed is pending again at p.NextRun with its window and attempt kept, and Waiting
// records why (its Since kept while it waits for the same window). ErrFenceLost if the
// claim no longer holds the instance; ErrChanged if a next run was set or a stop asked for
// during the claim (the caller ends the claim as a finish instead).
func (in Instance) Park(p Park) (Instance, error) {
	if in.ExecutionID != p.Fence.ExecutionID || in.Version != p.Fence.Version {
		return in, ErrFenceLost
	}
	if !in.NextRun.IsZero() || in.Stop != nil || in.RunBackfill != "" {
		return in, ErrChanged
	}
	scheduledAt, attempt := in.Run()
	w := Waiting{Since: p.Now, For: scheduledAt, Reason: p.Reason, Exec: in.ExecutionID, Alert: p.Alert}
	if in.Waiting != nil && in.Waiting.For.Equal(scheduledAt) {
		w.Since = in.Waiting.Since
	}
	out := in.Clone()
	out.IsRunningSince, out.IsRunningBy, out.ExecutionID = time.Time{}, "", ""
	out.LeaseExpiresAt, out.LeaseDeadline = time.Time{}, time.Time{}
	out.ClaimedNextRun, out.RequeuedAt = time.Time{}, time.Time{}
	out.RunScheduledAt, out.RunAttempt, out.RunProgress = time.Time{}, 0, nil
	out.Version++
	out.NextRun = p.NextRun
	out.PendingScheduledAt, out.PendingAttempt = scheduledAt, attempt
	out.Waiting = &w
	return out, nil
}

// NewlyAlerted reports whether a park moved the instance from before into an alerting wait
// (onUpstreamFailed: alert) it was not in for the same window: the alert is raised once.
func NewlyAlerted(before, after Instance) bool {
	if after.Waiting == nil || !after.Waiting.Alert {
		return false
	}
	return before.Waiting == nil || !before.Waiting.Alert || !before.Waiting.For.Equal(after.Waiting.For)
}

// Wake makes a waiting instance due at now (an upstream it waits for succeeded): only an
// idle, active instance that is still waiting. false: nothing to wake.
func (in Instance) Wake(now time.Time) (Instance, bool) {
	if in.Waiting == nil || in.Running() || !in.Active {
		return in, false
	}
	out := in.Clone()
	out.NextRun = now
	return out, true
}

// AddWaiter records that the instance named waiter waits for in's next success.
func (in Instance) AddWaiter(waiter Key) Instance {
	out := in.Clone()
	if s := waiter.String(); !slices.Contains(out.Waiters, s) {
		out.Waiters = append(out.Waiters, s)
	}
	return out
}

// WaiterKeys reads Waiters (entries that do not parse are left out and reported).
func (in Instance) WaiterKeys() ([]Key, error) {
	var out []Key
	var bad []string
	for _, s := range in.Waiters {
		k, err := ParseKey(s)
		if err != nil {
			bad = append(bad, s)
			continue
		}
		out = append(out, k)
	}
	if len(bad) > 0 {
		return out, fmt.Errorf("%s: waiters %q are not timer keys", in.Key, bad)
	}
	return out, nil
}
