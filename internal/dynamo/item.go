package dynamo

import (
	"fmt"
	"time"

	"github.com/sundialhq/sundial/internal/action"
	"github.com/sundialhq/sundial/internal/timer"
)

// The tables write an app as outside the program (timer.DefaultApp for the default app) in
// every app attribute and app-named key part, and read an item written before apps existed
// (no app attribute) as the default app's; only these three functions translate.

// appAttr is app as an item stores it.
func appAttr(app string) string { return timer.AppName(app) }

// appOf is the app an item's app attribute names, as the program spells it.
func appOf(attr string) string { return timer.NormApp(attr) }

// keyOf is the key an item's app, timer and tenant attributes name.
func keyOf(app, name, tenant string) timer.Key {
	return timer.Key{App: appOf(app), Timer: name, Tenant: tenant}
}

// Attribute and index names shared with template.yaml.
const (
	// indexDue is keyed dueShard (S) + dueAt (N) and projects the keys only. An instance is
	// in it while active and scheduled, and while running; dueAt is the instant the fetch must
	// find it at, or an earlier one when the writer of its next run sent that firing itself
	// (see Store.Finish). The fetch and recovery read the items they find (BatchGetItem).
	indexDue    = "due"
	indexErrors = "errorsByDay"

	instancePrefix = "I#"
)

