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

// TestAppBoundaries is the table of the functions that translate the default app's two
// spellings: "" inside the program, DefaultApp outside it.
func TestAppBoundaries(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ outside, inside string }{
		{"default", ""}, {"", ""}, {"billing", "billing"}, {"Default", "Default"},
	} {
		require.Equal(t, c.inside, NormApp(c.outside), "NormApp(%q)", c.outside)
	}
	for _, c := range []struct{ inside, outside string }{{"", "default"}, {"billing", "billing"}} {
		require.Equal(t, c.outside, AppName(c.inside), "AppName(%q)", c.inside)
		require.Equal(t, c.outside, Key{App: c.inside}.AppName())
		require.Equal(t, c.outside, OneApp(c.inside))
		require.Equal(t, InstanceQuery{App: c.outside}, AppQuery(c.inside))
	}
	for _, c := range []struct{ in, app, name string }{
		{"Tick", "", "Tick"}, {"default:Tick", "", "Tick"}, {"billing:Tick", "billing", "Tick"}, {":Tick", "", "Tick"},
	} {
		app, name := ParseName(c.in)
		require.Equal(t, []string{c.app, c.name}, []string{app, name}, "ParseName(%q)", c.in)
	}
	// Selectors: "" every app, else one app as written outside.
	for _, c := range []struct {
		sel, app string
		selects  bool
	}{
		{"", "", true}, {"", "billing", true},
		{"default", "", true}, {"default", "billing", false},
		{"billing", "billing", true}, {"billing", "", false},
	} {
		require.Equal(t, c.selects, SelectsApp(c.sel, c.app), "SelectsApp(%q, %q)", c.sel, c.app)
	}
	for _, c := range []struct {
		sel, app string
		one      bool
	}{{"", "", false}, {"default", "", true}, {"billing", "billing", true}} {
		app, one := SelectedApp(c.sel)
		require.Equal(t, c.app, app, "SelectedApp(%q)", c.sel)
		require.Equal(t, c.one, one, "SelectedApp(%q)", c.sel)
	}
	// The default app's names and display: every key of it is the one spelled "".
	require.Equal(t, "Tick@acme", Key{Timer: "Tick", Tenant: "acme"}.String())
	require.Equal(t, "billing:Tick", Key{App: "billing", Timer: "Tick"}.Name())
}
