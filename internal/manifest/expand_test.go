package manifest

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// ${SUNDIAL_ACTIONS} in an http URL or a property value is the environment's SUNDIAL_ACTIONS,
// else DefaultActions, wherever a manifest is parsed (check, sync, up, the publish function);
// other text is left as written.
func TestExpandActions(t *testing.T) {
	const doc = `timers:
  - name: A
    schedule: every 1m
    action: {http: {url: "http://${SUNDIAL_ACTIONS}/ok?x=${OTHER}"}}
    properties: {endpoint: "http://${SUNDIAL_ACTIONS}/orders", plain: "$SUNDIAL_ACTIONS"}
`
	t.Setenv(ActionsVar, "")
	m, err := Parse(strings.NewReader(doc))
	require.NoError(t, err)
	require.Equal(t, "http://127.0.0.1:9000/ok?x=${OTHER}", m.Timers[0].Action.HTTP.URL)
	require.Equal(t, "http://127.0.0.1:9000/orders", m.Timers[0].Properties["endpoint"])
	require.Equal(t, "$SUNDIAL_ACTIONS", m.Timers[0].Properties["plain"])

	t.Setenv(ActionsVar, "localhost:9123")
	m, err = Parse(strings.NewReader(doc))
	require.NoError(t, err)
	require.Equal(t, "http://localhost:9123/ok?x=${OTHER}", m.Timers[0].Action.HTTP.URL)
	require.Equal(t, "http://localhost:9123/orders", m.Timers[0].Properties["endpoint"])
}
