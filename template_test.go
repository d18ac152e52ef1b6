package sundial

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// The limit on a timer's timeout comes from the processor function's own Timeout, and the
// functions learn it from the same parameter: no copy that can drift.
func TestProcessorTimeout(t *testing.T) {
	t.Parallel()
	d, err := ProcessorTimeout(Template, nil)
	require.NoError(t, err)
	require.Equal(t, 900*time.Second, d)
	d, err = ProcessorTimeout(Template, map[string]string{"ProcessorTimeoutSeconds": "60"})
	require.NoError(t, err)
	require.Equal(t, time.Minute, d)
	_, err = ProcessorTimeout(Template, map[string]string{"Nope": "1"})
	require.EqualError(t, err, "parameter Nope: the template declares no such parameter")

	_, err = ProcessorTimeout([]byte("Resources:\n  ProcessorFunction:\n    Properties:\n      Timeout: 120\n"), nil)
	require.NoError(t, err)
	_, err = ProcessorTimeout([]byte("Resources: {}\n"), nil)
	require.EqualError(t, err, "template: ProcessorFunction has no Timeout")

	var doc yaml.Node
	require.NoError(t, yaml.Unmarshal(Template, &doc))
	root := doc.Content[0]
	timeout := lookup(root, "Resources", "ProcessorFunction", "Properties", "Timeout")
	env := lookup(root, "Globals", "Function", "Environment", "Variables", "SUNDIAL_PROCESSOR_TIMEOUT_SECONDS")
	require.NotNil(t, env, "every function is told the processor's timeout")
	require.Equal(t, "!Ref", timeout.Tag)
	require.Equal(t, timeout.Tag+" "+timeout.Value, env.Tag+" "+env.Value, "the variable and the processor's Timeout are one parameter")
}
