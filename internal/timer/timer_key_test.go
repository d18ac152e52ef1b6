package timer

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestKeyStringParseRoundTrip(t *testing.T) {
	cases := []struct {
		key  Key
		text string
	}{
		{Key{Timer: "Cleanup"}, "Cleanup"},
		{Key{Timer: "Cleanup", Tenant: "acme"}, "Cleanup@acme"},
		{Key{App: "billing", Timer: "Cleanup"}, "billing:Cleanup"},
		{Key{App: "billing", Timer: "Cleanup", Tenant: "acme"}, "billing:Cleanup@acme"},
		{Key{App: "b-1_x", Timer: "Shard-0", Tenant: "t_2"}, "b-1_x:Shard-0@t_2"},
	}
	for _, c := range cases {
		require.Equal(t, c.text, c.key.String())
		got, err := ParseKey(c.text)
		require.NoError(t, err, c.text)
		require.Equal(t, c.key, got)
	}
	// The default app written out parses to the legacy form's key; inside a key it is "" only.
	require.ErrorContains(t, Key{App: DefaultApp, Timer: "Cleanup", Tenant: "acme"}.Validate(), `the default app is ""`)
	got, err := ParseKey("default:Cleanup@acme")
	require.NoError(t, err)
	require.Equal(t, Key{Timer: "Cleanup", Tenant: "acme"}, got)
	require.Equal(t, DefaultApp, got.AppName())
	require.Equal(t, "billing", Key{App: "billing"}.AppName())

	for _, bad := range []string{"", ":Cleanup", "bill ing:Cleanup", "a:b:c", "billing:", "billing:Cleanup@", "billing:Cleanup@a@b", "billing:Cl/eanup"} {
		_, err := ParseKey(bad)
		require.Error(t, err, bad)
	}
	require.Error(t, Key{App: "a b", Timer: "X"}.Validate())
	require.NoError(t, Key{App: "billing", Timer: "X"}.Validate())
}

func FuzzParseKey(f *testing.F) {
	for _, s := range []string{"Cleanup", "Cleanup@acme", "billing:Cleanup", "billing:Cleanup@acme", "default:X", ":X", "a:b:c@d", "x@"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, err := ParseKey(s)
		if err != nil {
			return
		}
		require.NoError(t, k.Validate())
		require.NotEqual(t, DefaultApp, k.App, "ParseKey returns the default app as \"\"")
		again, err := ParseKey(k.String())
		require.NoError(t, err)
		require.Equal(t, k, again)
		if !strings.HasPrefix(s, DefaultApp+":") {
			require.Equal(t, s, k.String())
		}
	})
}