// instanceItem is the stored form of timer.Instance. Instants are epoch milliseconds and
// zero values are omitted, which keeps the due and running indexes sparse.
type instanceItem struct {
	PK   string `dynamodbav:"pk"`
	SK   string `dynamodbav:"sk"`
	Kind string `dynamodbav:"kind"`

	// App is the timer's app, always written (DefaultApp for the default app). An item
	// without it was written before apps existed and reads as the default app's.
	App          string            `dynamodbav:"app,omitempty"`
	Timer        string            `dynamodbav:"timer"`
	Tenant       string            `dynamodbav:"tenant,omitempty"`
	Schedule     string            `dynamodbav:"schedule"`
	Timezone     string            `dynamodbav:"timezone,omitempty"`
	DST          string            `dynamodbav:"dst,omitempty"`
	Priority     int               `dynamodbav:"priority"`
	TimeoutMs    int64             `dynamodbav:"timeoutMs"`
	LeaseMs      int64             `dynamodbav:"leaseMs"`
	MaxRetries   int               `dynamodbav:"maxRetries"`
	RetryDelayMs int64             `dynamodbav:"retryDelayMs"`
	Action       action.Spec       `dynamodbav:"action"`
	Properties   map[string]string `dynamodbav:"properties,omitempty"`
	Misfire      string            `dynamodbav:"misfire,omitempty"`
	Overlap      string            `dynamodbav:"overlap,omitempty"`
	// Resources are the shared resources the timer uses (timer.ResourceUse; absent: none).
	Resources    []timer.ResourceUse `dynamodbav:"resources,omitempty"`
	RetryBackoff string              `dynamodbav:"retryBackoff,omitempty"`
	Async        bool                `dynamodbav:"async,omitempty"`
	HeartbeatMs  int64               `dynamodbav:"heartbeatMs,omitempty"`
	// Calendar is the timer's business calendar with its rules (copied in at publish, so the
	// processor computes a next run from the item it claimed); the attributes below are
	// absent for a timer without them.
	Calendar       *timer.Calendar `dynamodbav:"calendar,omitempty"`
	OnExcluded     string          `dynamodbav:"onExcluded,omitempty"`
	StartMs        int64           `dynamodbav:"startAt,omitempty"`
	EndMs          int64           `dynamodbav:"endAt,omitempty"`
	MisfireAfterMs int64           `dynamodbav:"misfireAfterMs,omitempty"`
	Alerts         *alertRulesItem `dynamodbav:"alerts,omitempty"`
	Active         bool            `dynamodbav:"active"`
	ActiveBy       string          `dynamodbav:"activeBy,omitempty"`
	Shard          int             `dynamodbav:"shard"`
	ShardKey       string          `dynamodbav:"shardKey"`
	DueShard       string          `dynamodbav:"dueShard,omitempty"`
	DueAt          int64           `dynamodbav:"dueAt,omitempty"`
	// ByApp and ByAppKey key the byApp index (see indexByApp): the app and "<timer>#<tenant>".
	ByApp    string `dynamodbav:"byApp,omitempty"`
	ByAppKey string `dynamodbav:"byAppKey,omitempty"`
	// Defaults is there while an operator's edit is in force (editItem reads it); toItem never
	// sets it.
	Defaults map[string]any `dynamodbav:"defaults,omitempty"`

	NextRun        int64  `dynamodbav:"nextRun,omitempty"`
	LastRun        int64  `dynamodbav:"lastRun,omitempty"`
	LastDurationMs int64  `dynamodbav:"lastDurationMs,omitempty"`
	NumberOfTries  int    `dynamodbav:"numberOfTries"`
	IsRunningSince int64  `dynamodbav:"isRunningSince,omitempty"`
	IsRunningBy    string `dynamodbav:"isRunningBy,omitempty"`
	ExecID         string `dynamodbav:"execId,omitempty"`
	LeaseExpiresAt int64  `dynamodbav:"leaseExpiresAt,omitempty"`
	LeaseDeadline  int64  `dynamodbav:"leaseDeadline,omitempty"`
	ClaimedNextRun int64  `dynamodbav:"claimedNextRun,omitempty"`
	RunScheduledAt int64  `dynamodbav:"runScheduledAt,omitempty"`
	RunAttempt     int    `dynamodbav:"runAttempt,omitempty"`
	// RunProgress is the running execution's last progress (timer.Progress).
	RunProgress        *progressItem `dynamodbav:"runProgress,omitempty"`
	PendingScheduledAt int64         `dynamodbav:"pendingScheduledAt,omitempty"`
	PendingAttempt     int           `dynamodbav:"pendingAttempt,omitempty"`
	RequeuedAt         int64         `dynamodbav:"requeuedAt,omitempty"`
	Version            int64         `dynamodbav:"version"`
	LastOutcome        string        `dynamodbav:"lastOutcome,omitempty"`
	LastError          string        `dynamodbav:"lastError,omitempty"`
	LastOutput         string        `dynamodbav:"lastOutput,omitempty"`
	// The run context a finish hands on (timer.Instance.LastSuccessAt, LastSuccessFor,
	// State): written by the fenced finish of a successful run, on the item it writes anyway.
	// The last execution's report (timer.Report), written by its finish: the log entry
	// takes it from the stream's new image.
	LastSummary    string             `dynamodbav:"lastSummary,omitempty"`
	LastCounters   map[string]float64 `dynamodbav:"lastCounters,omitempty"`
	LastWarnings   []string           `dynamodbav:"lastWarnings,omitempty"`
	LastSuccessAt  int64              `dynamodbav:"lastSuccessAt,omitempty"`
	LastSuccessFor int64              `dynamodbav:"lastSuccessFor,omitempty"`
	// Skipped counts the instants skipped by runs late or still running, since SkippedSince
	// (timer.Instance.SkippedInstants): absent until the first skip. A finish adds to it.
	Skipped      int    `dynamodbav:"skipped,omitempty"`
	SkippedSince int64  `dynamodbav:"skippedSince,omitempty"`
	State        string `dynamodbav:"state,omitempty"`
	// LastExecID and LastGaveUp are written by the finish that ends an execution: with the
	// running attributes of the item before it (the stream's old image) they make that
	// execution's log entry (ExecutionFromImages).
	LastExecID string `dynamodbav:"lastExecId,omitempty"`
	LastGaveUp bool   `dynamodbav:"lastGaveUp,omitempty"`
	// A pause (timer.Pause): an operator's deactivation with a note, until ResumeAt.
	PauseNote string `dynamodbav:"pauseNote,omitempty"`
	PausedBy  string `dynamodbav:"pausedBy,omitempty"`
	PausedAt  int64  `dynamodbav:"pausedAt,omitempty"`
	ResumeAt  int64  `dynamodbav:"resumeAt,omitempty"`
	// Backfill is the instance's backfill cursor (timer.BackfillCursor); runBackfill names
	// the backfill the running execution belongs to (set by its claim, removed by its finish).
	Backfill    *backfillItem `dynamodbav:"backfill,omitempty"`
	RunBackfill string        `dynamodbav:"runBackfill,omitempty"`
	// StopBy and StopAt are a stop requested of the running execution (timer.StopRequest):
	// written by Store.RequestStop, removed by the execution's finish.
	StopBy string `dynamodbav:"stopBy,omitempty"`
	StopAt int64  `dynamodbav:"stopAt,omitempty"`
	// AutoPause is the timer's pause after failures (timer.AutoPause; absent: none).
	AutoPause *autoPauseItem `dynamodbav:"autoPause,omitempty"`
	// Deadlines are the timer's deadline rules (timer.Deadlines; absent: none).
	Deadlines *deadlinesItem `dynamodbav:"deadlines,omitempty"`
	// Deps are the timer's upstreams and the bound of its wait (timer.Deps; absent: none).
	Deps *depsItem `dynamodbav:"deps,omitempty"`
	// Waiting is the firing the dependency gate parked (timer.Waiting; absent: none), and
	// Waiters the keys of the instances waiting for this one's success (a string set).
	Waiting *waitingItem `dynamodbav:"waiting,omitempty"`
	Waiters []string     `dynamodbav:"waiters,omitempty,stringset"`
	// RunIgnoreAfter: the pending Run Now bypasses the dependency gate.
	RunIgnoreAfter bool `dynamodbav:"runIgnoreAfter,omitempty"`
	// Parameters are the timer's declared parameters (absent: none); runParams a pending or
	// running Run Now's overrides (timer.Instance.RunParams).
	Parameters timer.Params `dynamodbav:"parameters,omitempty"`
	RunParams  string       `dynamodbav:"runParams,omitempty"`
}

