package sundial_test

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDesignLayoutCoversEveryPackage: docs/design.md's layout table names every Go package of
// the module (a directory with Go files), by its path or a file in it (`functions/{a,b}/main.go`
// names two), so that a newcomer finds each package there.
func TestDesignLayoutCoversEveryPackage(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("docs/design.md")
	require.NoError(t, err)
	section := regexp.MustCompile(`(?s)\n## Layout\n(.*?)\n## `).FindSubmatch(doc)
	require.NotNil(t, section, "docs/design.md has a ## Layout section")
	named := map[string]bool{}
	for _, line := range strings.Split(string(section[1]), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 3 {
			continue
		}
		for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(cells[1], -1) {
			for _, p := range expand(m[1]) {
				p = strings.TrimSuffix(p, "/")
				named[p] = true
				if strings.HasSuffix(p, ".go") {
					named[path.Dir(p)] = true
				}
			}
		}
	}
	var missing []string
	err = filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != "." && (strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_") || d.Name() == "testdata" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		dir := filepath.ToSlash(filepath.Dir(p))
		if strings.HasSuffix(p, ".go") && !named[dir] && !slices.Contains(missing, dir) {
			missing = append(missing, dir)
		}
		return nil
	})
	require.NoError(t, err)
	require.Empty(t, missing, "packages docs/design.md's layout table does not name")
}

// expand expands one {a,b} group of a path: functions/{a,b}/main.go is functions/a/main.go
// and functions/b/main.go.
func expand(p string) []string {
	open, close := strings.Index(p, "{"), strings.Index(p, "}")
	if open < 0 || close < open {
		return []string{p}
	}
	var out []string
	for _, alt := range strings.Split(p[open+1:close], ",") {
		out = append(out, expand(p[:open]+alt+p[close+1:])...)
	}
	return out
}
