package stack

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"
)

// CloudFormation (moto's) deploys the template with Capacity=Provisioned, auto scaling
// included, with the tables and indexes at the Min units. (A switch back to OnDemand is not
// checked: moto's stack update leaves an existing table's billing mode as it was; AWS's
// switches it.)
func TestDeployProvisionedCapacity(t *testing.T) {
	ctx, _, cfg := startMoto(t)
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
