package ops

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/sundialhq/sundial/internal/audit"
)

// Operation is one row of the table: an operator action or a read.
type Operation struct {
	// Name is the operation's name (unique).
	Name string
	// Method and Route are its HTTP method and API route ("" when the API does not serve
	// it: the client's, the publish function's, `sundial sync`'s, the platform's).
	Method, Route string
	// IAMAction is the IAM action a caller needs: execute-api:Invoke on the route's ARN
	// (InvokeARN) for an API route; for the others, what the caller's own role needs.
	IAMAction string
	// Audit is the audit record's action ("": a read, not recorded); a calendar's edit
	// records audit.CalendarEdit + its name.
	Audit string
}

// Read reports whether the operation only reads (a GET, not recorded).
func (o Operation) Read() bool { return o.Audit == "" }

// API reports whether the API serves the operation.
func (o Operation) API() bool { return o.Route != "" }

// Operation names. The API's are also the console's handler names (console.apiHandlers).
const (
	OpHealth          = "health"
	OpAppHealth       = "app-health"
	OpTimers          = "timers"
	OpAppTimers       = "app-timers"
	OpTimer           = "timer"
	OpEdit            = "edit"
	OpRunNow          = "run-now"
	OpActivate        = "activate"
	OpDeactivate      = "deactivate"
	OpBulkActivate    = "bulk-activate"
	OpBulkDeactivate  = "bulk-deactivate"
	OpLogs            = "logs"
	OpAppLogs         = "app-logs"
	OpLogEntry        = "log-entry"
	OpAudit           = "audit"
	OpAppAudit        = "app-audit"
	OpTenants         = "tenants"
	OpTenantAdd       = "tenant-add"
	OpTenantRemove    = "tenant-remove"
	OpAppRelease      = "app-release"
	OpDLQ             = "dlq"
	OpDLQRedrive      = "dlq-redrive"
	OpPreview         = "schedule-preview"
	OpLoginLink       = "login-link"
	OpCalendars       = "calendars"
	OpAppCalendars    = "app-calendars"
	OpCalendar        = "calendar"
	OpCalendarEdit    = "calendar-edit"
	OpBackfillStatus  = "backfill-status"
	OpBackfillStart   = "backfill-start"
	OpBackfillCancel  = "backfill-cancel"
	OpSync            = "sync"
	OpPublish         = "publish"
	OpUnpublish       = "unpublish"
	OpWake            = "wake"
	OpSetNextRun      = "set-next-run"
	OpPauseEnded      = "pause-ended"
	OpAutoPause       = "auto-pause"
	OpJobs            = "jobs"
	OpAppJobs         = "app-jobs"
	OpJob             = "job"
	OpAppJob          = "app-job"
	OpJobCancel       = "job-cancel"
	OpAppJobCancel    = "app-job-cancel"
	OpJobEnded        = "job-ended"
	OpAlerts          = "alerts"
	OpAppAlerts       = "app-alerts"
	OpBackfills       = "backfills"
	OpAppBackfills    = "app-backfills"
	OpState           = "state"
	OpStateReset      = "state-reset"
	OpStop            = "stop"
	OpResources       = "resources"
	invoke            = "execute-api:Invoke"
	timersTableWrites = "dynamodb:UpdateItem on the timers table (and the audit trail's append)"
)

