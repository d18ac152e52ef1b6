package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/manifest"
	"github.com/sundialhq/sundial/internal/schedule"
	"github.com/sundialhq/sundial/internal/timer"
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

// The README's backfill example (a day of Digest's "every 1m", 1,440 instants) must run as
// written; an example over the bound would be refused. Its range, for examples/timers.yaml's timer, is within the bound.
func TestReadmeBackfillExampleIsWithinTheBound(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	m := regexp.MustCompile(`sundial backfill (\w+) --from (\S+) --to (\S+)`).FindSubmatch(readme)
	require.NotNil(t, m, "the README has a backfill example")
	mf, err := manifest.Load("../../examples/timers.yaml")
	require.NoError(t, err)
	i := slices.IndexFunc(mf.Timers, func(tm manifest.Timer) bool { return tm.Name == string(m[1]) })
	require.GreaterOrEqual(t, i, 0, "the example's timer %s is in examples/timers.yaml", m[1])
	from, err := time.Parse(time.RFC3339, string(m[2]))
	require.NoError(t, err)
	to, err := time.Parse(time.RFC3339, string(m[3]))
	require.NoError(t, err)
	require.True(t, to.Before(time.Now()), "the range is in the past")
	s, err := schedule.ParseIn(mf.Timers[i].Schedule, mf.Timers[i].Timezone)
	require.NoError(t, err)
	at, err := timer.BackfillInstants(timer.Settings{Schedule: mf.Timers[i].Schedule, Timezone: mf.Timers[i].Timezone}, mf.Key(mf.Timers[i].Name), from, to)
	require.NoError(t, err)
	want, err := schedule.Instants(s, from, to, timer.MaxBackfillInstants)
	require.NoError(t, err)
	require.Equal(t, want, at)
	require.NotEmpty(t, at)
	require.LessOrEqual(t, len(at), 60, "a tour's example finishes in a minute or two")
}

// A documented command must work as written: an `up --manifest examples/timers.yaml --app-stack …`
// without --actions leaves the default app's timers calling actions nobody serves. Every
// `./bin/sundial up …` command the docs write out parses (each flag is up's), and one whose
// manifest calls ${SUNDIAL_ACTIONS} serves them with --actions.
func TestDocUpCommandsParseAndServeTheirActions(t *testing.T) {
	t.Parallel()
	cmdRe := regexp.MustCompile("`\\./bin/sundial up ([^`]+)`")
	docs := []string{"../../README.md", "../../examples/billing/README.md"}
	more, err := filepath.Glob("../../docs/*.md")
	require.NoError(t, err)
	found := 0
	for _, doc := range append(docs, more...) {
		text, err := os.ReadFile(doc)
		require.NoError(t, err)
		for _, m := range cmdRe.FindAllSubmatch(text, -1) {
			found++
			args := strings.Fields(string(m[1]))
			var errOut bytes.Buffer
			require.Equal(t, 0, run(context.Background(), append(append([]string{"up"}, args...), "-h"), io.Discard, &errOut),
				"%s: `sundial up %s`: %s", doc, m[1], errOut.String())
			if i := slices.Index(args, "--manifest"); i >= 0 && i+1 < len(args) {
				mf, err := os.ReadFile(filepath.Join("../..", args[i+1]))
				require.NoError(t, err, "%s: the manifest of `sundial up %s`", doc, m[1])
				if bytes.Contains(mf, []byte("${"+manifest.ActionsVar+"}")) {
					require.Contains(t, args, "--actions", "%s: `sundial up %s`: %s calls ${%s}: serve them with --actions", doc, m[1], args[i+1], manifest.ActionsVar)
				}
			}
		}
	}
	require.Positive(t, found, "the docs write out an up command")
}
