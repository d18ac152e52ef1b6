package stack

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation/types"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/sundialhq/sundial/infra/sam"
)

// templatePath is the repository's template.yaml, found from this file so the
// tests do not depend on the working directory.
func templatePath(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	require.True(t, ok)
	return filepath.Join(filepath.Dir(file), "..", "..", "template.yaml")
}

// translatedEnv is what the template's SAM translation gives a function as its environment,
// with each resource's Ref standing for its logical ID and the parameters' defaults.
func translatedEnv(t *testing.T, function string) (map[string]string, map[string]string) {
	t.Helper()
	tpl, err := sam.TranslateFile(context.Background(), templatePath(t))
	require.NoError(t, err)
	params, err := tpl.Params(nil)
	require.NoError(t, err)
	ev := &sam.Evaluator{Template: tpl, Params: params, StackName: "s", Region: "us-east-1", Resources: logicalIDs{}}
	env, err := ev.Eval(tpl.Resources[function].Properties["Environment"])
	require.NoError(t, err)
	out := map[string]string{}
	for k, v := range env.(map[string]any)["Variables"].(map[string]any) {
		s, err := ev.String(v)
		require.NoError(t, err)
		out[k] = s
	}
	return out, params
}

type logicalIDs struct{}

func (logicalIDs) Ref(id string) (string, bool)          { return id, true }
func (logicalIDs) GetAtt(id, attr string) (string, bool) { return id + "." + attr, true }

func TestOutputs(t *testing.T) {
	t.Parallel()

	t.Run("EnvIsTheTemplatesTranslation", func(t *testing.T) {
		t.Parallel()
		// The CLI and the client configure themselves with Env from a stack's outputs; the
		// functions get their environment from the template. The two must agree.
		want, params := translatedEnv(t, "FetchFunction")
		o := Outputs{TimersTable: "TimersTable", LogTable: "LogTable", DLQ: "DeadLetterQueue",
			Queues: [4]string{"P1Queue", "P2Queue", "P3Queue", "P4Queue"}, DueShards: 4, Parameters: params}
		require.Equal(t, want, o.Env(nil))
		params["FetchTickMinutes"], params["DueShards"], params["DefaultRetryDelaySeconds"], params["ProcessorTimeoutSeconds"] = "5", "16", "30", "300"
		o.Parameters, o.DueShards = params, 16
		tpl, err := sam.TranslateFile(context.Background(), templatePath(t))
		require.NoError(t, err)
		ev := &sam.Evaluator{Template: tpl, Params: params, StackName: "s", Region: "us-east-1", Resources: logicalIDs{}}
		for _, name := range []string{"SUNDIAL_FETCH_SCHEDULE", "SUNDIAL_DUE_SHARDS", "SUNDIAL_DEFAULT_RETRY_DELAY", "SUNDIAL_PROCESSOR_TIMEOUT_SECONDS"} {
			v, err := ev.String(tpl.Resources["FetchFunction"].Properties["Environment"].(map[string]any)["Variables"].(map[string]any)[name])
			require.NoError(t, err)
			require.Equal(t, v, o.Env(nil)[name], name)
		}
	})

	t.Run("ReadsEveryOutputTheTemplateDeclares", func(t *testing.T) {
		t.Parallel()
		tpl, err := sam.TranslateFile(context.Background(), templatePath(t))
		require.NoError(t, err)
		for _, key := range append([]string{outTimersTable, outLogTable, outDLQ, outDueShards}, outQueues[:]...) {
			require.Contains(t, tpl.Outputs, key)
		}
	})

	t.Run("EnvUsesDeployedParametersAndExtrasWin", func(t *testing.T) {
		t.Parallel()
		o := Outputs{
			TimersTable: "timers", LogTable: "log", DLQ: "dlq",
			Queues:     [4]string{"q1", "q2", "q3", "q4"},
			DueShards:  16,
			Parameters: map[string]string{"DefaultRetryDelaySeconds": "30", "LogRetentionDays": "90"},
		}
		env := o.Env(map[string]string{"SUNDIAL_TICK": "1s", "AWS_ENDPOINT_URL": "http://127.0.0.1:1"})
		require.Equal(t, "timers", env["SUNDIAL_TIMERS_TABLE"])
		require.Equal(t, "q3", env["SUNDIAL_QUEUE_P3"])
		require.Equal(t, "16", env["SUNDIAL_DUE_SHARDS"])
		require.Equal(t, "30s", env["SUNDIAL_DEFAULT_RETRY_DELAY"])
		require.Equal(t, "90", env["SUNDIAL_LOG_RETENTION_DAYS"])
		require.Equal(t, "3", env["SUNDIAL_DEFAULT_MAX_RETRIES"])
		require.Equal(t, "1s", env["SUNDIAL_TICK"])
		require.Equal(t, "http://127.0.0.1:1", env["AWS_ENDPOINT_URL"])
	})

	t.Run("ParametersAsTheTemplateReadsThem", func(t *testing.T) {
		t.Parallel()
		vals := map[string]string{outTimersTable: "t", outLogTable: "l", outDLQ: "d", outDueShards: "8"}
		for _, key := range outQueues {
			vals[key] = "q"
		}
		o, err := FromValues(vals, map[string]string{"Retired": "x", "LogRetentionDays": "90"})
		require.NoError(t, err, "a parameter the template no longer declares is not read")
		env := o.Env(nil)
		require.Equal(t, "8", env["SUNDIAL_DUE_SHARDS"], "an output that is a parameter's Ref gives its value")
		require.Equal(t, "90", env["SUNDIAL_LOG_RETENTION_DAYS"])
		_, err = FromValues(vals, map[string]string{"DefaultRetryDelaySeconds": "901"})
		require.ErrorContains(t, err, `the functions' environment: parameter DefaultRetryDelaySeconds="901": above the maximum 900`)
	})

	t.Run("MissingOutputsAreNamed", func(t *testing.T) {
		t.Parallel()
		_, err := outputsOf(&types.Stack{
			StackName:   aws.String("sundial"),
			StackStatus: types.StackStatusCreateComplete,
			Outputs:     []types.Output{{OutputKey: aws.String(outTimersTable), OutputValue: aws.String("t")}},
		})
		require.ErrorContains(t, err, "LogTableName")
		require.ErrorContains(t, err, "QueueP4Url")
	})

	t.Run("RejectsABadShardCount", func(t *testing.T) {
		t.Parallel()
		st := &types.Stack{StackName: aws.String("sundial")}
		for _, key := range append([]string{outTimersTable, outLogTable, outDLQ}, outQueues[:]...) {
			st.Outputs = append(st.Outputs, types.Output{OutputKey: aws.String(key), OutputValue: aws.String("x")})
		}
		st.Outputs = append(st.Outputs, types.Output{OutputKey: aws.String(outDueShards), OutputValue: aws.String("0")})
		_, err := outputsOf(st)
		require.ErrorContains(t, err, "not a positive integer")
	})
}