// Table is every operation. Every route that reads or acts on one app has the app in its
// path (/api/apps/{app}/...), so that an IAM policy on execute-api:Invoke scopes a person to
// apps (arn:aws:execute-api:*:*:*/*/POST/api/apps/billing/*); a read is a GET and a change
// is not, so that a policy on GET/* is read-only (template.yaml's ServiceCenterViewerPolicy).
var Table = []Operation{
	// Every app's, for who may read them all.
	{OpHealth, "GET", "/api/health", invoke, ""},
	{OpTimers, "GET", "/api/timers", invoke, ""},
	{OpLogs, "GET", "/api/logs", invoke, ""},
	{OpAudit, "GET", "/api/audit", invoke, ""},
	{OpCalendars, "GET", "/api/calendars", invoke, ""},
	{OpTenants, "GET", "/api/tenants", invoke, ""},
	{OpDLQ, "GET", "/api/dlq", invoke, ""},
	{OpPreview, "GET", "/api/schedule/preview", invoke, ""},
	{OpJobs, "GET", "/api/jobs", invoke, ""},
	{OpJob, "GET", "/api/jobs/{id}", invoke, ""},
	{OpAlerts, "GET", "/api/alerts", invoke, ""},
	{OpBackfills, "GET", "/api/backfills", invoke, ""},
	{OpResources, "GET", "/api/resources", invoke, ""},
	// One app's.
	{OpAppHealth, "GET", "/api/apps/{app}/health", invoke, ""},
	{OpAppTimers, "GET", "/api/apps/{app}/timers", invoke, ""},
	{OpTimer, "GET", "/api/apps/{app}/timers/{name}", invoke, ""},
	{OpAppLogs, "GET", "/api/apps/{app}/logs", invoke, ""},
	{OpLogEntry, "GET", "/api/apps/{app}/logs/entry", invoke, ""},
	{OpAppAudit, "GET", "/api/apps/{app}/audit", invoke, ""},
	{OpAppCalendars, "GET", "/api/apps/{app}/calendars", invoke, ""},
	{OpCalendar, "GET", "/api/apps/{app}/calendars/{name}", invoke, ""},
	{OpBackfillStatus, "GET", "/api/apps/{app}/timers/{name}/backfill", invoke, ""},
	{OpAppJobs, "GET", "/api/apps/{app}/jobs", invoke, ""},
	{OpAppJob, "GET", "/api/apps/{app}/jobs/{id}", invoke, ""},
	{OpAppAlerts, "GET", "/api/apps/{app}/alerts", invoke, ""},
	{OpAppBackfills, "GET", "/api/apps/{app}/backfills", invoke, ""},
	{OpState, "GET", "/api/apps/{app}/timers/{name}/state", invoke, ""},
	// One app's changes.
	{OpEdit, "PATCH", "/api/apps/{app}/timers/{name}", invoke, audit.Edit},
	{OpRunNow, "POST", "/api/apps/{app}/timers/{name}/run-now", invoke, audit.RunNow},
	{OpActivate, "POST", "/api/apps/{app}/timers/{name}/activate", invoke, audit.Activate},
	{OpDeactivate, "POST", "/api/apps/{app}/timers/{name}/deactivate", invoke, audit.Deactivate},
	{OpStop, "POST", "/api/apps/{app}/timers/{name}/stop", invoke, audit.Stop},
	{OpBulkActivate, "POST", "/api/apps/{app}/activate", invoke, audit.BulkActivate},
	{OpBulkDeactivate, "POST", "/api/apps/{app}/deactivate", invoke, audit.BulkDeactivate},
	{OpCalendarEdit, "PUT", "/api/apps/{app}/calendars/{name}", invoke, audit.CalendarEdit},
	{OpBackfillStart, "POST", "/api/apps/{app}/timers/{name}/backfill", invoke, audit.Backfill},
	{OpBackfillCancel, "POST", "/api/apps/{app}/timers/{name}/backfill/cancel", invoke, audit.BackfillCancel},
	{OpAppRelease, "POST", "/api/apps/{app}/release", invoke, audit.AppRelease},
	{OpAppJobCancel, "POST", "/api/apps/{app}/jobs/{id}/cancel", invoke, audit.JobCancel},
	{OpStateReset, "POST", "/api/apps/{app}/timers/{name}/state/reset", invoke, audit.StateReset},
	// Environment-wide changes.
	{OpTenantAdd, "POST", "/api/tenants", invoke, audit.TenantAdd},
	{OpTenantRemove, "DELETE", "/api/tenants/{name}", invoke, audit.TenantRemove},
	{OpDLQRedrive, "POST", "/api/dlq/redrive", invoke, audit.DLQRedrive},
	{OpJobCancel, "POST", "/api/jobs/{id}/cancel", invoke, audit.JobCancel},
	// The local console's bearer token only (refused to every other caller).
	{OpLoginLink, "POST", "/api/login-links", invoke, audit.LoginLink},
	// Not served by the API: the caller's own role decides.
	{OpSync, "", "", "the tables' writes (the operator's credentials: sundial sync)", audit.Sync},
	{OpPublish, "", "", "lambda:InvokeFunction on the publish function (CloudFormation, the stack's role)", audit.Publish},
	{OpUnpublish, "", "", "lambda:InvokeFunction on the publish function (CloudFormation, the stack's role)", audit.Unpublish},
	{OpWake, "", "", timersTableWrites, audit.Wake},
	{OpSetNextRun, "", "", timersTableWrites, audit.SetNextRun},
	{OpPauseEnded, "", "", "the recovery function's role", audit.Activate},
	{OpAutoPause, "", "", "the log writer function's role", audit.Deactivate},
	// A job's end (internal/jobs), recorded by the platform whoever worked it (the API's
	// request or recovery's sweep); the operator's start or cancel is its own record.
	{OpJobEnded, "", "", "the API's or the recovery function's role", audit.Job},
}

// Lookup is the operation named name.
func Lookup(name string) (Operation, bool) {
	for _, o := range Table {
		if o.Name == name {
			return o, true
		}
	}
	return Operation{}, false
}

// MustLookup is Lookup of a name the code itself gives (a missing one is a bug).
func MustLookup(name string) Operation {
	o, ok := Lookup(name)
	if !ok {
		panic("ops: no operation " + name)
	}
	return o
}

// Match is the API operation a request's method and path (unescaped, as url.URL.Path) stand
// for; ok is false when no route has them. {app} and {name} match one path segment.
func Match(method, path string) (Operation, bool) {
	for _, o := range Table {
		if o.API() && o.Method == method && matchRoute(o.Route, path) {
			return o, true
		}
	}
	return Operation{}, false
}

func matchRoute(route, path string) bool {
	rs, ps := strings.Split(route, "/"), strings.Split(path, "/")
	if len(rs) != len(ps) {
		return false
	}
	for i, r := range rs {
		if strings.HasPrefix(r, "{") && strings.HasSuffix(r, "}") {
			if ps[i] == "" {
				return false
			}
			continue
		}
		if r != ps[i] {
			return false
		}
	}
	return true
}

// InvokeARN is the execute-api ARN that API Gateway authorizes a request to an IAM-auth API
// with (execute-api:Invoke): arn:aws:execute-api:REGION:ACCOUNT:APIID/STAGE/METHOD/PATH, the
// path without its leading slash.
func InvokeARN(region, account, apiID, stage, method, path string) string {
	return fmt.Sprintf("arn:aws:execute-api:%s:%s:%s/%s/%s/%s", region, account, apiID, stage, method, strings.TrimPrefix(path, "/"))
}

// Methods are the HTTP methods the table's routes use.
var Methods = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}
