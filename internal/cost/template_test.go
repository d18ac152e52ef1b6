package cost

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial"
)

// The model's stack is the template's: each field follows its parameter, so a changed default
// or a deployed value reaches the plan with no copy in Go.
func TestStackOfTheTemplate(t *testing.T) {
	t.Parallel()
	s, err := stackOf(sundial.Template, map[string]string{"FetchTickMinutes": "5", "DueShards": "16", "LogRetentionDays": "90",
		"P1Concurrency": "9", "P4Concurrency": "7", "TimersWriteCapacityMax": "2000", "LogWriteCapacityMax": "700",
		"FetchReservedConcurrency": "1", "RecoveryReservedConcurrency": "0", "LogWriterReservedConcurrency": "3"})
	require.NoError(t, err)
	def := DefaultStack()
	require.Equal(t, Stack{FetchTick: 5 * time.Minute, DueShards: 16, LogRetentionDays: 90, MemoryMB: def.MemoryMB,
		Concurrency: [4]int{9, def.Concurrency[1], def.Concurrency[2], 7}, TimersWriteMax: 2000, LogWriteMax: 700,
		ReservedConcurrency: 4}, s)

	_, err = stackOf(sundial.Template, map[string]string{"DueShards": "65"})
	require.ErrorContains(t, err, `parameter DueShards="65": above the maximum 64`)
}
