package local

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/provision"
	"github.com/sundialhq/sundial/infra/sam"
)

// A stack at a given endpoint (LocalStack) gets its functions' settings from the template's
// SAM translation, as the embedded platform does, and the queues and stream they read from the
// deployed stack. Tried: the template with its processor batch size changed to 7 and the
// ProcessorTimeoutSeconds parameter deployed as 321 — the functions follow both (no value of
// the template is written again here); a deployed stack that lacks a queue the template has,
// and a table without a stream, are refused with what to do.
func TestEndpointFunctionsFollowTheTemplate(t *testing.T) {
	body, err := os.ReadFile("../../template.yaml")
	require.NoError(t, err)
	changed := strings.Replace(string(body), "Queue: !GetAtt P1Queue.Arn\n            BatchSize: 10", "Queue: !GetAtt P1Queue.Arn\n            BatchSize: 7", 1)
	require.NotEqual(t, string(body), changed, "the template's P1 event source moved: update the test's edit")
	tpl, err := sam.Translate(context.Background(), []byte(changed))
	require.NoError(t, err)
	described, err := provision.Provision(context.Background(), tpl, provision.Options{StackName: "ls", Region: "us-east-1",
		Params: map[string]string{"ProcessorTimeoutSeconds": "321"}, Describe: true})
	require.NoError(t, err)

	physical := map[string]string{}
	for id, r := range described.Resources {
		switch r.Type {
		case "AWS::SQS::Queue":
			physical[id] = "http://localstack:4566/000000000000/ls-" + id + "-XYZ"
		case "AWS::DynamoDB::Table":
			physical[id] = "ls-" + id + "-XYZ"
		}
	}
	streamOf := func(_ context.Context, table string) (string, error) {
		return "arn:aws:dynamodb:us-east-1:000000000000:table/" + table + "/stream/2026", nil
	}

	proc, err := deployedSources(context.Background(), described, described.Functions[logicalIDs[FnProcessor]], physical, streamOf)
	require.NoError(t, err)
	require.Equal(t, 321*time.Second, proc.Timeout)
	require.Len(t, proc.EventSources, 4)
	batches := map[string]int{}
	for _, es := range proc.EventSources {
		require.True(t, strings.HasPrefix(es.QueueURL, "http://localstack:4566/000000000000/ls-"), es.QueueURL)
		batches[es.QueueURL] = es.BatchSize
	}
	require.Equal(t, 7, batches[physical["P1Queue"]], "P1's batch size as the changed template has it")
	require.Equal(t, "Allow", proc.RecursiveLoop)

	lw, err := deployedSources(context.Background(), described, described.Functions[logicalIDs[FnLogWriter]], physical, streamOf)
	require.NoError(t, err)
	require.Len(t, lw.StreamSources, 1)
	ss := lw.StreamSources[0]
	require.Equal(t, physical["TimersTable"], ss.Table)
	require.Equal(t, "arn:aws:dynamodb:us-east-1:000000000000:table/"+physical["TimersTable"]+"/stream/2026", ss.StreamArn)
	require.Equal(t, physical["LogWriterFailureQueue"], ss.OnFailure)
	require.Equal(t, described.Functions[logicalIDs[FnLogWriter]].StreamSources[0].BatchSize, ss.BatchSize)

	delete(physical, "P2Queue")
	_, err = deployedSources(context.Background(), described, described.Functions[logicalIDs[FnProcessor]], physical, streamOf)
	require.ErrorContains(t, err, "the deployed stack has no AWS::SQS::Queue P2Queue")

	_, err = deployedSources(context.Background(), described, described.Functions[logicalIDs[FnLogWriter]], physical,
		func(context.Context, string) (string, error) { return "", nil })
	require.ErrorContains(t, err, "has no stream")
}
