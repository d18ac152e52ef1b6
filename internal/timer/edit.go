package timer

import "time"

// An operator's edit (Service Center's effective schedule, effective timeout, priority, and
// the DST policy) replaces those settings of an instance, so the engine needs no notion of
// it. The values the edit replaced (the manifest's) are kept as the edit's Defaults while the
// edit is in force; without an edit, the timer runs its defaults.

// Overridable are the settings an operator may edit.
type Overridable struct {
	Schedule string
	Timeout  time.Duration
	Priority int
	DST      string // as Settings keeps it: "" (shift) or "skip"
	// MisfireAfter is the timer's catch-up window (zero: MisfireThreshold).
	MisfireAfter time.Duration
}

// Overridable returns the settings' editable values.
func (s Settings) Overridable() Overridable {
	return Overridable{Schedule: s.Schedule, Timeout: s.Timeout, Priority: s.Priority, DST: s.DST, MisfireAfter: s.MisfireAfter}
}

// Edit is an operator's change to a timer as a store saves it, in one conditional write.
type Edit struct {
	// Effective are the new values; Defaults the manifest's values they override (the edit
	// record is removed when both are equal); Expect the values the editor read, which must
	// still be in force (ErrChanged otherwise).
	Effective, Defaults, Expect Overridable
	// Reschedule sets nextRun to NextRun (zero: no next run), also while an execution runs:
	// the engine then keeps it, as it keeps any next run set during a run.
	Reschedule bool
	NextRun    time.Time
	At         time.Time
	By         string
}

// EditRecord is an edit in force.
type EditRecord struct {
	Defaults Overridable
	At       time.Time
	By       string
}