// backfillItem is the stored form of timer.BackfillCursor (a map attribute; false flags and
// zero instants are absent, which the claim's condition relies on).
type backfillItem struct {
	ID        string `dynamodbav:"id"`
	Next      int64  `dynamodbav:"next,omitempty"`
	Attempt   int    `dynamodbav:"attempt,omitempty"`
	Due       int64  `dynamodbav:"due,omitempty"`
	SentAt    int64  `dynamodbav:"sentAt,omitempty"`
	To        int64  `dynamodbav:"to"`
	Total     int    `dynamodbav:"total"`
	Done      int    `dynamodbav:"done"`
	Failed    int    `dynamodbav:"failed"`
	Waiting   bool   `dynamodbav:"waiting,omitempty"`
	Cancelled bool   `dynamodbav:"cancelled,omitempty"`
	Params    string `dynamodbav:"params,omitempty"`
}

func toBackfillItem(c *timer.BackfillCursor) *backfillItem {
	if c == nil {
		return nil
	}
	return &backfillItem{ID: c.ID, Next: ms(c.Next), Attempt: c.Attempt, Due: ms(c.Due), SentAt: ms(c.SentAt), To: ms(c.To),
		Total: c.Total, Done: c.Done, Failed: c.Failed, Waiting: c.Waiting, Cancelled: c.Cancelled, Params: c.Params}
}

func (b *backfillItem) cursor() *timer.BackfillCursor {
	if b == nil {
		return nil
	}
	return &timer.BackfillCursor{ID: b.ID, Next: fromMs(b.Next), Attempt: b.Attempt, Due: fromMs(b.Due), SentAt: fromMs(b.SentAt), To: fromMs(b.To),
		Total: b.Total, Done: b.Done, Failed: b.Failed, Waiting: b.Waiting, Cancelled: b.Cancelled, Params: b.Params}
}

// progressItem is the stored form of timer.Progress.
type progressItem struct {
	Fraction float64 `dynamodbav:"f"`
	Note     string  `dynamodbav:"note,omitempty"`
	At       int64   `dynamodbav:"at"`
}

func toProgressItem(p *timer.Progress) *progressItem {
	if p == nil {
		return nil
	}
	return &progressItem{Fraction: p.Fraction, Note: p.Note, At: ms(p.At)}
}

func (p *progressItem) progress() *timer.Progress {
	if p == nil {
		return nil
	}
	return &timer.Progress{Fraction: p.Fraction, Note: p.Note, At: fromMs(p.At)}
}

// finishSlots is how many finish tokens an item keeps (attributes fin0..fin7), one per
// execution, in turn: a finish whose reply was lost still finds its token after that many
// later executions of the timer (see Store.finishFailed).
const finishSlots = 8

