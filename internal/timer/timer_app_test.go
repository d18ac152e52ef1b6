package timer_test

import (
	"go/ast"
	"go/parser"
	"go/token"
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
	var bad []string
	eachSource(t, func(rel string, src []byte) {
		if slices.ContainsFunc(appBoundaries, func(b string) bool { return rel == b || strings.HasSuffix(b, "/") && strings.HasPrefix(rel, b) }) {
			return
		}
		for i, line := range strings.Split(string(src), "\n") {
			if code, _, _ := strings.Cut(line, "//"); normalising.MatchString(code) {
				bad = append(bad, rel+":"+strconv.Itoa(i+1)+": "+strings.TrimSpace(line))
			}
		}
	})
	require.Empty(t, bad, "the default app is \"\" inside the program: translate only at a boundary (appBoundaries)")
}

// eachSource calls fn with every non-test Go file of the module (its path from the module's
// root, with slashes), but for hidden, testdata and node_modules directories; it fails the
// test if it finds few (the walk did not start at the root).
func eachSource(t *testing.T, fn func(rel string, src []byte)) {
	t.Helper()
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	files := 0
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
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		fn(rel, src)
		return nil
	})
	require.NoError(t, err)
	require.Greater(t, files, 100, "the walk did not start at the module's root")
}

// defaultLiteralAllowed are the places outside internal/timer whose string literal "default"
// is not the default app, by file and the line's code: each with its reason. (A struct tag
// such as params.go's `json:"default"` is one literal, the whole tag, and comments are not
// code: neither is seen.)
var defaultLiteralAllowed = map[string]string{
	// EventBridge names every account's default event bus "default"; not an app.
	`infra/iam/events.go: bus = "default"`: "EventBridge's default bus",
	// The spread seed hashes the default app's outside name; schedule cannot import timer
	// (timer imports schedule). TestSeedSpellsTheDefaultAppAsTimerDoes keeps it equal to
	// timer.DefaultApp.
	`internal/schedule/spread.go: const defaultApp = "default"`: "schedule's copy of timer.DefaultApp",
}

// TestDefaultAppLiteralOnlyInTimer: outside internal/timer, the default app's outside name is
// written timer.DefaultApp, never the literal "default": no non-test Go file compares with
// (==, !=, a switch case, strings.EqualFold) or assigns (=, :=, var, const, a field of a
// composite literal, a return value, an argument) the literal, but for defaultLiteralAllowed.
func TestDefaultAppLiteralOnlyInTimer(t *testing.T) {
	t.Parallel()
	var bad []string
	seen := map[string]bool{}
	eachSource(t, func(rel string, src []byte) {
		if strings.HasPrefix(rel, "internal/timer/") {
			return
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, rel, src, parser.SkipObjectResolution)
		require.NoError(t, err)
		lines := strings.Split(string(src), "\n")
		for _, lit := range defaultLiteralUses(f) {
			line := fset.Position(lit.Pos()).Line
			key := rel + ": " + strings.TrimSpace(lines[line-1])
			if _, ok := defaultLiteralAllowed[key]; ok {
				seen[key] = true
				continue
			}
			bad = append(bad, rel+":"+strconv.Itoa(line)+": "+strings.TrimSpace(lines[line-1]))
		}
	})
	require.Empty(t, bad, "write the default app's outside name as timer.DefaultApp (or translate with timer.AppName / timer.NormApp), "+
		"or add the place to defaultLiteralAllowed with its reason")
	for key := range defaultLiteralAllowed {
		require.True(t, seen[key], "defaultLiteralAllowed: %s is no longer in the code: remove it", key)
	}
}

// defaultLiteralUses lists f's string literals "default" that are compared or assigned.
func defaultLiteralUses(f *ast.File) []*ast.BasicLit {
	isDefault := func(e ast.Expr) (*ast.BasicLit, bool) {
		lit, ok := ast.Unparen(e).(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING {
			return nil, false
		}
		v, err := strconv.Unquote(lit.Value)
		return lit, err == nil && v == "default"
	}
	var out []*ast.BasicLit
	add := func(es ...ast.Expr) {
		for _, e := range es {
			if lit, ok := isDefault(e); ok {
				out = append(out, lit)
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BinaryExpr:
			if n.Op == token.EQL || n.Op == token.NEQ {
				add(n.X, n.Y)
			}
		case *ast.CaseClause:
			add(n.List...)
		case *ast.AssignStmt:
			add(n.Rhs...)
		case *ast.ValueSpec:
			add(n.Values...)
		case *ast.KeyValueExpr:
			add(n.Value)
		case *ast.CompositeLit:
			for _, e := range n.Elts {
				if _, keyed := e.(*ast.KeyValueExpr); !keyed {
					add(e)
				}
			}
		case *ast.ReturnStmt:
			add(n.Results...)
		case *ast.CallExpr:
			add(n.Args...)
		}
		return true
	})
	return out
}
