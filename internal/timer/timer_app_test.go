package timer_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// appBoundaries are the files where an app name crosses into or out of the program, the
// only ones that may read the default app's outside spelling (timer.DefaultApp) back into
// the program's ("") or compare the outside spelling: the translation itself, the manifest
// parser, the wire codecs (message, token, API views), the stored-item codec, the
// CloudFormation properties, the HTTP API and console, the CLI, and the local platform's
// readers of logs and events. Everywhere else an app is "" for the default app and compared
// as it is.
var appBoundaries = []string{
	"internal/timer/timer.go", // NormApp, AppName, ParseName, Key.Validate
	"internal/timer/page.go",  // selectors: OneApp, AppQuery, SelectsApp, SelectedApp
	"internal/manifest/manifest.go",
	"internal/message/message.go",
	"internal/engine/token.go",
	"internal/view/view.go",
	"internal/dynamo/item.go", // appAttr, appOf, keyOf
	"internal/publish/apps.go",
	"internal/console/",
	"cmd/sundial/",
	"infra/local/",
}

// normalising matches reading or comparing the outside spelling: NormApp, a comparison with
// DefaultApp or with an AppName, and the removed Key.Norm and Key.IsDefaultApp.
var normalising = regexp.MustCompile(`\bNormApp\(|[!=]=\s*(timer\.)?DefaultApp\b|\b(timer\.)?DefaultApp\s*[!=]=|AppName\([^()]*\)\s*[!=]=|[!=]=\s*[\w.]*AppName\(|\.Norm\(\)|\bIsDefaultApp\(`)

// TestDefaultAppNormalisedOnlyAtBoundaries: the default app is spelled one way inside the
// program, so only the boundaries translate (appBoundaries).
func TestDefaultAppNormalisedOnlyAtBoundaries(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	var bad []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if n := d.Name(); rel != "." && (strings.HasPrefix(n, ".") || n == "testdata" || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") ||
			slices.ContainsFunc(appBoundaries, func(b string) bool { return rel == b || strings.HasSuffix(b, "/") && strings.HasPrefix(rel, b) }) {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(src), "\n") {
			if code, _, _ := strings.Cut(line, "//"); normalising.MatchString(code) {
				bad = append(bad, rel+":"+strconv.Itoa(i+1)+": "+strings.TrimSpace(line))
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.Empty(t, bad, "the default app is \"\" inside the program: translate only at a boundary (appBoundaries)")
}
