package message

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/timer"
)

// An app's key survives the message; the default app's message is the one written before
// apps existed (no app field), and such a message reads as the default app's.
func TestFiringApp(t *testing.T) {
	at := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	in := timer.Instance{Key: timer.Key{App: "billing", Timer: "Cleanup", Tenant: "acme"}, NextRun: at}
	body, err := Encode(ForInstance(in, ReasonSchedule))
	require.NoError(t, err)
	require.Contains(t, body, `"app":"billing"`)
	f, err := Decode(body)
	require.NoError(t, err)
	require.Equal(t, in.Key, f.Key())

	in.Key = timer.Key{Timer: "Cleanup", Tenant: "acme"}
	body, err = Encode(ForInstance(in, ReasonSchedule))
	require.NoError(t, err)
	require.NotContains(t, body, `"app"`, "the default app's message is unchanged")
	legacy := `{"v":1,"timer":"Cleanup","tenant":"acme","scheduledAt":"2026-11-25T10:00:00Z","dueAt":"2026-11-25T10:00:00Z","attempt":1,"reason":"schedule"}`
	f, err = Decode(legacy)
	require.NoError(t, err)
	require.Equal(t, timer.Key{Timer: "Cleanup", Tenant: "acme"}, f.Key())

	// A message naming the default app "default" reads as the same key (the one spelling
	// inside the program is "").
	f, err = Decode(strings.Replace(legacy, `"timer"`, `"app":"default","timer"`, 1))
	require.NoError(t, err)
	require.Equal(t, timer.Key{Timer: "Cleanup", Tenant: "acme"}, f.Key())
	require.Equal(t, "", f.App)
	// A firing built inside the program with the outside spelling is refused.
	require.ErrorIs(t, Firing{V: Version, App: timer.DefaultApp, Timer: "Cleanup"}.Validate(), ErrMalformed)

	_, err = Decode(strings.Replace(legacy, `"timer"`, `"app":"bad app","timer"`, 1))
	require.ErrorIs(t, err, ErrMalformed)
}
