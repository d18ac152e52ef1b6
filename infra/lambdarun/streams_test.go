package lambdarun_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/eventfilter"
	"github.com/sundialhq/sundial/infra/lambdarun"
	"github.com/sundialhq/sundial/internal/testenv"
)

// streamTable creates a table with a NEW_AND_OLD_IMAGES stream on the local AWS (through its
// gateway, as the operator) and returns its name and stream ARN.
func streamTable(t *testing.T) (*dynamodb.Client, string, string) {
	t.Helper()
	ctx := context.Background()
	cfg, _ := testenv.Stack(t)
	db := dynamodb.NewFromConfig(cfg)
	name := "streams-" + testenv.Unique(t)
	_, err := db.CreateTable(ctx, &dynamodb.CreateTableInput{TableName: aws.String(name), BillingMode: ddbtypes.BillingModePayPerRequest,
		AttributeDefinitions: []ddbtypes.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: ddbtypes.ScalarAttributeTypeS}},
		KeySchema:            []ddbtypes.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: ddbtypes.KeyTypeHash}},
		StreamSpecification:  &ddbtypes.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: ddbtypes.StreamViewTypeNewAndOldImages}})
	require.NoError(t, err)
	t.Cleanup(func() {
		_, _ = db.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(name)})
	})
	d, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
	require.NoError(t, err)
	arn := aws.ToString(d.Table.LatestStreamArn)
	require.Equal(t, "arn:aws:dynamodb:us-east-1:000000000000:table/"+name+"/stream/"+aws.ToString(d.Table.LatestStreamLabel), arn,
		"the gateway names DynamoDB Local's stream in the stack's region")
	return db, name, arn
}

// streamsAs is a DynamoDB Streams client signed with a function's role of the test stack.
func streamsAs(t *testing.T, function string) *dynamodbstreams.Client {
	t.Helper()
	cfg, err := testenv.Local(t).Config(testenv.StackName(), function)
	require.NoError(t, err)
	return dynamodbstreams.NewFromConfig(cfg)
}

func putItem(t *testing.T, db *dynamodb.Client, table, pk string, attrs map[string]string) {
	t.Helper()
	item := map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: pk}}
	for k, v := range attrs {
		item[k] = &ddbtypes.AttributeValueMemberS{Value: v}
	}
	_, err := db.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: item})
	require.NoError(t, err)
}

// eventLog is a stream handler keeping every event it was given.
type eventLog struct {
	mu     sync.Mutex
	events []events.DynamoDBEvent
	fail   func(n int, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error)
}

func (l *eventLog) handle(_ context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, ev)
	if l.fail != nil {
		return l.fail(len(l.events), ev)
	}
	return events.DynamoDBEventResponse{}, nil
}

func (l *eventLog) batches() [][]events.DynamoDBEventRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out [][]events.DynamoDBEventRecord
	for _, ev := range l.events {
		out = append(out, ev.Records)
	}
	return out
}

// values is each batch's records' new "v", batch after batch.
func (l *eventLog) values() [][]string {
	var out [][]string
	for _, b := range l.batches() {
		var vs []string
		for _, r := range b {
			vs = append(vs, r.Change.NewImage["v"].String())
		}
		out = append(out, vs)
	}
	return out
}

// seqLess orders two sequence numbers of one shard (decimal digits, not always zero-padded).
func seqLess(a, b string) bool { return len(a) < len(b) || len(a) == len(b) && a < b }

func streamSource(streams lambdarun.StreamsAPI, arn string, fn lambdarun.Invoker) *lambdarun.StreamSource {
	return &lambdarun.StreamSource{Streams: streams, StreamArn: arn, Function: fn, BatchSize: 100,
		MaximumRetryAttempts: lambdarun.NoRetryLimit, PollInterval: 20 * time.Millisecond, DiscoverInterval: 100 * time.Millisecond,
		RetryBackoff: 20 * time.Millisecond, MaxRetryBackoff: 200 * time.Millisecond}
}