// finishSlot is the attribute that holds the token of the finish that ends the execution
// fenced at version v (a claim and a finish each advance the version by one, so consecutive
// executions take consecutive slots).
func finishSlot(v int64) string { return fmt.Sprintf("fin%d", ((v+1)/2)%finishSlots) }

// pk is an instance's (or a definition's) partition key: "T#" and the key's qualified name,
// "T#Cleanup" for the default app (as before apps existed), "T#billing:Cleanup" for another.
func pk(k timer.Key) string   { return "T#" + k.Name() }
func sk(tenant string) string { return instancePrefix + tenant }

// ShardOf spreads instances over the write shards of the due and running indexes.
func ShardOf(key timer.Key, shards int) int { return timer.ShardOf(key, shards) }

func shardKey(shard int) string { return fmt.Sprintf("s#%d", shard) }

func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func fromMs(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}

func toItem(in timer.Instance) instanceItem {
	it := instanceItem{
		PK: pk(in.Key), SK: sk(in.Tenant), Kind: "instance", ByApp: appAttr(in.App), ByAppKey: byAppKey(in.Key),
		App: appAttr(in.App), Timer: in.Timer, Tenant: in.Tenant,
		Schedule: in.Schedule, Timezone: in.Timezone, DST: in.DST, Priority: in.Priority,
		TimeoutMs: in.Timeout.Milliseconds(), LeaseMs: in.Lease().Milliseconds(),
		MaxRetries: in.MaxRetries, RetryDelayMs: in.RetryDelay.Milliseconds(),
		Action: in.Action, Properties: in.Properties, Misfire: in.Misfire, Overlap: in.Overlap, Resources: in.Resources, Active: in.Active, ActiveBy: in.ActiveBy,
		RetryBackoff: in.RetryBackoff, Async: in.Async, HeartbeatMs: in.Heartbeat.Milliseconds(),
		Calendar: in.Calendar, OnExcluded: in.OnExcluded, StartMs: ms(in.Start), EndMs: ms(in.End),
		MisfireAfterMs: in.MisfireAfter.Milliseconds(),
		Alerts:         alertRulesToItem(in.Alerts),
		Shard:          in.Shard, ShardKey: shardKey(in.Shard),
		NextRun: ms(in.NextRun), LastRun: ms(in.LastRun), LastDurationMs: in.LastDuration.Milliseconds(),
		NumberOfTries: in.NumberOfTries, IsRunningSince: ms(in.IsRunningSince), IsRunningBy: in.IsRunningBy,
		ExecID: in.ExecutionID, LeaseExpiresAt: ms(in.LeaseExpiresAt), LeaseDeadline: ms(in.LeaseDeadline), ClaimedNextRun: ms(in.ClaimedNextRun),
		RunScheduledAt: ms(in.RunScheduledAt), RunAttempt: in.RunAttempt, RunProgress: toProgressItem(in.RunProgress),
		PendingScheduledAt: ms(in.PendingScheduledAt), PendingAttempt: in.PendingAttempt,
		RequeuedAt: ms(in.RequeuedAt), Version: in.Version,
		LastOutcome: string(in.LastOutcome), LastError: in.LastError, LastOutput: in.LastOutput,
		LastSuccessAt: ms(in.LastSuccessAt), LastSuccessFor: ms(in.LastSuccessFor), State: in.State,
		Skipped: in.SkippedInstants, SkippedSince: ms(in.SkippedSince),
		LastSummary: in.LastReport.Summary, LastCounters: in.LastReport.Counters, LastWarnings: in.LastReport.Warnings,
		Backfill: toBackfillItem(in.Backfill), RunBackfill: in.RunBackfill,
		Parameters: in.Parameters, RunParams: in.RunParams,
	}
	if p := in.Pause; p != nil {
		it.PauseNote, it.PausedBy, it.PausedAt, it.ResumeAt = p.Note, p.By, ms(p.At), ms(p.Until)
	}
	it.AutoPause = autoPauseToItem(in.AutoPause)
	it.Deadlines = deadlinesToItem(in.Deadlines)
	it.Deps = depsToItem(in.Deps)
	it.Waiting, it.Waiters, it.RunIgnoreAfter = toWaitingItem(in.Waiting), in.Waiters, in.RunIgnoreAfter
	if st := in.Stop; st != nil {
		it.StopBy, it.StopAt = st.By, ms(st.At)
	}
	switch {
	case in.Running():
		// A running instance stays in the due index, where recovery finds an expired lease.
		it.DueShard, it.DueAt = it.ShardKey, ms(in.ClaimedNextRun)
		if it.DueAt == 0 {
			it.DueAt = ms(in.IsRunningSince)
		}
	case in.Active && !in.NextRun.IsZero():
		it.DueShard, it.DueAt = it.ShardKey, ms(in.NextRun)
	}
	return it
}

