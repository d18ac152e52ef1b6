package stack

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/sam"
)

// An app's own stack finds the publish function with !ImportValue <stack>-PublishFunctionArn,
// and the publish function reads S3 only where ManifestBucketArns says.
func TestAppStackSupport(t *testing.T) {
	t.Parallel()
	tpl, err := sam.TranslateFile(context.Background(), templatePath(t))
	require.NoError(t, err)
	eval := func(extra map[string]string, v any) any {
		t.Helper()
		params, err := tpl.Params(extra)
		require.NoError(t, err)
		ev := &sam.Evaluator{Template: tpl, Params: params, StackName: "sundial", Region: "us-east-1", Resources: logicalIDs{}}
		out, err := ev.Eval(v)
		require.NoError(t, err)
		return out
	}

	out, ok := tpl.Outputs["PublishFunctionArn"]
	require.True(t, ok)
	require.Equal(t, "arn:aws:lambda:us-east-1:000000000000:function:PublishFunction", eval(nil, out.Value), "the function's ARN, from its name")
	require.Empty(t, out.Condition, "apps publish through it whether or not the stack publishes its own manifest")
	_, ok = tpl.Resources["PublishFunction"]
	require.True(t, ok)
	require.Empty(t, tpl.Resources["PublishFunction"].Condition)
	require.Equal(t, "sundial-PublishFunctionArn", eval(nil, out.Export["Name"]))

	grants := func(extra map[string]string) []any {
		t.Helper()
		policies := eval(extra, tpl.Resources["PublishFunctionRole"].Properties["Policies"])
		b, err := json.Marshal(policies)
		require.NoError(t, err)
		var ps []struct {
			PolicyDocument struct{ Statement []map[string]any }
		}
		require.NoError(t, json.Unmarshal(b, &ps))
		var res []any
		for _, p := range ps {
			for _, s := range p.PolicyDocument.Statement {
				if s["Sid"] == "AppManifests" {
					res = append(res, s["Resource"])
				}
			}
		}
		return res
	}
	require.Empty(t, grants(nil), "no ManifestBucketArns: no S3 access")
	require.Equal(t, []any{[]any{"arn:aws:s3:::billing-config/timers/*"}},
		grants(map[string]string{"ManifestBucketArns": "arn:aws:s3:::billing-config/timers/*"}))
}
