package stack_test

import (
	"context"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/sam"
	"github.com/sundialhq/sundial/infra/stack"
	"github.com/sundialhq/sundial/internal/testenv"
)

func TestCompactAsJSON(t *testing.T) {
	// Past the inline limit even without comments, the template goes as minified JSON, which
	// the SAM translator (as CloudFormation) reads to the very same stack as the YAML.
	t.Run("TheTemplateFitsInlineAsJSON", func(t *testing.T) {
		testenv.Integration(t) // the SAM translator (python3)
		body, err := os.ReadFile("../../template.yaml")
		require.NoError(t, err)
		js, err := stack.AsJSON(stack.Compact(body))
		require.NoError(t, err)
		require.LessOrEqual(t, len(js), stack.MaxTemplateBody, "the template fits in a TemplateBody as JSON")
		ctx := context.Background()
		fromYAML, err := sam.Translate(ctx, body)
		require.NoError(t, err)
		fromJSON, err := sam.Translate(ctx, js)
		require.NoError(t, err)
		require.Equal(t, fromYAML, fromJSON)
	})

	t.Run("ShortFormsInLongForm", func(t *testing.T) {
		js, err := stack.AsJSON([]byte("A: !Ref X\nB: !GetAtt T.StreamArn\nC: !Sub \"${X}-y\"\nD: !If [Cond, 1, !Ref AWS::NoValue]\nE: {F: 0.5, G: true, H: null, I: '1'}\nJ: !Condition K\n"))
		require.NoError(t, err)
		require.JSONEq(t, `{"A":{"Ref":"X"},"B":{"Fn::GetAtt":["T","StreamArn"]},"C":{"Fn::Sub":"${X}-y"},`+
			`"D":{"Fn::If":["Cond",1,{"Ref":"AWS::NoValue"}]},"E":{"F":0.5,"G":true,"H":null,"I":"1"},"J":{"Condition":"K"}}`, string(js))
		_, err = stack.AsJSON([]byte("A: !GetAtt T\n"))
		require.ErrorContains(t, err, `!GetAtt "T" names no attribute`)
	})
}
