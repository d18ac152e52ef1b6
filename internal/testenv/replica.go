package testenv

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/sundialhq/sundial/infra/gateway"
	"github.com/sundialhq/sundial/infra/localaws"
	"github.com/sundialhq/sundial/infra/sam"
)

// Replica returns the operator's AWS configuration on an endpoint of its own, in front of the
// same engines and stack as Stack's, whose DynamoDB answers lag as a global secondary index
// and an eventually consistent read may on AWS (gateway.Replica), and the replica itself.
// The endpoint checks no IAM policy; it is closed when the test ends.
func Replica(t testing.TB, rc gateway.ReplicaConfig) (aws.Config, *gateway.Replica) {
	t.Helper()
	env := Local(t)
	rp, err := gateway.NewReplica(rc)
	if err != nil {
		t.Fatal(err)
	}
	ddb, queues := env.Engines()
	g := &gateway.Gateway{DynamoDB: ddb, SQS: queues, EngineSecret: env.EngineSecret(), Region: localaws.Region, Account: sam.Account, Replica: rp,
		Partitions: env.DynamoDBPartitions(), Colocate: localaws.Colocated}
	url, err := g.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Close() })
	cfg := env.Operator()
	cfg.BaseEndpoint = aws.String(url)
	return cfg, rp
}
