package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/local"
)

// lockedBuffer is a bytes.Buffer safe to write from `up` and read from the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// `sundial up --param NAME=VALUE` (repeatable) sets the template's parameters:
// --param Capacity=Provisioned creates the tables PROVISIONED with the parameters' units.
func TestUpParam(t *testing.T) {
	t.Run("WithoutAValueIsAUsageError", func(t *testing.T) {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), []string{"up", "--state", t.TempDir(), "--param", "Capacity", "--template", "/nonexistent/template.yaml"}, &stdout, &stderr)
		require.Equal(t, 2, code, stderr.String())
		require.Contains(t, stderr.String(), "want NAME=VALUE")
	})

	t.Run("CapacityProvisioned", func(t *testing.T) {
		repo, err := filepath.Abs("../..")
		require.NoError(t, err)
		t.Setenv("AWS_ENDPOINT_URL", "")
		t.Chdir(t.TempDir()) // `up` writes .sundial/ (state, log) here
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var stdout, stderr lockedBuffer
		done := make(chan int, 1)
		go func() {
			done <- run(ctx, []string{"up", "--template", filepath.Join(repo, "template.yaml"), "--data", "", "--console", "",
				"--param", "Capacity=Provisioned", "--param", "TimersWriteCapacityMin=8"}, &stdout, &stderr)
		}()
		for deadline := time.Now().Add(60 * time.Second); !strings.Contains(stdout.String(), "try "); {
			select {
			case code := <-done:
				t.Fatalf("up exited %d: %s%s", code, stdout.String(), stderr.String())
			case <-time.After(50 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				t.Fatalf("up did not start in 60 s: %s%s", stdout.String(), stderr.String())
			}
		}
		require.Contains(t, stdout.String(), "parameters Capacity=Provisioned TimersWriteCapacityMin=8")
		st, ok := local.ReadState(local.DefaultStateFile)
		require.True(t, ok)
		cfg, err := st.Config(ctx)
		require.NoError(t, err)
		d, err := dynamodb.NewFromConfig(cfg).DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("sundial-TimersTable")})
		require.NoError(t, err)
		require.Nil(t, d.Table.BillingModeSummary, "DynamoDB reports no summary for a table created PROVISIONED")
		require.Equal(t, int64(8), aws.ToInt64(d.Table.ProvisionedThroughput.WriteCapacityUnits))
		require.Equal(t, int64(5), aws.ToInt64(d.Table.ProvisionedThroughput.ReadCapacityUnits))
		cancel()
		select {
		case code := <-done:
			require.Equal(t, 0, code, stderr.String())
		case <-time.After(30 * time.Second):
			t.Fatal("up did not stop within 30 s")
		}
	})
}
