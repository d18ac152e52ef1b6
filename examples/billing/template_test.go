package billing_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/sam"
	"github.com/sundialhq/sundial/internal/publish"
)

type resolver struct{}

func (resolver) Ref(id string) (string, bool) { return id, true }
func (resolver) GetAtt(id, attr string) (string, bool) {
	return "arn:aws:lambda:us-east-1:123456789012:function:sundial-action-billing-invoices", id == "BillingInvoicesFunction" && attr == "Arn"
}

// stringify makes every scalar a string, as CloudFormation passes a custom resource's properties.
func stringify(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range v {
			out[k] = stringify(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = stringify(e)
		}
		return out
	default:
		return fmt.Sprint(v)
	}
}

// The example's template translates as `sam deploy` translates it, and its Custom::SundialTimers
// carries a manifest the publish function accepts, for app billing.
func TestTemplate(t *testing.T) {
	tpl, err := sam.TranslateFile(context.Background(), "template.yaml")
	require.NoError(t, err)
	timers := tpl.Resources["Timers"]
	require.Equal(t, publish.TimersResourceType, timers.Type)
	require.Equal(t, "billing", timers.Properties["App"])
	require.Equal(t, "AWS::Lambda::Function", tpl.Resources["BillingInvoicesFunction"].Type)

	params, err := tpl.Params(nil)
	require.NoError(t, err)
	ev := &sam.Evaluator{Template: tpl, Params: params, StackName: "billing", Region: "us-east-1", Resources: resolver{}}
	name, err := ev.String(tpl.Resources["BillingInvoicesFunction"].Properties["FunctionName"])
	require.NoError(t, err)
	require.Equal(t, "sundial-action-billing-invoices", name, "covered by Sundial's default ActionFunctionArns")
	props, err := ev.Eval(timers.Properties["Manifest"])
	require.NoError(t, err)
	m, err := publish.InlineManifest(stringify(props))
	require.NoError(t, err)
	require.Len(t, m.Timers, 3)
	require.Equal(t, "Cleanup", m.Timers[1].Name)
	require.Equal(t, 4, *m.Timers[1].Priority)
	require.Equal(t, "30", m.Timers[1].Properties["retentionDays"])
	require.Equal(t, "arn:aws:lambda:us-east-1:123456789012:function:sundial-action-billing-invoices", m.Timers[0].Action.Lambda.Function)
}
