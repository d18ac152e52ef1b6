package console_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/timer"
	"github.com/sundialhq/sundial/internal/view"
)

// The console names numberOfTries "failures in a row" in the list and on the timer's page,
// with the definition the CLI and the docs use; Retries says it counts per firing.
func TestFailuresInARowNamedAndDefined(t *testing.T) {
	t.Parallel()
	f := setup(t)
	key := f.create(t, "Hangs", "every 30s", func(in *timer.Instance) { in.MaxRetries, in.NumberOfTries = 0, 9 })
	b := f.login(t)
	status, page, _ := b.send(t, "GET", "/timers?name="+key.Timer, nil, "")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, page, `<th class="n" title="`+view.FailuresInARowMeans+`">failures in a row</th>`)
	require.NotContains(t, page, ">tries<")
	status, page, _ = b.send(t, "GET", "/timers/"+keyPath(key), nil, "")
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, page, `<dt>Failures in a row</dt><dd id="failures">9 <span class="muted">(`+view.FailuresInARowMeans+`)</span>`)
	require.Contains(t, page, "<dt>Retries</dt><dd>0, 1s apart <span class=\"muted\">(of each firing, after its first attempt)</span>")
	require.NotContains(t, page, "<dt>Tries</dt>")
}
