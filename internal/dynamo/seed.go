package dynamo

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/sundialhq/sundial/internal/timer"
)

// InstanceItem is the timers-table item of an instance, exactly as Create writes it, for bulk
// loaders that write many at once with BatchWriteItem (the benchmark's scale phases); the
// instance's Shard must already be set (ShardOf).
func InstanceItem(in timer.Instance) (map[string]types.AttributeValue, error) {
	item, err := attributevalue.MarshalMap(toItem(in))
	if err != nil {
		return nil, fmt.Errorf("encode %s: %w", in.Key, err)
	}
	return item, nil
}