func (it instanceItem) instance() timer.Instance {
	in := it.instanceOnly()
	in.AutoPause = it.AutoPause.settings()
	in.Deadlines = it.Deadlines.settings()
	in.Deps = it.Deps.settings()
	in.Waiting, in.Waiters, in.RunIgnoreAfter = it.Waiting.waiting(), it.Waiters, it.RunIgnoreAfter
	if it.PausedAt != 0 {
		in.Pause = &timer.Pause{Note: it.PauseNote, By: it.PausedBy, At: fromMs(it.PausedAt), Until: fromMs(it.ResumeAt)}
	}
	if it.StopAt != 0 {
		in.Stop = &timer.StopRequest{By: it.StopBy, At: fromMs(it.StopAt)}
	}
	return in
}

func (it instanceItem) instanceOnly() timer.Instance {
	return timer.Instance{
		Key: keyOf(it.App, it.Timer, it.Tenant),
		Settings: timer.Settings{
			Schedule: it.Schedule, Timezone: it.Timezone, DST: it.DST, Priority: it.Priority,
			Timeout: time.Duration(it.TimeoutMs) * time.Millisecond, MaxRetries: it.MaxRetries,
			RetryDelay: time.Duration(it.RetryDelayMs) * time.Millisecond,
			Action:     it.Action, Properties: it.Properties, Misfire: it.Misfire, Overlap: it.Overlap, Resources: it.Resources,
			RetryBackoff: it.RetryBackoff, Async: it.Async, Heartbeat: time.Duration(it.HeartbeatMs) * time.Millisecond,
			Calendar: it.Calendar, OnExcluded: it.OnExcluded, Window: timer.Window{Start: fromMs(it.StartMs), End: fromMs(it.EndMs)},
			MisfireAfter: time.Duration(it.MisfireAfterMs) * time.Millisecond,
			Alerts:       it.Alerts.rules(),
			Parameters:   it.Parameters,
		},
		Active: it.Active, ActiveBy: it.ActiveBy, Shard: it.Shard,
		NextRun: fromMs(it.NextRun), LastRun: fromMs(it.LastRun),
		LastDuration:   time.Duration(it.LastDurationMs) * time.Millisecond,
		NumberOfTries:  it.NumberOfTries,
		IsRunningSince: fromMs(it.IsRunningSince), IsRunningBy: it.IsRunningBy, ExecutionID: it.ExecID,
		LeaseExpiresAt: fromMs(it.LeaseExpiresAt), LeaseDeadline: fromMs(it.LeaseDeadline), ClaimedNextRun: fromMs(it.ClaimedNextRun),
		RunScheduledAt: fromMs(it.RunScheduledAt), RunAttempt: it.RunAttempt, RunProgress: it.RunProgress.progress(),
		PendingScheduledAt: fromMs(it.PendingScheduledAt), PendingAttempt: it.PendingAttempt,
		RequeuedAt: fromMs(it.RequeuedAt), Version: it.Version,
		LastOutcome: timer.Outcome(it.LastOutcome), LastError: it.LastError, LastOutput: it.LastOutput,
		LastSuccessAt: fromMs(it.LastSuccessAt), LastSuccessFor: fromMs(it.LastSuccessFor), State: it.State,
		SkippedInstants: it.Skipped, SkippedSince: fromMs(it.SkippedSince),
		LastReport: timer.Report{Summary: it.LastSummary, Counters: it.LastCounters, Warnings: it.LastWarnings},
		Backfill:   it.Backfill.cursor(), RunBackfill: it.RunBackfill,
		RunParams: it.RunParams,
	}
}

