package console_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/timer"
)

// The pages read errors= and failing= as the API does (on, true, 1; before, only the form's
// "on": /logs?errors=1 showed every execution), refuse other values, and the console answers
// /favicon.ico (it was a 404 in every browser's console).
func TestPageFlagsAndFavicon(t *testing.T) {
	t.Parallel()
	f := setup(t)
	key := f.create(t, "Flaky", "every 1h", nil)
	now := time.Now().UTC().Truncate(time.Millisecond)
	f.logEntry(t, key, "e-bad", now.Add(-2*time.Second), timer.OutcomeError, "boom")
	f.logEntry(t, key, "e-good", now.Add(-time.Second), timer.OutcomeSuccess, "")
	b := f.login(t)
	for _, v := range []string{"on", "1", "true"} {
		status, page, _ := b.send(t, "GET", "/logs?errors="+v+"&timer="+keyPath(key), nil, "")
		require.Equal(t, http.StatusOK, status, page)
		require.Contains(t, page, `class="o o-error"`, "errors=%s", v)
		require.NotContains(t, page, `class="o o-success"`, "errors=%s shows errors only", v)
	}
	status, page, _ := b.send(t, "GET", "/logs?errors=0&timer="+keyPath(key), nil, "")
	require.Equal(t, http.StatusOK, status, page)
	require.Contains(t, page, `class="o o-success"`)
	status, page, _ = b.send(t, "GET", "/logs?errors=maybe", nil, "")
	require.Equal(t, http.StatusBadRequest, status)
	require.Contains(t, page, "errors must be true or false")
	status, page, _ = b.send(t, "GET", "/timers?failing=1&name="+key.Timer, nil, "")
	require.Equal(t, http.StatusOK, status, page)
	status, _, _ = b.send(t, "GET", "/timers?failing=yes", nil, "")
	require.Equal(t, http.StatusBadRequest, status)

	status, icon, hdr := f.do(t, "GET", "/favicon.ico", "", "")
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "image/svg+xml", hdr.Get("Content-Type"))
	require.True(t, strings.HasPrefix(icon, "<svg"), icon)
}
