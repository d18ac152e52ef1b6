package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/view"
)

// The sample of `sundial plan examples/timers.yaml` in docs/cost.md is the program's output:
// every line it shows (it elides some with "…") is a line of the output, in order, so the
// sample cannot go stale when the cost model changes (it showed 4.0 write units a firing and
// $12.93 a month after the model had moved to 3.65 and $12.31).
func TestDocsPlanSample(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/cost.md")
	require.NoError(t, err)
	m := regexp.MustCompile("(?s)```\n\\$ sundial (plan examples/timers\\.yaml[^\n]*)\n(.*?)```").FindSubmatch(doc)
	require.NotNil(t, m, "docs/cost.md has the sample of sundial plan examples/timers.yaml")
	args := strings.Fields(string(m[1]))
	args[1] = "../../" + args[1]
	var out, errOut bytes.Buffer
	require.Equal(t, 0, run(context.Background(), args, &out, &errOut), errOut.String())
	got := strings.Split(strings.ReplaceAll(out.String(), "../../examples/", "examples/"), "\n")
	at := 0
	for _, want := range strings.Split(strings.TrimSuffix(string(m[2]), "\n"), "\n") {
		if strings.TrimSpace(want) == "…" {
			continue
		}
		i := slices.Index(got[at:], want)
		require.GreaterOrEqual(t, i, 0, "docs/cost.md's plan sample has a line the program does not print (after line %d):\n%s\n\nthe program prints:\n%s",
			at, want, out.String())
		at += i + 1
	}
}

// docs/console.md lists the keys of a log entry in JSON (`sundial logs --json`); they are
// the keys the program writes, no more and no fewer.
func TestDocsLogEntryKeys(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/console.md")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?s)A log entry in JSON has (.*?)\. `).FindSubmatch(doc)
	require.NotNil(t, m, "docs/console.md lists a log entry's JSON keys")
	// The keys are the back-quoted words outside parentheses (those hold the outcomes).
	listed := regexp.MustCompile(`\([^)]*\)`).ReplaceAll(m[1], nil)
	var documented []string
	for _, k := range regexp.MustCompile("`([A-Za-z]+)`").FindAllSubmatch(listed, -1) {
		documented = append(documented, string(k[1]))
	}
	b, err := json.Marshal(view.Execution{})
	require.NoError(t, err)
	var obj map[string]any
	require.NoError(t, json.Unmarshal(b, &obj))
	var written []string
	for k := range obj {
		written = append(written, k)
	}
	slices.Sort(documented)
	slices.Sort(written)
	require.Equal(t, written, documented, "docs/console.md's list of a log entry's keys")
}
