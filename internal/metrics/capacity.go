package metrics

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
)

// capacityID names the middleware that measures DynamoDB's consumed capacity.
const capacityID = "SundialMetricsConsumedCapacity"

// MeasureCapacity makes every DynamoDB client later built from cfg ask for its requests'
// consumed capacity (ReturnConsumedCapacity=INDEXES: the table's and every index's units, as
// DynamoDB bills them) and adds what DynamoDB reports to the operation's WriteUnits and
// ReadUnits. A request that fails (a condition not met) reports none: DynamoDB bills it, and
// the cost model counts it.
func (c *Counter) MeasureCapacity(cfg *aws.Config) {
	cfg.APIOptions = append(cfg.APIOptions, func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc(capacityID, c.capacity), middleware.After)
	})
}

func (c *Counter) capacity(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
	const indexes = types.ReturnConsumedCapacityIndexes
	write := true
	switch v := in.Parameters.(type) {
	case *dynamodb.PutItemInput:
		v.ReturnConsumedCapacity = indexes
	case *dynamodb.UpdateItemInput:
		v.ReturnConsumedCapacity = indexes
	case *dynamodb.DeleteItemInput:
		v.ReturnConsumedCapacity = indexes
	case *dynamodb.BatchWriteItemInput:
		v.ReturnConsumedCapacity = indexes
	case *dynamodb.TransactWriteItemsInput:
		v.ReturnConsumedCapacity = indexes
	case *dynamodb.GetItemInput:
		v.ReturnConsumedCapacity, write = indexes, false
	case *dynamodb.QueryInput:
		v.ReturnConsumedCapacity, write = indexes, false
	case *dynamodb.ScanInput:
		v.ReturnConsumedCapacity, write = indexes, false
	case *dynamodb.BatchGetItemInput:
		v.ReturnConsumedCapacity, write = indexes, false
	case *dynamodb.TransactGetItemsInput:
		v.ReturnConsumedCapacity, write = indexes, false
	default:
		return next.HandleInitialize(ctx, in)
	}
	out, md, err := next.HandleInitialize(ctx, in)
	if err != nil {
		return out, md, err
	}
	var caps []types.ConsumedCapacity
	one := func(cc *types.ConsumedCapacity) {
		if cc != nil {
			caps = append(caps, *cc)
		}
	}
	switch r := out.Result.(type) {
	case *dynamodb.PutItemOutput:
		one(r.ConsumedCapacity)
	case *dynamodb.UpdateItemOutput:
		one(r.ConsumedCapacity)
	case *dynamodb.DeleteItemOutput:
		one(r.ConsumedCapacity)
	case *dynamodb.GetItemOutput:
		one(r.ConsumedCapacity)
	case *dynamodb.QueryOutput:
		one(r.ConsumedCapacity)
	case *dynamodb.ScanOutput:
		one(r.ConsumedCapacity)
	case *dynamodb.BatchGetItemOutput:
		caps = r.ConsumedCapacity
	case *dynamodb.BatchWriteItemOutput:
		caps = r.ConsumedCapacity
	case *dynamodb.TransactWriteItemsOutput:
		caps = r.ConsumedCapacity
	case *dynamodb.TransactGetItemsOutput:
		caps = r.ConsumedCapacity
	}
	// On-demand tables report CapacityUnits (the table's and the indexes' together) without
	// the read/write split: the operation tells which it is.
	var st Stat
	for _, cc := range caps {
		units := aws.ToFloat64(cc.CapacityUnits)
		st.CapacityUnits += units
		if write {
			st.WriteUnits += units
		} else {
			st.ReadUnits += units
		}
	}
	c.Record(Op{Service: middleware.GetServiceID(ctx), Operation: middleware.GetOperationName(ctx)}, st)
	return out, md, err
}
