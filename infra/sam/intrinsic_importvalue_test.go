package sam

import (
	"testing"

	"github.com/stretchr/testify/require"
)

type noResources struct{}

func (noResources) Ref(string) (string, bool)            { return "", false }
func (noResources) GetAtt(string, string) (string, bool) { return "", false }

// Fn::ImportValue reads the exports of the stacks already deployed; an unknown export is an
// error that names it, as CloudFormation's "No export named ... found".
func TestImportValue(t *testing.T) {
	tpl := &Template{Parameters: map[string]Parameter{"SundialStack": {Type: "String", Default: "sundial"}},
		Resources: map[string]Resource{"X": {Type: "Custom::X"}}}
	params, err := tpl.Params(nil)
	require.NoError(t, err)
	ev := &Evaluator{Template: tpl, Params: params, StackName: "billing", Region: "us-east-1", Resources: noResources{},
		Imports: map[string]string{"sundial-PublishFunctionArn": "arn:aws:lambda:us-east-1:000000000000:function:sundial-PublishFunction"}}
	v, err := ev.String(map[string]any{"Fn::ImportValue": map[string]any{"Fn::Sub": "${SundialStack}-PublishFunctionArn"}})
	require.NoError(t, err)
	require.Equal(t, "arn:aws:lambda:us-east-1:000000000000:function:sundial-PublishFunction", v)

	_, err = ev.String(map[string]any{"Fn::ImportValue": "other-PublishFunctionArn"})
	require.ErrorContains(t, err, `no deployed stack exports "other-PublishFunctionArn" (exports: sundial-PublishFunctionArn)`)
	ev.Imports = nil
	_, err = ev.String(map[string]any{"Fn::ImportValue": "x"})
	require.ErrorContains(t, err, "(exports: none)")
}
