package engine_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/engine"
	"github.com/sundialhq/sundial/internal/timer"
)

// An async execution's token names its app's instance, so its reports reach that instance.
func TestTokenApp(t *testing.T) {
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	for _, key := range []timer.Key{{App: "billing", Timer: "Cleanup", Tenant: "acme"}, {Timer: "Cleanup"}} {
		in := timer.Instance{Key: key, Settings: timer.Settings{Timeout: time.Minute}, ExecutionID: "e-1", Version: 3, IsRunningSince: now}
		tok, err := engine.ParseToken(engine.NewToken(in).String())
		require.NoError(t, err)
		require.Equal(t, key, tok.Key())
	}
	// A token naming the default app "default" is the default app's instance.
	tok := engine.NewToken(timer.Instance{Key: timer.Key{Timer: "Cleanup"}, Settings: timer.Settings{Timeout: time.Minute}, ExecutionID: "e-1", Version: 3, IsRunningSince: now})
	tok.App = timer.DefaultApp
	parsed, err := engine.ParseToken(tok.String())
	require.NoError(t, err)
	require.Equal(t, timer.Key{Timer: "Cleanup"}, parsed.Key())
}
