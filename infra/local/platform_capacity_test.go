package local_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/local"
	"github.com/sundialhq/sundial/internal/testenv"
)

// `sundial up --param Capacity=Provisioned`: the platform runs on PROVISIONED tables and
// indexes with the parameters' units, timers fire, no call is denied, and the auto scaling
// resources are listed as not emulated. A restart on the kept database with the default,
// OnDemand, is refused with the billing-mode difference and --fresh.
func TestUpWithProvisionedCapacity(t *testing.T) {
	testenv.Integration(t)
	t.Parallel()
	dir := t.TempDir()
	manifest := filepath.Join(dir, "timers.yaml")
	require.NoError(t, os.WriteFile(manifest, []byte(`timers:
  - {name: Cap, schedule: "every 1s", timeout: 5s, action: {http: {url: "http://127.0.0.1:9/x"}}}
`), 0o644))
	inv := &testenv.Invoker{}
	var logs testenv.SyncBuffer
	o := local.Options{
		Template:        "../../template.yaml",
		Manifest:        manifest,
		Log:             &logs,
		Params:          map[string]string{"Capacity": "Provisioned", "TimersWriteCapacityMin": "8", "LogReadCapacityMin": "3"},
		AWSOptions:      local.AWSOptions{DataDir: filepath.Join(dir, "db")},
		FunctionOptions: local.FunctionOptions{Tick: time.Second, Invoker: inv},
	}
	p, err := local.Up(context.Background(), o)
	require.NoError(t, err, "log:\n%s", logs.String())

	db := dynamodb.NewFromConfig(p.AWS)
	for table, want := range map[string][2]int64{p.Outputs.TimersTable: {5, 8}, p.Outputs.LogTable: {3, 1}} {
		d, err := db.DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: aws.String(table)})
		require.NoError(t, err)
		if s := d.Table.BillingModeSummary; s != nil { // DynamoDB leaves it out of a table created PROVISIONED
			require.Equal(t, types.BillingModeProvisioned, s.BillingMode, table)
		}
		got := func(p *types.ProvisionedThroughputDescription) [2]int64 {
			require.NotNil(t, p, table)
			return [2]int64{aws.ToInt64(p.ReadCapacityUnits), aws.ToInt64(p.WriteCapacityUnits)}
		}
		require.Equal(t, want, got(d.Table.ProvisionedThroughput), table)
		for _, g := range d.Table.GlobalSecondaryIndexes {
			require.Equal(t, want, got(g.ProvisionedThroughput), "%s index %s", table, aws.ToString(g.IndexName))
		}
	}
	scaling := 0
	for _, r := range p.NotEmulated() {
		if strings.Contains(r, "(AWS::ApplicationAutoScaling::") {
			scaling++
		}
	}
	require.Positive(t, scaling, "auto scaling is listed as not emulated: %v", p.NotEmulated())

	require.Eventually(t, func() bool { return inv.Calls("Cap") >= 3 }, 20*time.Second, 100*time.Millisecond,
		"the timer fires on provisioned tables; log:\n%s", logs.String())
	require.Empty(t, p.IAM().Denied, p.IAM().String())
	require.NoError(t, p.Stop())

	o.Params = nil
	_, err = local.Up(context.Background(), o)
	require.ErrorContains(t, err, "billing mode PROVISIONED, template PAY_PER_REQUEST")
	require.ErrorContains(t, err, "--fresh")
}
