package provision

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"
)

// units is a table's or an index's provisioned throughput as DescribeTable reports it.
type units struct{ Read, Write int64 }

// described is what DescribeTable says of a table's billing: its mode, and the units of the
// table and of each global secondary index (zero on PAY_PER_REQUEST).
type described struct {
	Mode    ddbtypes.BillingMode
	Table   units
	Indexes map[string]units
}

func describe(t *testing.T, db *dynamodb.Client, table string) described {
	t.Helper()
	d, err := db.DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	require.NoError(t, err)
	of := func(p *ddbtypes.ProvisionedThroughputDescription) units {
		if p == nil {
			return units{}
		}
		return units{aws.ToInt64(p.ReadCapacityUnits), aws.ToInt64(p.WriteCapacityUnits)}
	}
	out := described{Mode: billingMode(d.Table), Table: of(d.Table.ProvisionedThroughput), Indexes: map[string]units{}}
	for _, g := range d.Table.GlobalSecondaryIndexes {
		out.Indexes[aws.ToString(g.IndexName)] = of(g.ProvisionedThroughput)
	}
	return out
}

// Capacity=Provisioned makes both tables and every index of theirs PROVISIONED with the
// parameters' Min units, and names a scalable target and a policy per table, index and
// dimension (not emulated); the default, OnDemand, leaves them PAY_PER_REQUEST with no
// auto scaling.
func TestProvisionedCapacity(t *testing.T) {
	ctx := context.Background()
	tpl := translated(t)
	db, q := engines(t, "")
	params := map[string]string{"Capacity": "Provisioned", "TimersReadCapacityMin": "6", "TimersWriteCapacityMin": "7",
		"LogReadCapacityMin": "2", "LogWriteCapacityMin": "3"}

	st, err := Provision(ctx, tpl, Options{StackName: "cap", Region: "us-east-1", DynamoDB: db, SQS: q, Params: params})
	require.NoError(t, err)
	for output, want := range map[string]units{"TimersTableName": {6, 7}, "LogTableName": {2, 3}} {
		d := describe(t, db, st.Outputs[output])
		require.Equal(t, ddbtypes.BillingModeProvisioned, d.Mode, output)
		require.Equal(t, want, d.Table, output)
		require.NotEmpty(t, d.Indexes, output)
		for name, u := range d.Indexes {
			require.Equal(t, want, u, "%s index %s follows its table", output, name)
		}
	}

	// One target per table or index and dimension, each with a policy; none runs here.
	targets := map[string]bool{}
	policies := 0
	for _, res := range st.Resources {
		switch res.Type {
		case "AWS::ApplicationAutoScaling::ScalableTarget":
			targets[res.Ref] = true
			require.Contains(t, st.NotEmulated, res.LogicalID+" ("+res.Type+"): "+notScaled)
		case "AWS::ApplicationAutoScaling::ScalingPolicy":
			policies++
			require.Contains(t, st.NotEmulated, res.LogicalID+" ("+res.Type+"): "+notScaled)
		}
	}
	require.Equal(t, len(targets), policies, "a policy per target")
	for _, output := range []string{"TimersTableName", "LogTableName"} {
		table := st.Outputs[output]
		ids := []string{"table/" + table}
		for name := range describe(t, db, table).Indexes {
			ids = append(ids, "table/"+table+"/index/"+name)
		}
		for _, id := range ids {
			kind := "table"
			if strings.Contains(id, "/index/") {
				kind = "index"
			}
			for _, d := range []string{"Read", "Write"} {
				ref := id + "|dynamodb:" + kind + ":" + d + "CapacityUnits|dynamodb"
				require.True(t, targets[ref], "no scalable target %s", ref)
				delete(targets, ref)
			}
		}
	}
	require.Empty(t, targets, "targets of no table or index of the stack")

	onDemand, err := Provision(ctx, tpl, Options{StackName: "ondemand", Region: "us-east-1", DynamoDB: db, SQS: q})
	require.NoError(t, err)
	require.Equal(t, "OnDemand", onDemand.Params["Capacity"])
	for _, output := range []string{"TimersTableName", "LogTableName"} {
		d := describe(t, db, onDemand.Outputs[output])
		require.Equal(t, ddbtypes.BillingModePayPerRequest, d.Mode, output)
		for name, u := range d.Indexes {
			require.Equal(t, units{}, u, "%s index %s", output, name)
		}
	}
	for _, res := range onDemand.Resources {
		require.NotContains(t, res.Type, "ApplicationAutoScaling", res.LogicalID)
	}

	t.Run("MinAboveMaxIsRefused", func(t *testing.T) {
		_, err := Provision(ctx, tpl, Options{StackName: "cap-bad", Region: "us-east-1", DynamoDB: db, SQS: q,
			Params: map[string]string{"Capacity": "Provisioned", "TimersWriteCapacityMin": "50", "TimersWriteCapacityMax": "10"}})
		require.ErrorContains(t, err, "MinCapacity 50 is above MaxCapacity 10")
	})
}

// A kept database made with one billing mode is not switched to the other: provisioning
// reports the difference and suggests a fresh state. Changed units of a PROVISIONED table are
// applied in place.
func TestProvisionedCapacityOnAKeptDatabase(t *testing.T) {
	ctx := context.Background()
	tpl := translated(t)
	dir := t.TempDir()
	db, q := engines(t, dir)
	provision := func(params map[string]string) (*Stack, error) {
		return Provision(ctx, tpl, Options{StackName: "kept", Region: "us-east-1", DynamoDB: db, SQS: q, Params: params})
	}
	_, err := provision(nil)
	require.NoError(t, err)

	_, err = provision(map[string]string{"Capacity": "Provisioned"})
	require.ErrorContains(t, err, "billing mode PAY_PER_REQUEST, template PROVISIONED")
	require.ErrorContains(t, err, "sundial up --fresh")

	for _, table := range []string{"kept-TimersTable", "kept-LogTable"} {
		_, err := db.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(table)})
		require.NoError(t, err)
	}
	_, err = provision(map[string]string{"Capacity": "Provisioned"})
	require.NoError(t, err)
	st, err := provision(map[string]string{"Capacity": "Provisioned", "TimersWriteCapacityMin": "9", "LogReadCapacityMin": "4"})
	require.NoError(t, err, "new units apply in place")
	timers := describe(t, db, st.Outputs["TimersTableName"])
	require.Equal(t, units{5, 9}, timers.Table)
	require.Equal(t, units{5, 9}, timers.Indexes["due"])
	log := describe(t, db, st.Outputs["LogTableName"])
	require.Equal(t, units{4, 1}, log.Table)
	for name, u := range log.Indexes {
		require.Equal(t, units{4, 1}, u, name)
	}

	_, err = provision(nil)
	require.ErrorContains(t, err, "billing mode PROVISIONED, template PAY_PER_REQUEST")
}
