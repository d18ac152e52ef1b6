package ops_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/local"
	"github.com/sundialhq/sundial/internal/admin"
	"github.com/sundialhq/sundial/internal/audit"
	"github.com/sundialhq/sundial/internal/console"
	"github.com/sundialhq/sundial/internal/testenv"
	"github.com/sundialhq/sundial/internal/timer"
)

// Only the deployed role's permissions count: POST /api/tenants through the API function's handler, under its own role, on the local platform whose
// endpoint checks every call against that role: the tenant is registered, its instances of
// the multi-tenant timers are created (conditional UpdateItems: the role may not PutItem a
// timer item), and the add is audited once, through the audit writer. Before, the role's
// PutItem was refused after the tenant was registered: a tenant listed with no instance,
// and no audit record.
func TestTenantAddUnderTheAPIRole(t *testing.T) {
	testenv.Integration(t)
	ctx := context.Background()
	dir := t.TempDir()
	manifest := filepath.Join(dir, "timers.yaml")
	require.NoError(t, os.WriteFile(manifest, []byte("timers:\n  - {name: PerTenant, schedule: \"02:00\", multiTenant: true, action: {http: {url: \"http://127.0.0.1:9/x\"}}}\n"), 0o644))
	var out, logs testenv.SyncBuffer
	p, err := local.Up(ctx, local.Options{Template: "../../template.yaml", Manifest: manifest, FunctionOptions: local.FunctionOptions{Tick: time.Second}, Out: &out, Log: &logs})
	require.NoError(t, err, "log:\n%s", logs.String())
	t.Cleanup(func() { require.NoError(t, p.Stop()) })

	// The API function's handler as Lambda runs it behind API Gateway (AWS_IAM: the caller's
	// ARN in the request context), on its role's AWS configuration (p.APIAWS) and environment.
	srv, err := console.New(console.Options{Service: console.NewService(p.API, nil, [4]int{}), Auth: console.AuthIAM})
	require.NoError(t, err)
	h := console.LambdaHandler(srv.Handler())
	ann := "arn:aws:iam::000000000000:user/ann"
	ev := events.APIGatewayV2HTTPRequest{RawPath: "/api/tenants", Body: `{"name":"acme"}`,
		Headers: map[string]string{"content-type": "application/json"},
		RequestContext: events.APIGatewayV2HTTPRequestContext{HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "POST", Path: "/api/tenants"},
			Authorizer: &events.APIGatewayV2HTTPRequestContextAuthorizerDescription{IAM: &events.APIGatewayV2HTTPRequestContextAuthorizerIAMDescription{UserARN: ann}}}}
	res, err := h(ctx, ev)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode, "%s\nIAM refusals: %+v", res.Body, p.IAM())
	var rep admin.SyncReport
	require.NoError(t, json.Unmarshal([]byte(res.Body), &rep))
	require.Equal(t, []string{"acme"}, rep.TenantsAdded)
	require.Equal(t, []string{"PerTenant@acme"}, rep.Created)

	in, err := p.App.Store.Get(ctx, timer.Key{Timer: "PerTenant", Tenant: "acme"})
	require.NoError(t, err, "the tenant's instance exists")
	require.True(t, in.Active)
	tenants, err := p.App.Admin.Tenants(ctx)
	require.NoError(t, err)
	require.Len(t, tenants, 1)
	require.Equal(t, "acme", tenants[0].Name)
	require.Equal(t, timer.TenantAPI, tenants[0].Source)

	recs, err := p.App.AuditDirect().List(ctx, audit.Query{Who: ann})
	require.NoError(t, err)
	require.Len(t, recs, 1)
	require.Equal(t, audit.TenantAdd, recs[0].Action)
	require.Equal(t, "acme", recs[0].After["tenant"])
	require.Empty(t, p.IAM().Denied, "no call of the API function's role was refused")
	require.NotZero(t, p.IAM().Calls["ApiFunctionRole"], "its calls were checked")
}
