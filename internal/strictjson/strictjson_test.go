package strictjson

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDecode(t *testing.T) {
	t.Parallel()
	type body struct {
		Name  string `json:"name"`
		Count int    `json:"count,omitempty"`
		Skip  string `json:"-"`
	}
	var b body
	require.NoError(t, Decode([]byte(`{"name":"a","count":2}`), &b))
	require.Equal(t, body{Name: "a", Count: 2}, b)
	for raw, want := range map[string]string{
		`{"name":"a","name":"b"}`: `field "name" given twice`,
		`{"Name":"a"}`:            `unknown field "Name" (fields are name, count, case-sensitive)`,
		`{"Skip":"a"}`:            `unknown field "Skip"`,
		`{"name":"a"} {}`:         "unexpected data after the JSON object",
		`["name"]`:                "want a JSON object",
		``:                        "want a JSON object: EOF",
		`{"count":"x"}`:           "cannot unmarshal string",
	} {
		require.ErrorContains(t, Decode([]byte(raw), &body{}), want, raw)
	}
}
