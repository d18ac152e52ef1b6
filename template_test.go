package sundial

import (
	"fmt"
	"regexp"
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

// Every ARN the template builds names the stack's partition (${AWS::Partition}): a literal
// "arn:aws:" is wrong in aws-cn and aws-us-gov, where no policy or reference with it matches.
// Descriptions are prose for the operator and may show examples.
func TestTemplateARNsUseThePartition(t *testing.T) {
	t.Parallel()
	var doc yaml.Node
	require.NoError(t, yaml.Unmarshal(Template, &doc))
	literal := regexp.MustCompile(`arn:aws[a-z-]*:`)
	var found []string
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		switch n.Kind {
		case yaml.DocumentNode, yaml.SequenceNode:
			for i, c := range n.Content {
				walk(c, fmt.Sprintf("%s[%d]", path, i))
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == "Description" {
					continue
				}
				walk(n.Content[i+1], path+"."+n.Content[i].Value)
			}
		case yaml.ScalarNode:
			if literal.MatchString(n.Value) {
				found = append(found, fmt.Sprintf("%s (line %d): %s", path, n.Line, n.Value))
			}
		}
	}
	walk(&doc, "")
	require.Empty(t, found, "ARNs with a literal partition; use ${AWS::Partition}")
}

// The local endpoint answers every other short poll empty, as SQS's sampling may
// (infra/gateway/shortpoll.go), taking a request's WaitTimeSeconds 0 as a short poll: true
// while no queue sets ReceiveMessageWaitTimeSeconds, which would make its polls long.
func TestQueuesPollShortByDefault(t *testing.T) {
	t.Parallel()
	var doc yaml.Node
	require.NoError(t, yaml.Unmarshal(Template, &doc))
	resources := lookup(doc.Content[0], "Resources")
	require.NotNil(t, resources)
	queues := 0
	for i := 0; i+1 < len(resources.Content); i += 2 {
		name, res := resources.Content[i].Value, resources.Content[i+1]
		if typ := lookup(res, "Type"); typ == nil || typ.Value != "AWS::SQS::Queue" {
			continue
		}
		queues++
		require.Nil(t, lookup(res, "Properties", "ReceiveMessageWaitTimeSeconds"),
			"%s sets ReceiveMessageWaitTimeSeconds: teach infra/gateway/shortpoll.go the queue's own wait", name)
	}
	require.Positive(t, queues)
}
