//go:build unix

package lambdarun_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/lambdarun"
	"github.com/sundialhq/sundial/internal/message"
	"github.com/sundialhq/sundial/internal/testenv"
)

// TestRealProcessorBootstrap starts the real ./functions/processor bootstrap under the
// emulated Runtime API, configured as the stack configures it, and sends it an SQS batch:
// a malformed body and a firing for a timer that does not exist (which needs DynamoDB, so
// it also proves the process reached the emulator). Both come back as batch item failures.
func TestRealProcessorBootstrap(t *testing.T) {
	t.Parallel()
	cfg, outs := testenv.Stack(t)
	bin := buildBootstrap(t, t.TempDir(), "github.com/sundialhq/sundial/functions/processor")
	out := &testenv.SyncBuffer{}
	// The endpoint verifies signatures: the process signs with the processor role's key, as
	// Lambda gives a function its role's credentials.
	roleCfg, err := testenv.Local(t).Config(testenv.StackName(), "ProcessorFunction")
	require.NoError(t, err)
	key, err := roleCfg.Credentials.Retrieve(context.Background())
	require.NoError(t, err)
	p, err := lambdarun.NewProcessFunction(lambdarun.ProcessConfig{
		Name: "sundial-processor", Bootstrap: bin, Timeout: 30 * time.Second, Output: out,
		Env: outs.Env(map[string]string{
			"AWS_ENDPOINT_URL":  aws.ToString(cfg.BaseEndpoint),
			"AWS_ACCESS_KEY_ID": key.AccessKeyID, "AWS_SECRET_ACCESS_KEY": key.SecretAccessKey,
		}),
	})
	require.NoError(t, err)
	defer func() { require.NoError(t, p.Stop()) }()

	due := time.Now().UTC().Add(-time.Second).Truncate(time.Second)
	unknown, err := message.Encode(message.Firing{V: message.Version, Timer: testenv.Unique(t),
		ScheduledAt: due, DueAt: due, Attempt: 1, Reason: message.ReasonSchedule})
	require.NoError(t, err)
	record := func(id, body string) events.SQSMessage {
		return events.SQSMessage{MessageId: id, Body: body, EventSource: "aws:sqs", AWSRegion: "us-east-1",
			EventSourceARN: "arn:aws:sqs:us-east-1:000000000000:sundial-P3Queue",
			Attributes:     map[string]string{"ApproximateReceiveCount": "1"}}
	}
	payload, err := json.Marshal(events.SQSEvent{Records: []events.SQSMessage{
		record("msg-malformed", "not a firing"), record("msg-unknown", unknown),
	}})
	require.NoError(t, err)

	raw, err := p.Invoke(context.Background(), "req-processor", payload)
	require.NoError(t, err, "output:\n%s", out)
	var resp events.SQSEventResponse
	require.NoError(t, json.Unmarshal(raw, &resp), "%s", raw)
	var failed []string
	for _, f := range resp.BatchItemFailures {
		failed = append(failed, f.ItemIdentifier)
	}
	require.ElementsMatch(t, []string{"msg-malformed", "msg-unknown"}, failed, "output:\n%s", out)
	// Logs flow through a pipe, asynchronously, as to CloudWatch.
	require.Eventually(t, func() bool {
		return strings.Contains(out.String(), "rejected message") && strings.Contains(out.String(), "unknown timer")
	}, 5*time.Second, 10*time.Millisecond, "output:\n%s", out)
	require.EqualValues(t, 1, p.Stats().ColdStarts)
}
