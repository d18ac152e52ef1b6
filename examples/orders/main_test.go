package orders_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/sundialhq/sundial/examples/orders"
	"github.com/sundialhq/sundial/internal/testenv"
)

// The store and handler tests share testenv's emulator, each with tables of its own; the
// end-to-end tests start a platform (and emulator) per scenario.
func TestMain(m *testing.M) { testenv.Main(m) }

const templatePath = "../../template.yaml"

// ordersTableDef is template.yaml's OrdersTable, the one definition of the table.
type ordersTableDef struct {
	Resources struct {
		OrdersTable struct {
			Condition  string `yaml:"Condition"`
			Properties struct {
				AttributeDefinitions []struct {
					AttributeName string `yaml:"AttributeName"`
					AttributeType string `yaml:"AttributeType"`
				} `yaml:"AttributeDefinitions"`
				KeySchema              []keyDef `yaml:"KeySchema"`
				GlobalSecondaryIndexes []struct {
					IndexName  string   `yaml:"IndexName"`
					KeySchema  []keyDef `yaml:"KeySchema"`
					Projection struct {
						ProjectionType string `yaml:"ProjectionType"`
					} `yaml:"Projection"`
				} `yaml:"GlobalSecondaryIndexes"`
			} `yaml:"Properties"`
		} `yaml:"OrdersTable"`
	} `yaml:"Resources"`
}

type keyDef struct {
	AttributeName string `yaml:"AttributeName"`
	KeyType       string `yaml:"KeyType"`
}

func keySchema(ks []keyDef) []types.KeySchemaElement {
	out := make([]types.KeySchemaElement, len(ks))
	for i, k := range ks {
		out[i] = types.KeySchemaElement{AttributeName: aws.String(k.AttributeName), KeyType: types.KeyType(k.KeyType)}
	}
	return out
}

var tableSeq atomic.Int64

// ordersTable creates a fresh orders table as template.yaml defines it, on the shared
// emulator, and returns a store of it.
func ordersTable(t *testing.T) (*orders.Store, *dynamodb.Client) {
	t.Helper()
	cfg, _ := testenv.Stack(t)
	body, err := os.ReadFile(templatePath)
	require.NoError(t, err)
	var def ordersTableDef
	require.NoError(t, yaml.Unmarshal(body, &def))
	p := def.Resources.OrdersTable.Properties
	require.NotEmpty(t, p.KeySchema, "template.yaml defines OrdersTable")
	require.Equal(t, "ExamplesEnabled", def.Resources.OrdersTable.Condition, "the examples are off unless asked for")

	in := &dynamodb.CreateTableInput{
		TableName:   aws.String(fmt.Sprintf("orders-%s-%d", strings.ReplaceAll(t.Name(), "/", "-"), tableSeq.Add(1))),
		BillingMode: types.BillingModePayPerRequest,
		KeySchema:   keySchema(p.KeySchema),
	}
	for _, a := range p.AttributeDefinitions {
		in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{
			AttributeName: aws.String(a.AttributeName), AttributeType: types.ScalarAttributeType(a.AttributeType)})
	}
	for _, g := range p.GlobalSecondaryIndexes {
		in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, types.GlobalSecondaryIndex{
			IndexName: aws.String(g.IndexName), KeySchema: keySchema(g.KeySchema),
			Projection: &types.Projection{ProjectionType: types.ProjectionType(g.Projection.ProjectionType)}})
	}
	db := dynamodb.NewFromConfig(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = db.CreateTable(ctx, in)
	require.NoError(t, err)
	t.Cleanup(func() {
		_, err := db.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: in.TableName})
		require.NoError(t, err)
	})
	return orders.NewStore(db, *in.TableName), db
}
