package functions_test

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	sundial "github.com/sundialhq/sundial"
	"github.com/sundialhq/sundial/infra/sam"
)

// What a function must not link, by the short names of forbidden below. Each function links
// its own role (internal/role/<function>) and what that role uses; the rest stays out of its
// bootstrap: the fault injection of the chaos run, the wiring of every role at once
// (internal/app, which also reads stacks through CloudFormation), and the other roles'
// services.
var forbiddenFor = map[string][]string{
	"fetch":       {"chaos", "app", "cloudformation", "sns", "eventbridge", "streams", "admin", "manifest", "console", "auditwriter", "s3", "lambda"},
	"processor":   {"chaos", "app", "cloudformation", "sns", "eventbridge", "streams", "admin", "manifest", "console", "auditwriter", "s3"},
	"recovery":    {"chaos", "app", "cloudformation", "streams", "admin", "manifest", "console", "s3"},
	"logwriter":   {"chaos", "app", "cloudformation", "streams", "admin", "manifest", "console", "s3"},
	"auditwriter": {"chaos", "app", "cloudformation", "sns", "eventbridge", "streams", "admin", "manifest", "console", "s3", "lambda"},
	"api":         {"chaos", "app", "cloudformation", "sns", "eventbridge", "streams", "s3"},
	"publish":     {"chaos", "app", "cloudformation", "sns", "eventbridge", "streams", "console"},
	"orderpush":   {"chaos", "app", "cloudformation", "sns", "eventbridge", "streams", "admin", "manifest", "console", "auditwriter", "s3", "lambda", "sqs"},
}

// forbidden are the packages behind each short name.
var forbidden = map[string][]string{
	"chaos":          {"github.com/sundialhq/sundial/internal/chaos"},
	"app":            {"github.com/sundialhq/sundial/internal/app", "github.com/sundialhq/sundial/infra/stack"},
	"cloudformation": {"github.com/aws/aws-sdk-go-v2/service/cloudformation"},
	"sns":            {"github.com/aws/aws-sdk-go-v2/service/sns"},
	"eventbridge":    {"github.com/aws/aws-sdk-go-v2/service/eventbridge"},
	"streams":        {"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"},
	"s3":             {"github.com/aws/aws-sdk-go-v2/service/s3"},
	"lambda":         {"github.com/aws/aws-sdk-go-v2/service/lambda"},
	"sqs":            {"github.com/aws/aws-sdk-go-v2/service/sqs"},
	"admin":          {"github.com/sundialhq/sundial/internal/admin"},
	"manifest":       {"github.com/sundialhq/sundial/internal/manifest"},
	"console":        {"github.com/sundialhq/sundial/internal/console"},
	"auditwriter":    {"github.com/sundialhq/sundial/internal/auditwriter"},
}

// deps lists the packages pkg links, built as the Makefile builds the bootstraps.
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-tags", "lambda.norpc", pkg)
	cmd.Env = append(cmd.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=arm64")
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok {
		t.Fatalf("go list -deps %s: %v\n%s", pkg, err, ee.Stderr)
	}
	require.NoError(t, err)
	return strings.Fields(string(out))
}

// Each function links only what its role uses: go list -deps of its package holds none of the
// packages forbidden to it. The chaos run's bootstrap is the control: it links the chaos
// injector, so the check sees a link when there is one.
func TestFunctionsLinkOnlyTheirRole(t *testing.T) {
	t.Parallel()
	dirs, err := os.ReadDir(".")
	require.NoError(t, err)
	for _, d := range dirs {
		if d.IsDir() && d.Name() != "internal" {
			require.Contains(t, forbiddenFor, d.Name(), "functions/%s: say what it must not link", d.Name())
		}
	}
	for fn, names := range forbiddenFor {
		t.Run(fn, func(t *testing.T) {
			t.Parallel()
			linked := deps(t, "./"+fn)
			require.Contains(t, linked, "github.com/sundialhq/sundial/functions/"+fn)
			for _, name := range names {
				for _, pkg := range forbidden[name] {
					require.False(t, slices.Contains(linked, pkg), "functions/%s links %s (%s): a function links only its own role", fn, pkg, name)
				}
			}
		})
	}
	t.Run("chaos-bootstrap", func(t *testing.T) {
		t.Parallel()
		require.Contains(t, deps(t, "../infra/chaosrun/bootstrap"), forbidden["chaos"][0])
	})
}

