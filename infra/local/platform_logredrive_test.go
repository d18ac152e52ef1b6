package local_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/iam"
	"github.com/sundialhq/sundial/infra/local"
	"github.com/sundialhq/sundial/infra/localaws"
	"github.com/sundialhq/sundial/internal/dynamo"
	"github.com/sundialhq/sundial/internal/logwriter/redrive"
	"github.com/sundialhq/sundial/internal/testenv"
	"github.com/sundialhq/sundial/internal/timer"
)

// A record the log writer cannot write (here: its role may not write the log table while
// Poison's execution ends) no longer holds the stream: after the template's retries it goes
// to the on-failure queue as Lambda's metadata record, the executions after it are logged,
// and `sundial logs redrive` reads it back from the stream and logs it, once however often
// it is redriven.
func TestLogWriterFailureDestinationAndRedrive(t *testing.T) {
	testenv.Integration(t)
	t.Parallel()
	manifest := writeManifest(t, []byte(`timers:
  - {name: Poison, schedule: "every 1h", timeout: 5s, action: {http: {url: "http://127.0.0.1:9/x"}}}
  - {name: Later, schedule: "every 1s", timeout: 5s, action: {http: {url: "http://127.0.0.1:9/x"}}}
`))
	inv := &testenv.Invoker{}
	var logs testenv.SyncBuffer
	ctx := context.Background()
	p, err := local.Up(ctx, local.Options{Template: "../../template.yaml", Manifest: manifest, Log: &logs, FunctionOptions: local.FunctionOptions{Tick: time.Second, Invoker: inv}})
	require.NoError(t, err, "log:\n%s", logs.String())
	t.Cleanup(func() { _ = p.Stop() })
	poison, later := timer.Key{Timer: "Poison"}, timer.Key{Timer: "Later"}
	_, err = p.App.Admin.SetActive(ctx, later, false)
	require.NoError(t, err)
	idle(t, p, later)
	queueURL := p.Outputs.Values["LogWriterFailureQueueUrl"]
	require.NotEmpty(t, queueURL)

	// The log writer's role loses its grant on the log table while Poison runs once.
	const fn = "LogWriterFunctionRole"
	key, role := localaws.RoleKey(p.Stack.Name, fn), p.Stack.Roles[fn]
	cred, ok := p.Local.Auth.Credential(key)
	require.True(t, ok, "the log writer's role has a key")
	broken := &iam.Role{Name: role.Name, Arn: role.Arn}
	for _, pol := range role.Policies {
		writes := false
		for _, g := range (&iam.Role{Policies: []iam.Policy{pol}}).Grants() {
			writes = writes || g.Action == "dynamodb:BatchWriteItem"
		}
		if !writes {
			broken.Policies = append(broken.Policies, pol)
		}
	}
	require.Less(t, len(broken.Policies), len(role.Policies))
	p.Local.Auth.AddRole(key, cred.Secret, broken)
	_, err = p.App.Admin.RunNow(ctx, poison)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return inv.Calls("Poison") == 1 }, 20*time.Second, 50*time.Millisecond)
	idle(t, p, poison)
	sq := sqs.NewFromConfig(p.AWS)
	require.Eventually(t, func() bool { return queued(t, sq, queueURL) == 1 }, 60*time.Second, 200*time.Millisecond,
		"the given-up batch's metadata record reaches the destination (retries: the template's MaximumRetryAttempts)")
	p.Local.Auth.AddRole(key, cred.Secret, role)

	// Later executions are logged: the stream moved on.
	_, err = p.App.Admin.SetActive(ctx, later, true)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return inv.Calls("Later") >= 3 }, 30*time.Second, 50*time.Millisecond)
	_, err = p.App.Admin.SetActive(ctx, later, false)
	require.NoError(t, err)
	idle(t, p, later)
	dctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	require.NoError(t, p.Drained(dctx))
	require.Len(t, logged(t, p, later), inv.Calls("Later"))
	require.Empty(t, logged(t, p, poison), "given up, not logged")
	st := p.Streams()[0]
	require.EqualValues(t, 1, st.SentToDestination)
	require.EqualValues(t, 1, st.Discarded)

	// The destination holds where the record is, not the record.
	peek, err := sq.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(queueURL), WaitTimeSeconds: 1})
	require.NoError(t, err)
	require.Len(t, peek.Messages, 1)
	_, err = sq.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(queueURL),
		ReceiptHandle: peek.Messages[0].ReceiptHandle, VisibilityTimeout: 0})
	require.NoError(t, err)
	body := aws.ToString(peek.Messages[0].Body)
	require.Contains(t, body, `"condition":"RetryAttemptsExhausted"`)
	require.Contains(t, body, `"DDBStreamBatchInfo"`)
	require.NotContains(t, body, "Poison", "the metadata record does not carry the records")

	redrive := redrive.New(p.AWS, p.App.Store, queueURL, nil)
	rep, err := redrive.Run(ctx, 100)
	require.NoError(t, err)
	require.Equal(t, 1, rep.Batches, "%+v", rep)
	require.Equal(t, 1, rep.Logged)
	got := logged(t, p, poison)
	require.Len(t, got, 1)
	require.Equal(t, timer.OutcomeSuccess, got[0].Outcome)
	require.Zero(t, queued(t, sq, queueURL))

	// Redriven again (the same metadata record sent twice): still one entry.
	_, err = sq.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(queueURL), MessageBody: aws.String(body)})
	require.NoError(t, err)
	rep, err = redrive.Run(ctx, 100)
	require.NoError(t, err)
	require.Equal(t, 1, rep.Batches)
	require.Len(t, logged(t, p, poison), 1)
	rep, err = redrive.Run(ctx, 100)
	require.NoError(t, err)
	require.Zero(t, rep.Batches, "nothing left")
}

// idle waits until the timer has no execution running.
func idle(t *testing.T, p *local.Platform, key timer.Key) {
	t.Helper()
	require.Eventually(t, func() bool {
		in, err := p.App.Store.Get(context.Background(), key)
		return err == nil && !in.Running()
	}, 20*time.Second, 50*time.Millisecond)
}

func logged(t *testing.T, p *local.Platform, key timer.Key) []timer.Execution {
	t.Helper()
	es, err := p.App.Store.Logs(context.Background(), dynamo.LogQuery{Key: &key, Limit: 1000})
	require.NoError(t, err)
	return es
}

// queued is the queue's visible and in-flight messages.
func queued(t *testing.T, sq *sqs.Client, url string) int {
	t.Helper()
	out, err := sq.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url),
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages, sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible}})
	require.NoError(t, err)
	a, _ := strconv.Atoi(out.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessages)])
	b, _ := strconv.Atoi(out.Attributes[string(sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible)])
	return a + b
}
