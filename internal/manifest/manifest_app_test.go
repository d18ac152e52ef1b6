package manifest

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/timer"
)

func TestManifestApp(t *testing.T) {
	t.Parallel()

	m, err := Parse(strings.NewReader(good))
	require.NoError(t, err)
	require.Equal(t, "", m.App)
	require.Equal(t, timer.DefaultApp, m.AppName())
	require.Equal(t, timer.Key{Timer: "Tick"}, m.Expand(m.Timers[0], nil, Defaults{})[0].Key)

	m, err = Parse(strings.NewReader("app: billing\ntenants: [acme]\n" + good))
	require.NoError(t, err)
	require.Equal(t, "billing", m.AppName())
	ds := m.Expand(m.Timers[0], nil, Defaults{})
	require.Equal(t, timer.Key{App: "billing", Timer: "Tick"}, ds[0].Key)
	require.Equal(t, "billing:Tick", ds[0].Key.String())
	require.Equal(t, timer.Key{App: "billing", Timer: "Tick"}, m.Key("Tick"))

	// "default" written out is the default app.
	m, err = Parse(strings.NewReader("app: default\n" + good))
	require.NoError(t, err)
	require.Equal(t, timer.Key{Timer: "Tick"}, m.Expand(m.Timers[0], nil, Defaults{})[0].Key)
	require.Equal(t, "", m.App, "the program's spelling")
	require.Equal(t, timer.DefaultApp, m.WrittenApp(), "as the file wrote it")
	require.Equal(t, timer.DefaultApp, m.AppName())

	for _, bad := range []string{"bill ing", "billing:x", "a/b", strings.Repeat("a", 129)} {
		_, err := Parse(strings.NewReader("app: \"" + bad + "\"\n" + good))
		require.Error(t, err, bad)
		require.True(t, errors.Is(err, errkind.Invalid))
		require.Contains(t, err.Error(), "app: ")
		require.Contains(t, err.Error(), "[A-Za-z0-9_-]{1,128}")
	}
	_, err = Parse(strings.NewReader("app: [x]\n" + good))
	require.Error(t, err)
}
