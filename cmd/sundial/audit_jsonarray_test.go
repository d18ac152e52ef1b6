package main

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/audit"
)

// TestJSONArrayAsWriteJSON: a listing printed a page at a time is the same text as the whole
// array printed at once (what scripts and tests parse), empty included.
func TestJSONArrayAsWriteJSON(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	for _, recs := range [][]audit.Record{
		{},
		{{ID: "a", At: at, Who: "x<y>", Action: "run-now", After: map[string]any{"n": 1}}},
		{{ID: "a", At: at, Action: "edit"}, {ID: "b", At: at, Action: "reset", Before: map[string]any{"schedule": "every 1h"}}},
	} {
		var whole, streamed bytes.Buffer
		require.NoError(t, writeJSON(&whole, recs))
		arr := &jsonArray{w: &streamed}
		for _, r := range recs {
			require.NoError(t, arr.add(r))
		}
		require.NoError(t, arr.close())
		require.Equal(t, whole.String(), streamed.String())
	}
}
