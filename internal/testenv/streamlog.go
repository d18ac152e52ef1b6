package testenv

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/sundialhq/sundial/internal/dynamo"
	"github.com/sundialhq/sundial/internal/timer"
)

// The execution log follows the timers table's stream (dynamo.ExecutionFromImages). Tests that
// run the functions' handlers directly, without the local platform's log writer, call DrainLog
// instead: it reads every shard of the shared stack's stream from its start, once, in order,
// and writes the entries the records yield, as the LogWriterFunction does on Lambda (whose
// event source is tested in infra/lambdarun).
type streamDrainer struct {
	mu    sync.Mutex
	api   *dynamodbstreams.Client
	arn   string
	store *dynamo.Store
	iters map[string]*string // shard id -> next iterator; nil once the shard is closed and read
}

var (
	drainerOnce sync.Once
	drainer     *streamDrainer
	drainerErr  error
)

// DrainLog writes the log entries of every execution ended so far on the shared stack.
func DrainLog(t testing.TB) {
	t.Helper()
	drainerOnce.Do(func() {
		cfg, out := Stack(t)
		ddb := dynamodb.NewFromConfig(cfg)
		d, err := ddb.DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: &out.TimersTable})
		if err != nil {
			drainerErr = err
			return
		}
		if d.Table.LatestStreamArn == nil {
			drainerErr = fmt.Errorf("table %s has no stream", out.TimersTable)
			return
		}
		drainer = &streamDrainer{api: dynamodbstreams.NewFromConfig(cfg), arn: *d.Table.LatestStreamArn,
			store: dynamo.New(ddb, out.TimersTable, out.LogTable, 30*24*time.Hour), iters: map[string]*string{}}
	})
	if drainerErr != nil {
		t.Fatalf("testenv: read the timers table's stream: %v", drainerErr)
	}
	if err := drainer.drain(context.Background()); err != nil {
		t.Fatalf("testenv: write the log from the stream: %v", err)
	}
}

func (d *streamDrainer) drain(ctx context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	var shards []streamtypes.Shard
	var start *string
	for {
		out, err := d.api.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: &d.arn, ExclusiveStartShardId: start})
		if err != nil {
			return err
		}
		shards = append(shards, out.StreamDescription.Shards...)
		if start = out.StreamDescription.LastEvaluatedShardId; start == nil {
			break
		}
	}
	for _, sh := range shards { // parents are listed before their children
		id := aws.ToString(sh.ShardId)
		it, seen := d.iters[id]
		if seen && it == nil {
			continue
		}
		if !seen {
			out, err := d.api.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: &d.arn, ShardId: sh.ShardId,
				ShardIteratorType: streamtypes.ShardIteratorTypeTrimHorizon})
			if err != nil {
				return err
			}
			it = out.ShardIterator
		}
		for it != nil {
			out, err := d.api.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: it})
			if err != nil {
				return err
			}
			var es []timer.Execution
			for _, r := range out.Records {
				oldImg, err := attributevalue.FromDynamoDBStreamsMap(r.Dynamodb.OldImage)
				if err != nil {
					return err
				}
				newImg, err := attributevalue.FromDynamoDBStreamsMap(r.Dynamodb.NewImage)
				if err != nil {
					return err
				}
				e, ok, err := dynamo.ExecutionFromImages(oldImg, newImg)
				if err != nil {
					return err
				}
				if ok {
					es = append(es, e)
				}
			}
			if err := d.store.PutExecutions(ctx, es); err != nil {
				return err
			}
			it = out.NextShardIterator
			if len(out.Records) == 0 {
				break // caught up with an open shard (or a closed one is read: it is nil)
			}
		}
		d.iters[id] = it
	}
	return nil
}
