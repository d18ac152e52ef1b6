package role

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestLambdaMemoryLimit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		env  map[string]string
		want int64
	}{
		{"the template's 128 MB", map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "128"}, 128 * 8 << 20 / 10},
		{"1,024 MB", map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "1024"}, 1024 * 8 << 20 / 10},
		{"GOMEMLIMIT set: the runtime's", map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "128", "GOMEMLIMIT": "200MiB"}, 0},
		{"not in Lambda", map[string]string{}, 0},
		{"not a number", map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "lots"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.InDelta(t, tc.want, lambdaMemoryLimit(func(k string) string { return tc.env[k] }), 1)
		})
	}
}
