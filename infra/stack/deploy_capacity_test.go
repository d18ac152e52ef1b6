package stack

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/emulator"
)

// CloudFormation (moto's) deploys the template with Capacity=Provisioned, auto scaling
// included, with the tables and indexes at the Min units. (A switch back to OnDemand is not
// checked: moto's stack update leaves an existing table's billing mode as it was; AWS's
// switches it.)
func TestDeployProvisionedCapacity(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: deploys on moto; -short (make test-unit) skips it")
	}
	if _, err := exec.LookPath("moto_server"); err != nil {
		t.Skip(`moto_server is not installed (pip install "moto[server]"); skipping the deploy test against the emulator`)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	emu, err := emulator.StartMoto(ctx, nil)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, emu.Stop()) })
	cfg, err := emulator.AWSConfig(ctx, emu.Endpoint, "us-east-1")
	require.NoError(t, err)
	db := dynamodb.NewFromConfig(cfg)
	describe := func(table string) *ddbtypes.TableDescription {
		d, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
		require.NoError(t, err)
		return d.Table
	}

	out, err := Deploy(ctx, cfg, "sundial", templatePath(t), map[string]string{"Capacity": "Provisioned", "TimersWriteCapacityMin": "8"})
	require.NoError(t, err)
	require.Equal(t, "Provisioned", out.Parameters["Capacity"])
	timers := describe(out.TimersTable)
	require.Equal(t, ddbtypes.BillingModeProvisioned, timers.BillingModeSummary.BillingMode)
	require.Equal(t, int64(8), aws.ToInt64(timers.ProvisionedThroughput.WriteCapacityUnits))
	require.Equal(t, int64(5), aws.ToInt64(timers.ProvisionedThroughput.ReadCapacityUnits))
	for _, g := range timers.GlobalSecondaryIndexes {
		require.Equal(t, int64(8), aws.ToInt64(g.ProvisionedThroughput.WriteCapacityUnits), aws.ToString(g.IndexName))
	}

}
