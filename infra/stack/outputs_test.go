package stack

import (
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation/types"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// templatePath is the repository's template.yaml, found from this file so the
// tests do not depend on the working directory.
func templatePath(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	require.True(t, ok)
	return filepath.Join(filepath.Dir(file), "..", "..", "template.yaml")
}

// templateContract is the part of template.yaml that this package mirrors.
type templateContract struct {
	Parameters map[string]struct {
		Default string `yaml:"Default"`
	} `yaml:"Parameters"`
	Globals struct {
		Function struct {
			Environment struct {
				Variables map[string]string `yaml:"Variables"`
			} `yaml:"Environment"`
		} `yaml:"Function"`
	} `yaml:"Globals"`
	Outputs map[string]any `yaml:"Outputs"`
}

func readContract(t *testing.T) templateContract {
	t.Helper()
	body, err := os.ReadFile(templatePath(t))
	require.NoError(t, err)
	var c templateContract
	require.NoError(t, yaml.Unmarshal(body, &c))
	return c
}

func TestOutputs(t *testing.T) {
	t.Parallel()

	t.Run("EnvHasExactlyTheTemplatesVariables", func(t *testing.T) {
		t.Parallel()
		c := readContract(t)
		want := slices.Sorted(maps.Keys(c.Globals.Function.Environment.Variables))
		got := slices.Sorted(maps.Keys(Outputs{}.Env(nil)))
		require.Equal(t, want, got)
		require.Equal(t, c.Globals.Function.Environment.Variables["SUNDIAL_TICK"], Outputs{}.Env(nil)["SUNDIAL_TICK"])
	})

	t.Run("DefaultsMatchTheTemplate", func(t *testing.T) {
		t.Parallel()
		c := readContract(t)
		for name, def := range paramDefaults {
			require.Equal(t, c.Parameters[name].Default, def, name)
		}
	})

	t.Run("ReadsEveryOutputTheTemplateDeclares", func(t *testing.T) {
		t.Parallel()
		c := readContract(t)
		for _, key := range append([]string{outTimersTable, outLogTable, outDLQ, outDueShards}, outQueues[:]...) {
			require.Contains(t, c.Outputs, key)
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