// Against DynamoDB Local, through the gateway, with the log writer's role: the records that
// pass the filter arrive each once, as Lambda's events, a key's in the order they were written.
// The local DynamoDB is partitioned (each engine's stream is a shard), so, as on AWS, order
// holds within a shard (a batch comes from one shard) and per key, not across keys.
func TestStreamSourceOnDynamoDBLocal(t *testing.T) {
	t.Parallel()
	db, table, arn := streamTable(t)
	began := time.Now()
	var want []string
	for i := range 30 {
		pk := fmt.Sprintf("item-%02d", i)
		putItem(t, db, table, pk, map[string]string{"state": "new"})
		if i%3 != 0 {
			putItem(t, db, table, pk, map[string]string{"state": "done", "note": "n" + pk}) // MODIFY, passes
			want = append(want, pk)
		} else {
			putItem(t, db, table, pk, map[string]string{"state": "other"}) // MODIFY, filtered out
		}
		if i%5 == 0 {
			_, err := db.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{TableName: aws.String(table),
				Key: map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: pk}}})
			require.NoError(t, err)
		}
	}
	crit, err := eventfilter.Parse([]string{`{"eventName":["MODIFY"],"dynamodb":{"NewImage":{"state":{"S":["done"]}},"OldImage":{"note":{"S":[{"exists":false}]}}}}`})
	require.NoError(t, err)
	log := &eventLog{}
	src := streamSource(streamsAs(t, "LogWriterFunction"), arn, lambdarun.NewFunction("streams-ddblocal", log.handle, 5*time.Second))
	src.Filter, src.BatchSize = crit, 7
	run(t, src)
	drained(t, src)

	var got []string
	for _, b := range log.batches() {
		require.LessOrEqual(t, len(b), 7)
		last := ""
		for _, r := range b {
			got = append(got, r.Change.Keys["pk"].String())
			require.True(t, last == "" || seqLess(last, r.Change.SequenceNumber), "a batch is one shard's records in stream order")
			last = r.Change.SequenceNumber
			require.Equal(t, "MODIFY", r.EventName)
			require.Equal(t, "aws:dynamodb", r.EventSource)
			require.Equal(t, "1.1", r.EventVersion)
			require.Equal(t, "us-east-1", r.AWSRegion)
			require.Equal(t, arn, r.EventSourceArn)
			require.NotEmpty(t, r.EventID)
			require.Equal(t, "NEW_AND_OLD_IMAGES", r.Change.StreamViewType)
			require.Positive(t, r.Change.SizeBytes)
			require.Equal(t, "new", r.Change.OldImage["state"].String())
			require.Equal(t, "done", r.Change.NewImage["state"].String())
			require.Equal(t, "n"+r.Change.Keys["pk"].String(), r.Change.NewImage["note"].String())
			created := r.Change.ApproximateCreationDateTime.Time
			require.False(t, created.Before(began.Truncate(time.Minute)) || created.After(time.Now()), "created %s", created)
		}
	}
	require.ElementsMatch(t, want, got, "every passing record, once")
	st := src.Stats()
	require.EqualValues(t, 30+30+6, st.Read, "inserts, modifications, removals")
	require.EqualValues(t, len(want), st.Delivered)
	require.EqualValues(t, st.Read-st.Delivered, st.Filtered)

	// More writes later: Drained waits for them too.
	putItem(t, db, table, "item-00", map[string]string{"state": "new"})
	putItem(t, db, table, "item-00", map[string]string{"state": "done", "note": "late"})
	drained(t, src)
	b := log.batches()
	require.Equal(t, "late", b[len(b)-1][len(b[len(b)-1])-1].Change.NewImage["note"].String())
	var item00 []string // item-00's passing records: in the order written
	for _, b := range log.batches() {
		for _, r := range b {
			if r.Change.Keys["pk"].String() == "item-00" {
				item00 = append(item00, r.Change.NewImage["note"].String())
			}
		}
	}
	require.Equal(t, []string{"late"}, item00, "item-00's first MODIFY was filtered out")
	perKey := map[string]string{} // every key's records are in stream order
	for _, b := range log.batches() {
		for _, r := range b {
			k := r.Change.Keys["pk"].String()
			require.True(t, perKey[k] == "" || seqLess(perKey[k], r.Change.SequenceNumber), "%s's records in the order written", k)
			perKey[k] = r.Change.SequenceNumber
		}
	}
}

