package operators

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/console"
	"github.com/sundialhq/sundial/internal/errkind"
)

const good = `operators:
  - name: billing-ops
    accessKeyId: AKIDBILLINGOPS
    secretAccessKey: "s3cret"
    token: "billing-ops-console-token"
    policies:
      - {Version: "2012-10-17", Statement: [{Effect: Allow, Action: "execute-api:Invoke", Resource: "arn:aws:execute-api:*:*:*/*/GET/*"}]}
      - Version: "2012-10-17"
        Statement:
          - Effect: Allow
            Action: execute-api:Invoke
            Resource: "arn:aws:execute-api:*:*:*/*/POST/api/apps/billing/*"
  - name: viewer
    accessKeyId: AKIDVIEWER
    secretAccessKey: "v"
    policies:
      - {Version: "2012-10-17", Statement: [{Effect: Allow, Action: "execute-api:Invoke", Resource: "arn:aws:execute-api:*:*:*/*/GET/*"}]}
`

func write(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "operators.yaml")
	require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
	return p
}

// An operators file of the documented shape loads; the policies decide execute-api:Invoke on the
// route's ARN; tokens name their operator.
func TestLoadAndDecide(t *testing.T) {
	t.Parallel()
	f, err := Load(write(t, good))
	require.NoError(t, err)
	g, err := New(f, Admin{Name: "administrator", AccessKeyID: "AKIDADMIN", SecretAccessKey: "a"}, "us-east-1", "000000000000", "api1")
	require.NoError(t, err)
	require.NoError(t, g.Authorize("billing-ops", "GET", "/api/apps/shipping/timers"))
	require.NoError(t, g.Authorize("billing-ops", "POST", "/api/apps/billing/timers/Invoice/run-now"))
	err = g.Authorize("billing-ops", "POST", "/api/apps/shipping/timers/Label/run-now")
	var d *console.Denied
	require.True(t, errors.As(err, &d), "%v", err)
	require.Equal(t, "arn:aws:execute-api:us-east-1:000000000000:api1/$default/POST/api/apps/shipping/timers/Label/run-now", d.Resource)
	require.Error(t, g.Authorize("viewer", "PATCH", "/api/apps/billing/timers/Invoice"))
	// The gate decides by the operations table: a request that is no operation of it is
	// refused as no such route, even where the policies would allow its ARN.
	err = g.Authorize("billing-ops", "POST", "/api/apps/billing/timers/Invoice/explode")
	require.ErrorIs(t, err, errkind.NotFound)
	require.False(t, errors.As(err, &d), "not an IAM refusal: %v", err)
	name, ok := g.TokenOperator("billing-ops-console-token")
	require.True(t, ok)
	require.Equal(t, "billing-ops", name)
	_, ok = g.TokenOperator("")
	require.False(t, ok, "an operator without a token has no empty token")
	_, ok = g.TokenOperator("billing-ops-console-tokeN")
	require.False(t, ok)
}

// Every mistake in the file is refused with the operator and what to do.
func TestInvalidFiles(t *testing.T) {
	t.Parallel()
	pol := `policies: [{Version: "2012-10-17", Statement: [{Effect: Allow, Action: "execute-api:Invoke", Resource: "*"}]}]`
	for name, tc := range map[string]struct{ body, want string }{
		"Empty":        {"operators: []\n", "no operators listed"},
		"UnknownField": {"operators: [{name: a, accessKeyID: K, secretAccessKey: s, " + pol + "}]\n", "field accessKeyID not found"},
		"NoSecret":     {"operators: [{name: a, accessKeyId: K, " + pol + "}]\n", "operators[0] (a): accessKeyId and secretAccessKey are required"},
		"BadName":      {"operators: [{name: 'a b', accessKeyId: K, secretAccessKey: s, " + pol + "}]\n", "name must match"},
		"SameKey": {"operators: [{name: a, accessKeyId: K, secretAccessKey: s, " + pol + "}, {name: b, accessKeyId: K, secretAccessKey: t, " + pol + "}]\n",
			"operators[1] (b): accessKeyId K is another identity's"},
		"AdminKey":    {"operators: [{name: a, accessKeyId: AKIDADMIN, secretAccessKey: s, " + pol + "}]\n", "another identity's"},
		"ShortToken":  {"operators: [{name: a, accessKeyId: K, secretAccessKey: s, token: short, " + pol + "}]\n", "token must be at least 16 characters"},
		"NoPolicies":  {"operators: [{name: a, accessKeyId: K, secretAccessKey: s}]\n", "no policies"},
		"NoStatement": {"operators: [{name: a, accessKeyId: K, secretAccessKey: s, policies: [{Version: x}]}]\n", "no Statement"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f, err := Load(write(t, tc.body))
			if err == nil {
				_, err = New(f, Admin{AccessKeyID: "AKIDADMIN", SecretAccessKey: "x"}, "r", "a", "i")
			}
			require.ErrorContains(t, err, tc.want)
		})
	}
}
