package ops_test

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/sundialhq/sundial/internal/audit"
	"github.com/sundialhq/sundial/internal/ops"
)

// The table is well formed: names unique, a read is a GET and a change is not (the viewer
// policy is GET/*), every API operation needs execute-api:Invoke, every change names an
// audit action the writer accepts, and no two API rows share a method and route.
func TestTableWellFormed(t *testing.T) {
	t.Parallel()
	names, routes := map[string]bool{}, map[string]bool{}
	for _, o := range ops.Table {
		require.False(t, names[o.Name], "operation %s twice", o.Name)
		names[o.Name] = true
		require.NotEmpty(t, o.IAMAction, o.Name)
		if o.API() {
			require.True(t, strings.HasPrefix(o.Route, "/api/"), o.Name)
			require.Contains(t, ops.Methods, o.Method, o.Name)
			require.Equal(t, o.Read(), o.Method == "GET", "%s: a read is a GET and a change is not", o.Name)
			require.Equal(t, "execute-api:Invoke", o.IAMAction, o.Name)
			require.False(t, routes[o.Method+" "+o.Route], "%s %s twice", o.Method, o.Route)
			routes[o.Method+" "+o.Route] = true
		} else {
			require.Empty(t, o.Method, o.Name)
			require.False(t, o.Read(), "%s: an operation the API does not serve is a change", o.Name)
		}
		if !o.Read() {
			action := o.Audit
			if action == audit.CalendarEdit {
				action += "x"
			}
			require.NoError(t, audit.Validate(audit.Record{Who: "w", Action: action}), o.Name)
		}
	}
}

// Match finds a request's operation by method and route, {app} and {name} one segment each.
func TestMatch(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ method, path, want string }{
		{"GET", "/api/health", ops.OpHealth},
		{"GET", "/api/apps/billing/health", ops.OpAppHealth},
		{"POST", "/api/apps/billing/timers/Invoice@acme/run-now", ops.OpRunNow},
		{"PATCH", "/api/apps/billing/timers/Invoice", ops.OpEdit},
		{"GET", "/api/apps/billing/timers/Invoice", ops.OpTimer},
		{"POST", "/api/apps/billing/timers/Invoice/backfill/cancel", ops.OpBackfillCancel},
		{"POST", "/api/apps/billing/deactivate", ops.OpBulkDeactivate},
		{"DELETE", "/api/tenants/acme", ops.OpTenantRemove},
		{"PUT", "/api/apps/billing/calendars/biz", ops.OpCalendarEdit},
		{"POST", "/api/apps/billing/timers/Invoice/explode", ""},
		{"DELETE", "/api/apps/billing/timers/Invoice", ""},
		{"GET", "/api/apps//timers", ""},
		{"GET", "/api/tenants/acme/extra", ""},
	} {
		o, ok := ops.Match(c.method, c.path)
		require.Equal(t, c.want != "", ok, "%s %s", c.method, c.path)
		require.Equal(t, c.want, o.Name, "%s %s", c.method, c.path)
	}
}

// api/openapi.yaml documents exactly the table's API operations: every route and method,
// both ways.
func TestOpenAPIMatchesTable(t *testing.T) {
	t.Parallel()
	body, err := os.ReadFile("../../api/openapi.yaml")
	require.NoError(t, err)
	var doc struct {
		Paths map[string]map[string]any `yaml:"paths"`
	}
	require.NoError(t, yaml.Unmarshal(body, &doc))
	var table, documented []string
	for _, o := range ops.Table {
		if o.API() {
			table = append(table, o.Method+" "+o.Route)
		}
	}
	for path, methods := range doc.Paths {
		for m := range methods {
			if m != "parameters" {
				documented = append(documented, strings.ToUpper(m)+" "+path)
			}
		}
	}
	slices.Sort(table)
	slices.Sort(documented)
	for _, r := range table {
		require.Contains(t, documented, r, "api/openapi.yaml does not document the table's %s", r)
	}
	for _, r := range documented {
		require.Contains(t, table, r, "api/openapi.yaml documents %s, which is no operation of the table", r)
	}
}