// logItem is one execution in the log table.
type logItem struct {
	PK string `dynamodbav:"pk"`
	SK string `dynamodbav:"sk"`
	// ErrDay is set only on a failed execution: "<app>#<day>#<shard>", its errorsByDay
	// partition (errShardPK).
	ErrDay string `dynamodbav:"errDay,omitempty"`
	// App: as instanceItem's (an entry without it is the default app's).
	App             string `dynamodbav:"app,omitempty"`
	Timer           string `dynamodbav:"timer"`
	Tenant          string `dynamodbav:"tenant,omitempty"`
	ExecutionID     string `dynamodbav:"executionId"`
	ScheduledAt     int64  `dynamodbav:"scheduledAt"`
	ShouldHaveRunAt int64  `dynamodbav:"shouldHaveRunAt"`
	StartedAt       int64  `dynamodbav:"startedAt"`
	DurationMs      int64  `dynamodbav:"durationMs"`
	ExecutedBy      string `dynamodbav:"executedBy"`
	Attempt         int    `dynamodbav:"attempt"`
	Outcome         string `dynamodbav:"outcome"`
	Error           string `dynamodbav:"error,omitempty"`
	Output          string `dynamodbav:"output,omitempty"`
	// Summary, Counters and Warnings: the run's report (timer.Report).
	Summary  string             `dynamodbav:"summary,omitempty"`
	Counters map[string]float64 `dynamodbav:"counters,omitempty"`
	Warnings []string           `dynamodbav:"warnings,omitempty"`
	NextRun  int64              `dynamodbav:"nextRun,omitempty"`
	GaveUp   bool               `dynamodbav:"gaveUp,omitempty"`
	Skipped  int                `dynamodbav:"skipped,omitempty"`
	Version  int64              `dynamodbav:"version,omitempty"`
	Backfill bool               `dynamodbav:"backfill,omitempty"`
	// Params are the Run Now's parameter overrides the execution ran with (JSON; absent: none).
	Params    string `dynamodbav:"params,omitempty"`
	ExpiresAt int64  `dynamodbav:"expiresAt"`
}

const logSortLayout = "2006-01-02T15:04:05.000Z"

func logSortKey(e timer.Execution) string {
	return e.StartedAt.UTC().Format(logSortLayout) + "#" + e.ExecutionID
}

func toLogItem(e timer.Execution, retention time.Duration) logItem {
	started := e.StartedAt.UTC()
	it := logItem{
		PK: e.Key.String(), SK: logSortKey(e),
		App: appAttr(e.App), Timer: e.Timer, Tenant: e.Tenant, ExecutionID: e.ExecutionID,
		ScheduledAt: ms(e.ScheduledAt), ShouldHaveRunAt: ms(e.ShouldHaveRunAt), StartedAt: ms(e.StartedAt),
		DurationMs: e.Duration.Milliseconds(), ExecutedBy: e.ExecutedBy, Attempt: e.Attempt,
		Outcome: string(e.Outcome), Error: e.Error, Output: e.Output, NextRun: ms(e.NextRun), GaveUp: e.GaveUp, Skipped: e.Skipped,
		Version: e.Version, Backfill: e.Backfill, ExpiresAt: started.Add(retention).Unix(),
		Summary: e.Summary, Counters: e.Counters, Warnings: e.Warnings,
	}
	it.Params, _ = timer.EncodeParams(e.Parameters) // values a JSON decode gave: they encode
	if e.Outcome.Failed() {
		it.ErrDay = errShardPK(appAttr(e.App), started.Format(time.DateOnly), e.ExecutionID)
	}
	return it
}

func (it logItem) execution() timer.Execution {
	return timer.Execution{
		Key: keyOf(it.App, it.Timer, it.Tenant), ExecutionID: it.ExecutionID,
		ScheduledAt: fromMs(it.ScheduledAt), ShouldHaveRunAt: fromMs(it.ShouldHaveRunAt), StartedAt: fromMs(it.StartedAt),
		Duration: time.Duration(it.DurationMs) * time.Millisecond, ExecutedBy: it.ExecutedBy, Attempt: it.Attempt,
		Outcome: timer.Outcome(it.Outcome), Error: it.Error, Output: it.Output, NextRun: fromMs(it.NextRun), GaveUp: it.GaveUp, Skipped: it.Skipped,
		Version: it.Version, Backfill: it.Backfill,
		Report:     timer.Report{Summary: it.Summary, Counters: it.Counters, Warnings: it.Warnings},
		Parameters: timer.DecodeParams(it.Params),
	}
}