// credentialChain are the service clients aws-sdk-go-v2/config links for the default
// credential chain (IAM Identity Center, web identity and assume-role, console sign-in): every
// function that loads its AWS configuration links them, and none calls them itself.
var credentialChain = []string{"signin", "sso", "ssooidc", "sts"}

// iamClients maps an IAM action's service prefix to the SDK client that calls it.
var iamClients = map[string]string{"events": "eventbridge", "execute-api": ""}

// unusedClients are the service clients a function links but its policy does not let it call,
// each with its cause; the test fails when an entry no longer links, so the list only
// shrinks. None today: the audit and log writers linked SQS while role.Base held the priority
// queues for every role (internal/role/queued now adds them for the roles that send).
var unusedClients = map[string][]string{}

// Each function links only the service clients its IAM policy in template.yaml lets it call
// (and the credential chain's): a client it links but may not call is code its role does not
// use. The policy is the template's, so a function given a new client must be given the
// permission that uses it.
func TestFunctionsLinkOnlyTheClientsTheirPolicyAllows(t *testing.T) {
	t.Parallel()
	tpl, err := sam.ParseYAML(sundial.Template)
	require.NoError(t, err)
	seen := 0
	for name, r := range tpl.Resources {
		if r.Type != "AWS::Serverless::Function" || !strings.HasSuffix(name, "Function") {
			continue
		}
		fn := strings.ToLower(strings.TrimSuffix(name, "Function"))
		if _, err := os.Stat(fn); err != nil {
			continue // not a Go function of this directory (none today)
		}
		seen++
		allowed := map[string]bool{}
		for _, c := range credentialChain {
			allowed[c] = true
		}
		for _, a := range policyActions(r.Properties["Policies"]) {
			prefix, _, ok := strings.Cut(a, ":")
			require.True(t, ok, "%s: action %q has no service prefix", name, a)
			client, mapped := iamClients[prefix]
			if !mapped {
				client = prefix
			}
			allowed[client] = true
		}
		t.Run(fn, func(t *testing.T) {
			t.Parallel()
			linked := map[string]bool{}
			for _, pkg := range deps(t, "./"+fn) {
				if c, ok := strings.CutPrefix(pkg, "github.com/aws/aws-sdk-go-v2/service/"); ok && !strings.Contains(c, "/") && c != "internal" {
					linked[c] = true
				}
			}
			for _, c := range unusedClients[fn] {
				require.True(t, linked[c], "functions/%s no longer links %s: remove it from unusedClients", fn, c)
				delete(linked, c)
			}
			for c := range linked {
				require.True(t, allowed[c], "functions/%s links the %s client, which its policy (%s in template.yaml) does not let it call: a function links only what its role uses", fn, c, name)
			}
		})
	}
	require.Equal(t, len(forbiddenFor), seen, "every function of template.yaml is checked")
}

// policyActions are the IAM actions named anywhere in a function's Policies (the Action of
// each statement, under !If too).
func policyActions(v any) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if k == "Action" {
				switch a := x.(type) {
				case string:
					out = append(out, a)
				case []any:
					for _, e := range a {
						if s, ok := e.(string); ok {
							out = append(out, s)
						}
					}
				}
				continue
			}
			out = append(out, policyActions(x)...)
		}
	case []any:
		for _, x := range v {
			out = append(out, policyActions(x)...)
		}
	}
	return out
}
