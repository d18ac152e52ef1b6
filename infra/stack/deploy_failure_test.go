package stack

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation/types"
	"github.com/stretchr/testify/require"
)

// moto never reports failed resources (a failure is an API error there), so
// the explanation built from stack events is checked against canned AWS
// answers.
func TestFailureExplainsTheLatestOperation(t *testing.T) {
	t.Parallel()
	type event struct{ logical, typ, status, reason string }
	events := []event{ // newest first, as CloudFormation lists them
		{"sundial", "AWS::CloudFormation::Stack", "ROLLBACK_COMPLETE", ""},
		{"P1Queue", "AWS::SQS::Queue", "DELETE_COMPLETE", ""},
		{"TimersTable", "AWS::DynamoDB::Table", "CREATE_FAILED", "Resource creation cancelled"},
		{"P1Queue", "AWS::SQS::Queue", "CREATE_FAILED", "Invalid value for the parameter VisibilityTimeout"},
		{"sundial", "AWS::CloudFormation::Stack", "CREATE_IN_PROGRESS", "User Initiated"},
		{"OldQueue", "AWS::SQS::Queue", "UPDATE_FAILED", "from an earlier operation"},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		require.NoError(t, r.ParseForm())
		require.Equal(t, "DescribeStackEvents", r.Form.Get("Action"))
		var b strings.Builder
		b.WriteString(`<DescribeStackEventsResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"><DescribeStackEventsResult><StackEvents>`)
		for i, e := range events {
			fmt.Fprintf(&b, `<member><StackId>arn:stack/sundial/1</StackId><EventId>%d</EventId><StackName>sundial</StackName>`+
				`<LogicalResourceId>%s</LogicalResourceId><ResourceType>%s</ResourceType><Timestamp>2026-01-01T00:00:%02dZ</Timestamp>`+
				`<ResourceStatus>%s</ResourceStatus><ResourceStatusReason>%s</ResourceStatusReason></member>`,
				i, e.logical, e.typ, 59-i, e.status, e.reason)
		}
		b.WriteString(`</StackEvents></DescribeStackEventsResult><ResponseMetadata><RequestId>r</RequestId></ResponseMetadata></DescribeStackEventsResponse>`)
		w.Header().Set("Content-Type", "text/xml")
		_, _ = w.Write([]byte(b.String()))
	}))
	t.Cleanup(srv.Close)

	client := cloudformation.NewFromConfig(aws.Config{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(srv.URL),
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "test", SecretAccessKey: "test"}, nil
		}),
	})
	err := failure(context.Background(), client, &types.Stack{
		StackName:         aws.String("sundial"),
		StackId:           aws.String("arn:stack/sundial/1"),
		StackStatus:       types.StackStatusRollbackComplete,
		StackStatusReason: aws.String("The following resource(s) failed to create: [P1Queue]."),
	})
	require.EqualError(t, err, `stack "sundial" ended in ROLLBACK_COMPLETE (The following resource(s) failed to create: [P1Queue].):
  P1Queue (AWS::SQS::Queue) CREATE_FAILED: Invalid value for the parameter VisibilityTimeout
  TimersTable (AWS::DynamoDB::Table) CREATE_FAILED: Resource creation cancelled`)
}
