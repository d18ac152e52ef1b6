package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/view"
)

// The last column of `sundial logs`: a failure's error, else the start of the answer.
func TestLogsErrorOrOutput(t *testing.T) {
	t.Parallel()
	require.Equal(t, "http 500: boom", errorOrOutput(view.Execution{Error: "http 500: boom", Output: "ignored"}))
	require.Equal(t, `{"sent":3}`, errorOrOutput(view.Execution{Output: `{"sent":3}`}))
	require.Empty(t, errorOrOutput(view.Execution{}))
	long := errorOrOutput(view.Execution{Output: strings.Repeat("é", 200)})
	require.Equal(t, strings.Repeat("é", 50)+"…", long, "cut at 100 bytes on a character boundary")
}
