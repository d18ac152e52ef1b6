package audit

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/timer"
)

// Writer appends records to the trail: the audit writer function's DynamoDB chain
// (dynamo.AuditLog) or, for the functions whose roles may not write audit items, a client
// invoking that function (internal/role/audittrail.Client).
type Writer interface {
	// Add records r (its ID and At are set when empty).
	Add(ctx context.Context, r Record) error
}

// CalendarEdit begins the action of a calendar's edit: "calendar edit NAME".
const CalendarEdit = "calendar edit "

// Actions are the actions a record may have (a calendar's edit aside: CalendarEdit + name).
var Actions = []string{RunNow, Activate, Deactivate, Edit, Reset, TenantAdd, TenantRemove, AppRelease, DLQRedrive, Sync, Backfill, BackfillCancel,
	BulkActivate, BulkDeactivate, LoginLink, Publish, Unpublish, Wake, SetNextRun, Job, JobCancel, StateReset, Stop}

// Bounds of a record the writer accepts. Records are small (an action and its names); the
// bounds keep one far below DynamoDB's 400 KB item and a hostile caller from filling the
// trail with megabytes.
const (
	MaxWho    = 2048     // an IAM principal ARN is at most 2,048 characters
	MaxTimer  = 300      // Timer@tenant
	MaxReason = 1024     // a bulk note is at most 500
	MaxValues = 8 * 1024 // Before and After, as JSON, each
	MaxName   = 256      // the calendar of a "calendar edit"
)

// Validate refuses a record the trail should not hold, naming what is wrong: an unknown
// action, no who, an invalid app, a field over its bound, values that are not JSON.
func Validate(r Record) error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: audit record: %s", errkind.Invalid, fmt.Sprintf(format, a...))
	}
	if name, ok := strings.CutPrefix(r.Action, CalendarEdit); ok {
		if strings.TrimSpace(name) == "" || len(name) > MaxName {
			return bad("a calendar edit names its calendar (1..%d bytes), not %q", MaxName, name)
		}
	} else if !slices.Contains(Actions, r.Action) {
		return bad("unknown action %q (want one of %s, or %q + a calendar)", r.Action, strings.Join(Actions, ", "), CalendarEdit)
	}
	if strings.TrimSpace(r.Who) == "" {
		return bad("who is empty: every record names who acted")
	}
	for _, f := range []struct {
		name, v string
		max     int
	}{{"who", r.Who, MaxWho}, {"timer", r.Timer, MaxTimer}, {"reason", r.Reason, MaxReason}, {"id", r.ID, 64}} {
		if len(f.v) > f.max {
			return bad("%s is %d bytes, over %d", f.name, len(f.v), f.max)
		}
		if !utf8.ValidString(f.v) {
			return bad("%s is not UTF-8", f.name)
		}
	}
	if err := timer.ValidateApp(r.App); err != nil {
		return bad("%v", err)
	}
	for name, v := range map[string]map[string]any{"before": r.Before, "after": r.After} {
		b, err := json.Marshal(v)
		if err != nil {
			return bad("%s is not JSON: %v", name, err)
		}
		if len(b) > MaxValues {
			return bad("%s is %d bytes of JSON, over %d", name, len(b), MaxValues)
		}
	}
	return nil
}
