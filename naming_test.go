package sundial

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// testFileExtraNames are the test files' names that need no source file of the same name:
// a package's shared test setup (main, helpers, fakes, export), its end-to-end and contract
// tests, benchmarks, fuzz and property tests, and the checks of the docs, the dependency
// graph, the template (template.yaml) and of this rule itself.
var testFileExtraNames = []string{
	"main", "helpers", "fakes", "export",
	"e2e", "contract", "bench", "fuzz", "property",
	"docs", "deps", "template", "naming",
}

// testFileBuildSuffixes are stripped from a name before it is matched: the file is the
// package's internal test, or one built only on some systems.
var testFileBuildSuffixes = []string{"_internal", "_unix", "_linux", "_darwin", "_windows", "_other"}

// Test files are named after their subject, not the bug that added them. A test file
// <name>_test.go (less a suffix of testFileBuildSuffixes) is allowed when <name>
//   - is, or begins with followed by "_", the name of a source file in its directory
//     (bare.go: bare_test.go, bare_aspect_test.go), its directory's name (the package's
//     tests as a whole), or one of testFileExtraNames;
//   - or ends in "_e2e" (an end-to-end test of a feature);
//
// and a directory without source files (tests only) may name its tests freely.
func TestTestFilesNamedAfterTheirSubject(t *testing.T) {
	var bad []string
	count := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		name := d.Name()
		if path != "." && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") ||
			name == "testdata" || name == "vendor" || name == "node_modules") {
			return filepath.SkipDir
		}
		entries, err := os.ReadDir(path)
		if err != nil {
			return err
		}
		subjects := map[string]bool{}
		for _, n := range testFileExtraNames {
			subjects[n] = true
		}
		if path != "." {
			subjects[name] = true
		}
		var tests []string
		sources := 0
		for _, e := range entries {
			n := e.Name()
			switch {
			case e.IsDir() || !strings.HasSuffix(n, ".go"):
			case strings.HasSuffix(n, "_test.go"):
				tests = append(tests, n)
			default:
				sources++
				stem := strings.TrimSuffix(n, ".go")
				subjects[stem] = true
				subjects[stripBuildSuffixes(stem)] = true
			}
		}
		count += len(tests)
		if sources == 0 {
			return nil
		}
		for _, n := range tests {
			if !testFileNamedAfterSubject(stripBuildSuffixes(strings.TrimSuffix(n, "_test.go")), subjects) {
				bad = append(bad, filepath.Join(path, n))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if count == 0 {
		t.Fatal("found no test files: the walk did not start at the module's root")
	}
	sort.Strings(bad)
	for _, f := range bad {
		t.Errorf("%s: a test file is named after the source file it tests (<source>_test.go or "+
			"<source>_<aspect>_test.go), the package, an end-to-end feature (<feature>_e2e_test.go) "+
			"or one of %v", f, testFileExtraNames)
	}
}

func stripBuildSuffixes(stem string) string {
	for {
		trimmed := stem
		for _, s := range testFileBuildSuffixes {
			trimmed = strings.TrimSuffix(trimmed, s)
		}
		if trimmed == stem {
			return stem
		}
		stem = trimmed
	}
}

func testFileNamedAfterSubject(stem string, subjects map[string]bool) bool {
	if strings.HasSuffix(stem, "_e2e") {
		return true
	}
	for p := stem; ; {
		if subjects[p] {
			return true
		}
		i := strings.LastIndex(p, "_")
		if i <= 0 {
			return false
		}
		p = p[:i]
	}
}
