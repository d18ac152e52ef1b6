package console_test

import (
	"context"
	"net/http"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/audit"
	"github.com/sundialhq/sundial/internal/timer"
)

// The environment's operations through the API: an app released from its stack, tenants
// added (recorded with source api) and removed, each audited; an unknown app or tenant is a
// 404, a bad name a 400.
func TestEnvironmentOperations(t *testing.T) {
	t.Parallel()
	f := setup(t)
	app := f.prefix + "owned"
	_, _, err := f.app.Admin.ClaimApp(context.Background(), app, "arn:aws:cloudformation:us-east-1:1:stack/gone/x", "Timers")
	require.NoError(t, err)
	status, body, _ := f.do(t, "POST", "/api/apps/"+app+"/release", f.token, "")
	require.Equal(t, http.StatusOK, status, body)
	held := decode[timer.AppOwner](t, body)
	require.Equal(t, "arn:aws:cloudformation:us-east-1:1:stack/gone/x", held.Owner)
	status, _, _ = f.do(t, "POST", "/api/apps/"+app+"/release", f.token, "")
	require.Equal(t, http.StatusNotFound, status, "released already")

	tenant := f.prefix + "-tenant"
	status, body, _ = f.do(t, "POST", "/api/tenants", f.token, `{"name":"`+tenant+`"}`)
	require.Equal(t, http.StatusOK, status, body)
	var added *timer.Tenant
	for _, tn := range slices.Concat(pagesOf[timer.Tenant](t, f, "/api/tenants?limit=1000")...) {
		if tn.Name == tenant {
			added = &tn
		}
	}
	require.NotNil(t, added, body)
	require.Equal(t, timer.TenantAPI, added.Source, "a tenant added through the API is recorded as the API's, not the CLI's")
	status, body, _ = f.do(t, "DELETE", "/api/tenants/"+tenant, f.token, "")
	require.Equal(t, http.StatusOK, status, body)
	status, _, _ = f.do(t, "DELETE", "/api/tenants/"+tenant, f.token, "")
	require.Equal(t, http.StatusNotFound, status)
	status, _, _ = f.do(t, "POST", "/api/tenants", f.token, `{"name":"a b"}`)
	require.Equal(t, http.StatusBadRequest, status)

	status, body, _ = f.do(t, "GET", "/api/audit?who=api&limit=1000", f.token, "")
	require.Equal(t, http.StatusOK, status)
	seen := map[string]bool{}
	for _, r := range decode[audit.Page](t, body).Items {
		if r.App == app || r.After["tenant"] == tenant {
			seen[r.Action] = true
		}
	}
	require.Equal(t, map[string]bool{"app-release": true, "tenant-add": true, "tenant-remove": true}, seen)
}
