package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/timer"
	"github.com/sundialhq/sundial/internal/view"
)

// numberOfTries is named "failures in a row" and defined in the same words by timers list,
// docs/console.md and the API's description (the list said TRIES, the console "Tries" beside
// "Retries 0", and nothing said what either counted).
func TestFailuresInARowNamedAndDefined(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	in := timer.Instance{Key: timer.Key{Timer: "Hangs"}, Settings: timer.Settings{Schedule: "every 30s"}, Active: true, NumberOfTries: 9}
	require.NoError(t, printTimers(&out, []view.Timer{view.OfTimer(in)}))
	lines := strings.Split(out.String(), "\n")
	require.Contains(t, lines[0], "FAILURES IN A ROW")
	require.NotContains(t, lines[0], "TRIES")
	require.Contains(t, out.String(), "FAILURES IN A ROW: "+view.FailuresInARowMeans)
	oneLine := func(path string) string {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		return strings.Join(strings.Fields(string(b)), " ")
	}
	docs := oneLine("../../docs/console.md")
	require.Contains(t, docs, "**Failures in a row** (JSON `numberOfTries`, the CLI's `FAILURES IN A ROW`): "+view.FailuresInARowMeans)
	require.NotContains(t, docs, " tries,")
	require.Contains(t, oneLine("../../api/openapi.yaml"), "numberOfTries: {type: integer, description: \""+view.FailuresInARow+": "+view.FailuresInARowMeans)
}
