package stack

import (
	"bytes"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

func TestCompact(t *testing.T) {
	t.Run("DropsFullLineCommentsOnly", func(t *testing.T) {
		in := "# top\nA:\n  # in a map\n  B: |\n    # content of B\n\n    text\n  # after B\n  C: !Sub >-\n    # content of C\n  D: 1 # trailing, kept\n  E:\n    - |\n      # content of E's item\n    # after the item\n"
		want := "A:\n  B: |\n    # content of B\n\n    text\n  C: !Sub >-\n    # content of C\n  D: 1 # trailing, kept\n  E:\n    - |\n      # content of E's item\n"
		require.Equal(t, want, string(compact([]byte(in))))
	})

	t.Run("KeepsABodyItCannotCompactSafely", func(t *testing.T) {
		in := "A: \"two\n  # lines\"\n"
		require.Equal(t, in, string(compact([]byte(in))))
	})

	t.Run("TheTemplateFitsInline", func(t *testing.T) {
		body, err := os.ReadFile(templatePath(t))
		require.NoError(t, err)
		out := compact(body)
		require.Less(t, len(out), len(body), "compacted")
		var before, after yaml.Node
		require.NoError(t, yaml.Unmarshal(body, &before))
		require.NoError(t, yaml.Unmarshal(out, &after))
		require.True(t, bytes.Contains(out, []byte("DashboardBody: !Sub |")), "block scalars stay")
	})

}
