package manifest

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/timer"
)

// A timer without async must have a timeout the processor can wait for; the default fits.
func TestValidateForProcessorWait(t *testing.T) {
	t.Parallel()
	m, err := Parse(strings.NewReader(`timers:
  - {name: Default, schedule: "every 1m", action: {http: {url: "http://127.0.0.1:9/x"}}}
  - {name: Fits, schedule: "every 1m", timeout: 14m50s, action: {http: {url: "http://127.0.0.1:9/x"}}}
  - {name: OutSystems, schedule: "every 1m", timeout: 20m, action: {http: {url: "http://127.0.0.1:9/x"}}}
  - {name: Archive, schedule: "every 1h", timeout: 2h, async: true, action: {http: {url: "http://127.0.0.1:9/x"}}}
`))
	require.NoError(t, err, "Validate knows no stack")

	err = m.ValidateFor(Defaults{ProcessorWait: timer.MaxSyncTimeout(900 * time.Second)})
	require.ErrorIs(t, err, errkind.Invalid)
	require.EqualError(t, err, `invalid input: timers[2] "OutSystems": timeout: timeout 20m exceeds what a processor can wait (14m50s): set async: true, or a timeout up to 14m50s`)
	require.Equal(t, err.Error(), m.ValidateFor(Defaults{}).Error(), "no ProcessorWait: the default stack's")

	err = m.ValidateFor(Defaults{ProcessorWait: timer.MaxSyncTimeout(60 * time.Second)})
	require.ErrorContains(t, err, `timers[1] "Fits": timeout: timeout 14m50s exceeds what a processor can wait (50s)`)
	require.NotContains(t, err.Error(), `"Default"`, "the default timeout is what the processor can wait")
	require.NotContains(t, err.Error(), `"Archive"`, "an async timer may run longer")

	require.Equal(t, 14*time.Minute+50*time.Second, timer.DefaultTimeout)
	require.Equal(t, timer.DefaultTimeout, m.Timers[0].Settings(Defaults{}).Timeout)
	require.Equal(t, 50*time.Second, m.Timers[0].Settings(Defaults{ProcessorWait: 50 * time.Second}).Timeout)
	require.Equal(t, 20*time.Second, timer.MaxSyncTimeout(30*time.Second))
	require.Equal(t, 7*time.Second, timer.MaxSyncTimeout(14*time.Second), "a short processor keeps half for itself")
}
