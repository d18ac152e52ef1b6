package audittrail

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/audit"
	"github.com/sundialhq/sundial/internal/auditwriter"
	"github.com/sundialhq/sundial/internal/errkind"
)

var now = time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)

type fakeLambda struct {
	in  *lambda.InvokeInput
	out *lambda.InvokeOutput
	err error
}

func (f *fakeLambda) Invoke(_ context.Context, in *lambda.InvokeInput, _ ...func(*lambda.Options)) (*lambda.InvokeOutput, error) {
	f.in = in
	return f.out, f.err
}

// The client invokes the writer synchronously with the record (without its id and time), and
// reports a refusal as invalid input, any other failure as the writer's.
func TestClient(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := &fakeLambda{out: &lambda.InvokeOutput{StatusCode: 200, Payload: []byte(`{"id":"abc","at":"2026-11-28T09:00:00Z"}`)}}
	c := &Client{API: f, Function: "sundial-AuditWriterFunction"}
	require.NoError(t, c.Add(ctx, audit.Record{ID: "mine", At: now, Who: "ann", Action: audit.RunNow}))
	require.Equal(t, "RequestResponse", string(f.in.InvocationType))
	require.Equal(t, "sundial-AuditWriterFunction", aws.ToString(f.in.FunctionName))
	r, err := auditwriter.Decode(f.in.Payload)
	require.NoError(t, err, "the client sends what the writer accepts")
	require.Equal(t, "ann", r.Who)

	f.out = &lambda.InvokeOutput{StatusCode: 200, FunctionError: aws.String("Unhandled"),
		Payload: []byte(`{"errorMessage":"the audit writer refused the record: who is empty","errorType":"Refused"}`)}
	err = c.Add(ctx, audit.Record{Action: audit.RunNow})
	require.ErrorIs(t, err, errkind.Invalid)
	require.ErrorContains(t, err, "who is empty")

	f.out.Payload = []byte(`{"errorMessage":"read the audit chain's head: throttled","errorType":"OperationError"}`)
	err = c.Add(ctx, audit.Record{Who: "ann", Action: audit.RunNow})
	require.NotErrorIs(t, err, errkind.Invalid)
	require.ErrorContains(t, err, "the audit writer sundial-AuditWriterFunction failed (Unhandled): read the audit chain's head: throttled")

	f.out, f.err = nil, errors.New("AccessDeniedException: not authorized to perform lambda:InvokeFunction")
	require.ErrorContains(t, c.Add(ctx, audit.Record{Who: "ann", Action: audit.RunNow}), "invoke the audit writer sundial-AuditWriterFunction: AccessDenied")

	f.out, f.err = &lambda.InvokeOutput{StatusCode: 200, Payload: []byte(`null`)}, nil
	require.ErrorContains(t, c.Add(ctx, audit.Record{Who: "ann", Action: audit.RunNow}), "answered without the record's id")
}