// A handler that fails once is given the same records again, and then the rest: nothing is
// lost. With ReportBatchItemFailures the retry starts at the record reported. The five records
// are one key's versions, so they are in one shard (the local DynamoDB is partitioned: a key's
// records are its engine's stream's), whose batches the assertions follow.
func TestStreamSourceRetriesOnDynamoDBLocal(t *testing.T) {
	t.Parallel()
	t.Run("FunctionError", func(t *testing.T) {
		t.Parallel()
		db, table, arn := streamTable(t)
		for i := range 5 {
			putItem(t, db, table, "k", map[string]string{"v": fmt.Sprint("v", i)})
		}
		log := &eventLog{fail: func(n int, _ events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
			if n == 1 {
				return events.DynamoDBEventResponse{}, errors.New("the log table is unavailable")
			}
			return events.DynamoDBEventResponse{}, nil
		}}
		src := streamSource(streamsAs(t, "LogWriterFunction"), arn, lambdarun.NewFunction("streams-fail-once", log.handle, 5*time.Second))
		src.BatchSize = 3
		run(t, src)
		drained(t, src)
		require.Equal(t, [][]string{{"v0", "v1", "v2"}, {"v0", "v1", "v2"}, {"v3", "v4"}}, log.values())
		require.Contains(t, src.Stats().LastError, "the log table is unavailable")
	})
	t.Run("ReportBatchItemFailures", func(t *testing.T) {
		t.Parallel()
		db, table, arn := streamTable(t)
		for i := range 5 {
			putItem(t, db, table, "k", map[string]string{"v": fmt.Sprint("v", i)})
		}
		log := &eventLog{fail: func(n int, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
			if n == 1 {
				return events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{
					{ItemIdentifier: ev.Records[3].Change.SequenceNumber}, {ItemIdentifier: ev.Records[2].Change.SequenceNumber}}}, nil
			}
			return events.DynamoDBEventResponse{}, nil
		}}
		src := streamSource(streamsAs(t, "LogWriterFunction"), arn, lambdarun.NewFunction("streams-rbif", log.handle, 5*time.Second))
		src.ReportBatchItemFailures = true
		run(t, src)
		drained(t, src)
		require.Equal(t, [][]string{{"v0", "v1", "v2", "v3", "v4"}, {"v2", "v3", "v4"}}, log.values())
		require.EqualValues(t, 1, src.Stats().PartialFailures)
	})
}

// A role without stream grants is refused each stream call, as AWS refuses it: the source
// delivers nothing and says why; the IAM check records the denial.
func TestStreamSourceNeedsTheStreamGrants(t *testing.T) {
	t.Parallel()
	_, _, arn := streamTable(t)
	log := &eventLog{}
	src := streamSource(streamsAs(t, "FetchFunction"), arn, lambdarun.NewFunction("streams-denied", log.handle, time.Second))
	run(t, src)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := src.Drained(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorContains(t, err, "AccessDeniedException")
	require.ErrorContains(t, err, "is not authorized to perform: dynamodb:DescribeStream on resource: "+arn)
	require.Empty(t, log.batches())
	var denied bool
	for _, d := range testenv.Local(t).Auth.Report().Denied {
		denied = denied || (d.Role == "FetchFunctionRole" && d.Call.Action == "dynamodb:DescribeStream" && d.Call.Resource == arn)
	}
	require.True(t, denied, "the IAM report lists the denial")

	_, err = streamsAs(t, "LogWriterFunction").DescribeStream(context.Background(), &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(arn)})
	require.NoError(t, err, "the log writer's role (AWSLambdaDynamoDBExecutionRole) may")
}

