package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/local"
	"github.com/sundialhq/sundial/internal/audit"
)

// TestCLIActsAsTheOperatorOfItsCredentials (what the CLI may do is what its credentials'
// operator may do): on a local
// `sundial up --operators FILE`, the CLI with AWS credentials in its environment and no --api
// goes through the console's API signed with them. An operator's key acts as that operator
// (the audit names them; their policy refuses another app's timer and an environment-wide
// operation); a key FILE does not name, or an operator's key with a wrong secret, is refused;
// a command with no API route is refused rather than run as the administrator. Without
// credentials in the environment the CLI is the administrator, as before.
func TestCLIActsAsTheOperatorOfItsCredentials(t *testing.T) {
	if testing.Short() {
		t.Skip("runs sundial up against the emulator")
	}
	t.Parallel()
	actions := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	t.Cleanup(actions.Close)
	dir := t.TempDir()
	write := func(name, body string) string { return writeFileIn(t, dir, name, body) }
	nightly := write("timers.yaml", fmt.Sprintf("timers:\n  - {name: Nightly, schedule: \"02:00 Mon\", action: {http: {url: \"%s/ok\"}}}\n", actions.URL))
	billing := write("billing.yaml", fmt.Sprintf("app: billing\ntimers:\n  - {name: Invoice, schedule: \"every 1h\", action: {http: {url: \"%s/ok\"}}}\n", actions.URL))
	ops := write("operators.yaml", billingOps)
	printed := startPlatform(t, dir, nightly, []string{"SUNDIAL_CONSOLE_TOKEN="}, "--console", "127.0.0.1:0", "--operators", ops).Banner
	require.Contains(t, printed, "operators")
	st, ok := local.ReadState(filepath.Join(dir, local.DefaultStateFile))
	require.True(t, ok)

	as := func(key, secret string) []string {
		return []string{"AWS_ACCESS_KEY_ID=" + key, "AWS_SECRET_ACCESS_KEY=" + secret, "AWS_SESSION_TOKEN=", "AWS_PROFILE=",
			"AWS_REGION=us-east-1", "AWS_CONFIG_FILE=/dev/null", "AWS_SHARED_CREDENTIALS_FILE=/dev/null"}
	}
	administrator := as("", "") // no credentials in the environment: the platform's administrator
	operator := as("AKIDBILLINGOPS", "billing-secret")
	_, errOut, code := cliEnv(t, dir, administrator, "sync", billing)
	require.Equal(t, 0, code, errOut)
	trail := func(t *testing.T, args ...string) []string {
		out, errOut, code := cliEnv(t, dir, administrator, append([]string{"audit", "--json"}, args...)...)
		require.Equal(t, 0, code, errOut)
		recs := jsonLines[audit.Record](t, out)
		var got []string
		for _, r := range recs {
			got = append(got, r.Action+" "+r.Timer+" by "+r.Who)
		}
		return got
	}
	untouched := func(t *testing.T) {
		t.Helper()
		out, errOut, code := cliEnv(t, dir, administrator, "timers", "show", "Nightly", "--json")
		require.Equal(t, 0, code, errOut)
		require.Contains(t, out, `"active": true`, "what was refused was not done")
		require.Empty(t, trail(t, "--app", "default", "--timer", "Nightly"), "nor audited")
	}

	t.Run("AnOperatorsKeyActsAsThatOperator", func(t *testing.T) {
		out, errOut, code := cliEnv(t, dir, operator, "run-now", "--app", "billing", "Invoice")
		require.Equal(t, 0, code, errOut)
		require.Contains(t, out, "firing sent")
		require.Equal(t, []string{"run-now Invoice by billing-ops"}, trail(t, "--app", "billing", "--timer", "Invoice"), "the audit names the operator")
	})
	t.Run("OutsideTheirPolicyIsRefused", func(t *testing.T) {
		_, errOut, code := cliEnv(t, dir, operator, "deactivate", "Nightly")
		require.Equal(t, 1, code, errOut)
		require.Contains(t, errOut, "User: billing-ops is not authorized to perform: execute-api:Invoke on resource:")
		require.Contains(t, errOut, "/POST/api/apps/default/timers/Nightly/deactivate")
		_, errOut, code = cliEnv(t, dir, operator, "tenants", "add", "acme")
		require.Equal(t, 1, code, errOut)
		require.Contains(t, errOut, "User: billing-ops is not authorized to perform: execute-api:Invoke on resource:")
		require.Contains(t, errOut, "/POST/api/tenants")
		untouched(t)
	})
	t.Run("AnUnknownKeyOrAWrongSecretIsRefused", func(t *testing.T) {
		for _, c := range []struct {
			env  []string
			says string
		}{
			{as("AKIDNOONE", "whatever"), "The security token included in the request is invalid."},
			{as("AKIDBILLINGOPS", "guessed"), "The request signature we calculated does not match"},
		} {
			_, errOut, code := cliEnv(t, dir, c.env, "deactivate", "Nightly")
			require.Equal(t, 1, code, errOut)
			require.Contains(t, errOut, c.says)
			require.Contains(t, errOut, "hint: ")
		}
		untouched(t)
	})
	t.Run("ACommandWithNoAPIRouteDoesNotRunAsTheAdministrator", func(t *testing.T) {
		_, errOut, code := cliEnv(t, dir, operator, "sync", filepath.Join(dir, "timers.yaml"))
		require.Equal(t, 1, code, errOut)
		require.Contains(t, errOut, "(access key AKIDBILLINGOPS) are not the administrator's")
		require.Equal(t, []string{"sync  by " + cliActor()}, trail(t, "--app", "default"), "only up's publish")
	})
	// The administrator's own key in the environment goes through the API, as the
	// administrator; without credentials the CLI is the administrator on the tables.
	t.Run("TheAdministrator", func(t *testing.T) {
		_, errOut, code := cliEnv(t, dir, as(st.AccessKeyID, st.SecretAccessKey), "deactivate", "Nightly")
		require.Equal(t, 0, code, errOut)
		_, errOut, code = cliEnv(t, dir, administrator, "activate", "Nightly")
		require.Equal(t, 0, code, errOut)
		require.Equal(t, []string{"activate Nightly by " + cliActor(), "deactivate Nightly by administrator"}, trail(t, "--app", "default", "--timer", "Nightly"))
	})
	requireIAMClean(t, dir, st.Endpoint)
}
