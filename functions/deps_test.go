package functions_test

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// What a function must not link, by the short names of forbidden below. Each function links
// its own role (internal/role/<function>) and what that role uses; the rest stays out of its
// bootstrap: the fault injection of the chaos run, the wiring of every role at once
// (internal/app, which also reads stacks through CloudFormation), and the other roles'
// services.
var forbiddenFor = map[string][]string{
	"fetch":       {"chaos", "app", "cloudformation", "sns", "eventbridge", "streams", "admin", "manifest", "console", "auditwriter", "s3"},
	"processor":   {"chaos", "app", "cloudformation", "sns", "eventbridge", "streams", "admin", "manifest", "console", "auditwriter", "s3"},
	"recovery":    {"chaos", "app", "cloudformation", "streams", "admin", "manifest", "console", "s3"},
	"logwriter":   {"chaos", "app", "cloudformation", "streams", "admin", "manifest", "console", "s3"},
	"auditwriter": {"chaos", "app", "cloudformation", "sns", "eventbridge", "streams", "admin", "manifest", "console", "s3"},
	"api":         {"chaos", "app", "cloudformation", "sns", "eventbridge", "streams", "s3"},
	"publish":     {"chaos", "app", "cloudformation", "sns", "eventbridge", "streams", "console"},
	"orderpush":   {"chaos", "app", "cloudformation", "sns", "eventbridge", "streams", "admin", "manifest", "console", "auditwriter", "s3"},
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