// What DynamoDB Local's streams do, as measured (they differ from AWS's where noted): these
// assertions fail when a new engine changes them, so that the README's account is revisited.
func TestDynamoDBLocalStreamsAsMeasured(t *testing.T) {
	t.Parallel()
	db, table, arn := streamTable(t)
	streams := streamsAs(t, "LogWriterFunction")
	ctx := context.Background()
	putItem(t, db, table, "a", map[string]string{"v": "1"})
	putItem(t, db, table, "a", map[string]string{"v": "1"}) // no change: no record (as on AWS)
	putItem(t, db, table, "a", map[string]string{"v": "2"})
	d, err := streams.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(arn)})
	require.NoError(t, err)
	// The local DynamoDB is partitioned over engines (infra/gateway/partition.go), each engine's
	// stream one shard of the table's: so one shard per engine means one per DynamoDB Local stream.
	engines := len(testenv.Local(t).DynamoDBPartitions())
	require.Len(t, d.StreamDescription.Shards, engines, "one shard per stream per engine; DynamoDB Local rolls shards over only in its embedded (in-JVM) mode, never as a server")
	var out *dynamodbstreams.GetRecordsOutput
	for k, sh := range d.StreamDescription.Shards {
		require.Nil(t, sh.ParentShardId, "an engine's shard has no parent: never rolled over")
		it, err := streams.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(arn),
			ShardId: sh.ShardId, ShardIteratorType: streamtypes.ShardIteratorTypeTrimHorizon})
		require.NoError(t, err)
		// An iterator begins with its engine's stream's ARN (as AWS's with its stream's): the
		// first engine's stream is the table's; each other engine's has its own label.
		stream := arn
		if k > 0 {
			stream = arn[:strings.LastIndex(arn, "/stream/")+len("/stream/")]
		}
		require.True(t, strings.HasPrefix(aws.ToString(it.ShardIterator), stream), "an iterator begins with its stream's ARN, as AWS's: %s", aws.ToString(it.ShardIterator))
		if k == 0 {
			require.True(t, strings.HasPrefix(aws.ToString(it.ShardIterator), arn+"|"), "the first engine's shard's iterator names the table's stream")
		}
		got, err := streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: it.ShardIterator})
		require.NoError(t, err)
		if len(got.Records) > 0 {
			require.Nil(t, out, "one key's records are in one shard (its engine's)")
			out = got
		}
	}
	require.NotNil(t, out)
	require.Len(t, out.Records, 2, "a write is in the stream when it returns")
	for _, r := range out.Records {
		require.Regexp(t, `^\d{21}$`, aws.ToString(r.Dynamodb.SequenceNumber), "sequence numbers: 21 digits, zero-padded, counting from 1 (AWS: up to 40 digits)")
		require.Regexp(t, regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-`), aws.ToString(r.EventID), "event IDs are UUIDs (AWS: 32 hex digits)")
		created := aws.ToTime(r.Dynamodb.ApproximateCreationDateTime)
		require.Equal(t, created.Truncate(time.Minute), created, "ApproximateCreationDateTime is rounded down to the minute (AWS: to the second)")
		require.Equal(t, "us-east-1", aws.ToString(r.AwsRegion), "the gateway's translation of DynamoDB Local's region, ddblocal")
	}
	require.NotNil(t, out.NextShardIterator, "an open shard always gives a next iterator")
	require.True(t, slices.IsSortedFunc(out.Records, func(a, b streamtypes.Record) int {
		return strings.Compare(aws.ToString(a.Dynamodb.SequenceNumber), aws.ToString(b.Dynamodb.SequenceNumber))
	}))
}
