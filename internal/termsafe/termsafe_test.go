package termsafe_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/termsafe"
)

// attack is an action error body that, printed raw, sets the window title (OSC), rings the
// bell, returns the cursor to the line start and paints a fake green success over it.
const attack = "boom\x1b]0;pwned\x07\r\x1b[32mOK all timers succeeded\x1b[0m\u009b2J\u202egnp.exe"

func TestString(t *testing.T) {
	t.Parallel()
	got := termsafe.String(attack + "\nnext\tline")
	require.Equal(t, `boom\u001b]0;pwned\u0007\u000d\u001b[32mOK all timers succeeded\u001b[0m\u009b2J\u202egnp.exe\u000anext\u0009line`, got)
	require.NotContains(t, got, "\x1b")
	require.Equal(t, "plain ünïcode ✓", termsafe.String("plain ünïcode ✓"), "printable text is untouched")
	require.Equal(t, `bad\xff byte`, termsafe.String("bad\xff byte"))
}

func TestText(t *testing.T) {
	t.Parallel()
	require.Equal(t, "a\tb\nc\\u000dd", termsafe.Text("a\tb\nc\rd"), "layout kept, CR escaped")
}

func TestWriter(t *testing.T) {
	t.Parallel()

	t.Run("EscapesWhatPassesThrough", func(t *testing.T) {
		t.Parallel()
		var buf bytes.Buffer
		w := termsafe.NewWriter(&buf)
		n, err := w.Write([]byte("error: " + attack + "\n"))
		require.NoError(t, err)
		require.Equal(t, len("error: "+attack+"\n"), n)
		require.NotContains(t, buf.String(), "\x1b")
		require.NotContains(t, buf.String(), "\r")
		require.NotContains(t, buf.String(), "\u009b")
		require.True(t, bytes.HasSuffix(buf.Bytes(), []byte("\n")))
	})

	t.Run("RuneSplitAcrossWritesIsNotMangled", func(t *testing.T) {
		t.Parallel()
		var buf bytes.Buffer
		w := termsafe.NewWriter(&buf)
		s := []byte("é\u009b✓")
		for i := range s {
			_, err := w.Write(s[i : i+1])
			require.NoError(t, err)
		}
		require.Equal(t, `é\u009b✓`, buf.String())
	})

	t.Run("JSONOutputStaysValidJSON", func(t *testing.T) {
		t.Parallel()
		var buf bytes.Buffer
		require.NoError(t, json.NewEncoder(termsafe.NewWriter(&buf)).Encode(map[string]string{"error": attack + "\x7f"}))
		var back map[string]string
		require.NoError(t, json.Unmarshal(buf.Bytes(), &back))
		require.Equal(t, attack+"\x7f", back["error"], "the escapes are JSON's own")
		require.NotContains(t, buf.String(), "\u009b")
	})
}