// TestEnvFollowsTheTemplate: Env reads every value from the template, defaults included. With
// every parameter's default changed, the environment Env evaluates from the template as
// written is the one the SAM translation gives the functions.
func TestEnvFollowsTheTemplate(t *testing.T) {
	t.Parallel()
	body, err := os.ReadFile(templatePath(t))
	require.NoError(t, err)
	var doc yaml.Node
	require.NoError(t, yaml.Unmarshal(body, &doc))
	params := mapping(doc.Content[0], "Parameters")
	require.NotNil(t, params)
	changed := 0
	for i := 0; i+1 < len(params.Content); i += 2 {
		if other := otherValue(params.Content[i+1]); other != "" {
			mapping(params.Content[i+1], "Default").Value = other
			changed++
		}
	}
	require.Positive(t, changed)
	perturbed, err := yaml.Marshal(&doc)
	require.NoError(t, err)

	tpl, err := sam.Translate(context.Background(), perturbed)
	require.NoError(t, err)
	defaults, err := tpl.Params(nil)
	require.NoError(t, err)
	ev := &sam.Evaluator{Template: tpl, Params: defaults, StackName: "s", Region: "us-east-1", Resources: logicalIDs{}}
	vars, err := ev.Eval(tpl.Resources["FetchFunction"].Properties["Environment"])
	require.NoError(t, err)
	want := map[string]string{}
	for k, v := range vars.(map[string]any)["Variables"].(map[string]any) {
		want[k] = fmt.Sprint(v)
	}

	written, err := sam.ParseYAML(perturbed)
	require.NoError(t, err)
	o := Outputs{TimersTable: "TimersTable", LogTable: "LogTable", DLQ: "DeadLetterQueue",
		Queues: [4]string{"P1Queue", "P2Queue", "P3Queue", "P4Queue"}}
	got, err := o.environment(written)
	require.NoError(t, err)
	require.Equal(t, want, got)
	require.NotEqual(t, o.Env(nil), got, "the defaults were changed")
}

// mapping is the value of key in a YAML mapping node.
func mapping(n *yaml.Node, key string) *yaml.Node {
	for i := 0; n != nil && i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// otherValue is a value the parameter allows other than its default ("": none).
func otherValue(p *yaml.Node) string {
	def := mapping(p, "Default")
	if def == nil || def.Kind != yaml.ScalarNode {
		return ""
	}
	if allowed := mapping(p, "AllowedValues"); allowed != nil {
		for _, a := range allowed.Content {
			if a.Value != def.Value {
				return a.Value
			}
		}
		return ""
	}
	typ := mapping(p, "Type")
	if typ == nil || typ.Value != "Number" {
		return ""
	}
	n, err := strconv.Atoi(def.Value)
	if err != nil {
		return ""
	}
	if hi := mapping(p, "MaxValue"); hi != nil && hi.Value == def.Value {
		return strconv.Itoa(n - 1)
	}
	return strconv.Itoa(n + 1)
}
