// Package audit is the trail of operators' actions: every operation of internal/ops (Run Now,
// activate, deactivate, edit, reset, bulk, calendar edit, backfill, tenant add or remove, app
// release, DLQ redrive, sync, publish, the client's wake and next run) is recorded once, with
// when, who (the IAM principal's ARN on AWS, the operator's name locally), what, on which
// app and timer, the values before and after an edit, and an optional reason. Records are
// appended to one hash chain (chain.go), never changed: one role alone may put audit items,
// the audit writer function's (template.yaml, AuditWriterFunction; the API and recovery
// functions invoke it, internal/auditwriter), and it validates what it appends (Validate); a
// change or deletion made anyway is named by Check (`sundial audit verify`), and records
// expire after AuditRetentionDays (default 400).
package audit

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/timer"
)

// Actions recorded.
const (
	RunNow       = "run-now"
	Activate     = "activate"
	Deactivate   = "deactivate"
	Edit         = "edit"
	Reset        = "reset"
	TenantAdd    = "tenant-add"
	TenantRemove = "tenant-remove"
	AppRelease   = "app-release"
	DLQRedrive   = "dlq-redrive"
	Sync         = "sync"
	// Backfill and BackfillCancel: `sundial backfill` and its cancel (the range in After).
	Backfill       = "backfill"
	BackfillCancel = "backfill-cancel"
	// BulkActivate and BulkDeactivate: an app's selected timers (the selection, the count
	// and, for a pause, its end in After; the note as the reason), one record per action.
	BulkActivate   = "bulk-activate"
	BulkDeactivate = "bulk-deactivate"
	// LoginLink: a console login link minted (POST /api/login-links).
	LoginLink = "login-link"
	// Publish and Unpublish: a stack's Custom::SundialPublish or Custom::SundialTimers
	// published an app's timers, or its Delete deactivated them.
	Publish   = "publish"
	Unpublish = "unpublish"
	// Wake and SetNextRun: the public client's (internal/ops).
	Wake       = "wake"
	SetNextRun = "set-next-run"
	// Job: a job (internal/jobs) ended, recorded by the platform; After has its kind, params and progress.
	Job = "job"
	// StateReset: an operator removed a timer's state (the state before in Before).
	StateReset = "state-reset"
	// Stop: an operator stopped a timer's running execution (its id in After).
	Stop = "stop"
	// JobCancel: an operator cancelled a job (internal/jobs; the job's id in After).
	JobCancel = "job-cancel"
)

// Record is one operator action.
type Record struct {
	ID     string         `json:"id"`
	At     time.Time      `json:"at"`
	Who    string         `json:"who"`
	Action string         `json:"action"`
	App    string         `json:"app,omitempty"`
	Timer  string         `json:"timer,omitempty"` // Timer or Timer@tenant of App
	Before map[string]any `json:"before,omitempty"`
	After  map[string]any `json:"after,omitempty"`
	Reason string         `json:"reason,omitempty"`
}

// ForKey fills the record's app and timer from an instance's key.
func (r Record) ForKey(k timer.Key) Record {
	r.App, r.Timer = k.AppName(), k.Timer
	if k.Tenant != "" {
		r.Timer += "@" + k.Tenant
	}
	return r
}

// Query selects records, newest first; zero values match every record.
type Query struct {
	App, Timer, Who string
	Since           time.Time // zero: DefaultDays back
	Limit           int       // 0: DefaultLimit
	// Cursor is the previous page's Next ("": the newest): the records older than that
	// page's last. It is opaque (CursorOf).
	Cursor string
}

// Page is a page of records, newest first, and the cursor of the next ("" after the last).
type Page struct {
	Items []Record `json:"items"`
	Next  string   `json:"next"`
}

// CursorOf is the cursor of the records older than r (Query.Cursor).
func CursorOf(r Record) string {
	return base64.RawURLEncoding.EncodeToString([]byte(r.At.UTC().Format(time.RFC3339Nano) + " " + r.ID))
}

// ParseCursor is the time and ID of the last record of the page a cursor follows.
func ParseCursor(c string) (time.Time, string, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	at, id, ok := strings.Cut(string(b), " ")
	var t time.Time
	if err == nil && ok && id != "" {
		t, err = time.Parse(time.RFC3339Nano, at)
	}
	if err != nil || !ok || id == "" {
		return time.Time{}, "", fmt.Errorf("%w: cursor %q is not an audit cursor: pass the next of the previous page", errkind.Invalid, c)
	}
	return t.UTC(), id, nil
}

// DefaultDays is how far back a query without Since looks; DefaultLimit and MaxLimit bound
// how many records it returns.
const (
	DefaultDays  = 31
	DefaultLimit = 100
	MaxLimit     = 1000
)

// Validate refuses a query no record could match, naming what is wrong.
func (q Query) Validate() error {
	if q.Limit < 0 || q.Limit > MaxLimit {
		return fmt.Errorf("%w: limit must be in 1..%d", errkind.Invalid, MaxLimit)
	}
	if len(q.Timer) > 300 || len(q.Who) > 2048 {
		return fmt.Errorf("%w: the timer and who filters are too long", errkind.Invalid)
	}
	if q.Cursor != "" {
		if _, _, err := ParseCursor(q.Cursor); err != nil {
			return err
		}
	}
	return timer.ValidateApp(q.App)
}

// Match reports whether r passes q's filters (not its time bound).
func (q Query) Match(r Record) bool {
	return (q.App == "" || r.App == q.App) && (q.Timer == "" || r.Timer == q.Timer) && (q.Who == "" || r.Who == q.Who)
}

// Log keeps the trail.
type Log interface {
	Writer
	Lister
}

// Lister reads the trail.
type Lister interface {
	// List returns the records q selects, newest first.
	List(ctx context.Context, q Query) ([]Record, error)
}

// Split is a Log whose records are appended by one Writer (the audit writer function,
// invoked) and read by another (the tables, with the caller's own role).
type Split struct {
	Writer
	Lister
}

// Fill sets a record's ID and time when missing.
func Fill(r Record, now time.Time) Record {
	if r.ID == "" {
		r.ID = rand.Text()[:16]
	}
	if r.At.IsZero() {
		r.At = now.UTC()
	}
	return r
}
