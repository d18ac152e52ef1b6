package orders

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// DynamoDBAPI is the part of *dynamodb.Client the store uses.
type DynamoDBAPI interface {
	Query(ctx context.Context, in *dynamodb.QueryInput, optFns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error)
	Scan(ctx context.Context, in *dynamodb.ScanInput, optFns ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
}

var _ DynamoDBAPI = (*dynamodb.Client)(nil)

// Table layout (template.yaml, OrdersTable).
const (
	IndexToPush   = "toPush"
	attrID        = "order_id"
	attrBucket    = "push_bucket"
	attrScheduled = "scheduled_push_time"
	attrState     = "order_state"
	attrPushState = "order_push_state"
	attrRetry     = "retry_count"
	attrUpdated   = "update_time"
	attrError     = "push_error"
)

// ErrConflict is returned when a conditional write finds the order changed since it was read
// (pushed, failed or delayed by someone else): nothing was written.
var ErrConflict = errors.New("orders: the order changed since it was read")

// Repository is what a run needs from the orders table.
type Repository interface {
	// Due returns up to limit of the shard's orders that are pushable and due at now, oldest
	// scheduled first, as read (consistently) from the table.
	Due(ctx context.Context, now time.Time, limit int, shard Shard) ([]Order, error)
	// Apply writes a push attempt's decision, on the condition that the order is still as
	// read (not pushed nor failed, same retry_count); otherwise it returns ErrConflict.
	Apply(ctx context.Context, o Order, d Decision, now time.Time) error
}

// Store is the DynamoDB adapter of the orders table.
type Store struct {
	DB    DynamoDBAPI
	Table string
	// Start picks the bucket a run reads first (default random): a run that fills its batch
	// from the first buckets must not leave the same others waiting every time.
	Start func(n int) int
}

var _ Repository = (*Store)(nil)

// NewStore returns the adapter of table.
func NewStore(db DynamoDBAPI, table string) *Store { return &Store{DB: db, Table: table} }

// item is an order as stored: push_bucket only while the order is pushable (the sparse index).
type item struct {
	Order
	PushBucket *int `dynamodbav:"push_bucket,omitempty"`
}

func toItem(o Order) (map[string]types.AttributeValue, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	it := item{Order: o}
	if o.Pushable() {
		b := bucket(o.ID)
		it.PushBucket = &b
	}
	av, err := attributevalue.MarshalMap(it)
	if err != nil {
		return nil, fmt.Errorf("orders: encode order %d: %w", o.ID, err)
	}
	return av, nil
}

func key(id int64) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{attrID: &types.AttributeValueMemberN{Value: strconv.FormatInt(id, 10)}}
}

// Put writes the order (replacing any with its id); push_bucket follows its states.
func (s *Store) Put(ctx context.Context, o Order) error {
	av, err := toItem(o)
	if err != nil {
		return err
	}
	if _, err := s.DB.PutItem(ctx, &dynamodb.PutItemInput{TableName: &s.Table, Item: av}); err != nil {
		return fmt.Errorf("orders: put order %d: %w", o.ID, err)
	}
	return nil
}

// PutAll writes the orders with BatchWriteItem, 25 at a time, retrying unprocessed items.
func (s *Store) PutAll(ctx context.Context, orders []Order) error {
	for chunk := range slices.Chunk(orders, 25) {
		var reqs []types.WriteRequest
		for _, o := range chunk {
			av, err := toItem(o)
			if err != nil {
				return err
			}
			reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: av}})
		}
		pending := map[string][]types.WriteRequest{s.Table: reqs}
		for try := 0; len(pending[s.Table]) > 0; try++ {
			if try > 0 {
				if err := sleep(ctx, backoff(try)); err != nil {
					return err
				}
			}
			out, err := s.DB.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: pending})
			if err != nil {
				return fmt.Errorf("orders: write %d orders: %w", len(pending[s.Table]), err)
			}
			pending = out.UnprocessedItems
		}
	}
	return nil
}

// Get reads one order consistently; ok is false if there is none.
func (s *Store) Get(ctx context.Context, id int64) (o Order, ok bool, err error) {
	out, err := s.DB.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.Table, Key: key(id), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return Order{}, false, fmt.Errorf("orders: get order %d: %w", id, err)
	}
	if out.Item == nil {
		return Order{}, false, nil
	}
	if err := attributevalue.UnmarshalMap(out.Item, &o); err != nil {
		return Order{}, false, fmt.Errorf("orders: decode order %d: %w", id, err)
	}
	return o, true, nil
}

// All reads every order (a Scan: for demos and tests, not for runs), by id.
func (s *Store) All(ctx context.Context) ([]Order, error) {
	var out []Order
	pages := dynamodb.NewScanPaginator(s.DB, &dynamodb.ScanInput{TableName: &s.Table, ConsistentRead: aws.Bool(true)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("orders: scan: %w", err)
		}
		var batch []Order
		if err := attributevalue.UnmarshalListOfMaps(page.Items, &batch); err != nil {
			return nil, fmt.Errorf("orders: decode: %w", err)
		}
		out = append(out, batch...)
	}
	slices.SortFunc(out, func(a, b Order) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

// Due queries the toPush index bucket by bucket (the shard's buckets, from a varying first
// one) for orders due at now, until it has limit of them, then reads those from the table
// consistently and keeps the ones still pushable and due: the index may lag behind a write.
func (s *Store) Due(ctx context.Context, now time.Time, limit int, shard Shard) ([]Order, error) {
	if limit <= 0 {
		return nil, nil
	}
	buckets, exact := shard.buckets()
	first := 0
	if s.Start != nil {
		first = s.Start(len(buckets))
	} else {
		first = rand.IntN(len(buckets))
	}
	var ids []int64
	for i := range buckets {
		b := buckets[(first+i)%len(buckets)]
		more, err := s.dueInBucket(ctx, b, now, limit-len(ids), shard, exact)
		if err != nil {
			return nil, err
		}
		ids = append(ids, more...)
		if len(ids) >= limit {
			break
		}
	}
	orders, err := s.getAll(ctx, ids)
	if err != nil {
		return nil, err
	}
	orders = slices.DeleteFunc(orders, func(o Order) bool { return !o.Due(now) || !shard.Has(o.ID) })
	slices.SortFunc(orders, func(a, b Order) int {
		return cmp.Or(cmp.Compare(a.ScheduledPushTime, b.ScheduledPushTime), cmp.Compare(a.ID, b.ID))
	})
	return orders, nil
}

// dueInBucket returns up to want ids of the shard's due orders in one bucket. When the bucket
// holds other shards' orders too (not exact), it reads on until it found want or the bucket's
// due orders ran out.
func (s *Store) dueInBucket(ctx context.Context, b int, now time.Time, want int, shard Shard, exact bool) ([]int64, error) {
	cond := expression.Key(attrBucket).Equal(expression.Value(b)).
		And(expression.Key(attrScheduled).LessThanEqual(expression.Value(int64(Ms(now)))))
	ex, err := expression.NewBuilder().WithKeyCondition(cond).Build()
	if err != nil {
		return nil, fmt.Errorf("orders: build query: %w", err)
	}
	page := int32(want)
	if !exact {
		page = int32(min(want*shard.Total, MaxBatch))
	}
	var ids []int64
	var start map[string]types.AttributeValue
	for {
		out, err := s.DB.Query(ctx, &dynamodb.QueryInput{
			TableName: &s.Table, IndexName: aws.String(IndexToPush),
			KeyConditionExpression:    ex.KeyCondition(),
			ExpressionAttributeNames:  ex.Names(),
			ExpressionAttributeValues: ex.Values(),
			ScanIndexForward:          aws.Bool(true), // oldest scheduled first
			Limit:                     aws.Int32(page),
			ExclusiveStartKey:         start,
		})
		if err != nil {
			return nil, fmt.Errorf("orders: query %s bucket %d: %w", IndexToPush, b, err)
		}
		for _, it := range out.Items {
			var k struct {
				ID int64 `dynamodbav:"order_id"`
			}
			if err := attributevalue.UnmarshalMap(it, &k); err != nil {
				return nil, fmt.Errorf("orders: decode %s key: %w", IndexToPush, err)
			}
			if shard.Has(k.ID) {
				ids = append(ids, k.ID)
			}
			if len(ids) == want {
				return ids, nil
			}
		}
		if out.LastEvaluatedKey == nil {
			return ids, nil
		}
		start = out.LastEvaluatedKey
	}
}

// getAll reads the orders consistently, 100 keys per BatchGetItem, retrying unprocessed keys.
func (s *Store) getAll(ctx context.Context, ids []int64) ([]Order, error) {
	var out []Order
	for chunk := range slices.Chunk(ids, 100) {
		keys := make([]map[string]types.AttributeValue, len(chunk))
		for i, id := range chunk {
			keys[i] = key(id)
		}
		pending := map[string]types.KeysAndAttributes{s.Table: {Keys: keys, ConsistentRead: aws.Bool(true)}}
		for try := 0; len(pending[s.Table].Keys) > 0; try++ {
			if try > 0 {
				if err := sleep(ctx, backoff(try)); err != nil {
					return nil, err
				}
			}
			res, err := s.DB.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: pending})
			if err != nil {
				return nil, fmt.Errorf("orders: read %d orders: %w", len(pending[s.Table].Keys), err)
			}
			var batch []Order
			if err := attributevalue.UnmarshalListOfMaps(res.Responses[s.Table], &batch); err != nil {
				return nil, fmt.Errorf("orders: decode: %w", err)
			}
			out = append(out, batch...)
			pending = res.UnprocessedKeys
		}
	}
	return out, nil
}

// Apply writes d with a conditional UpdateItem:
//
//	Pushed:  order_push_state = 100, push_bucket and push_error removed   if order_push_state = 0
//	Delayed: scheduled_push_time, retry_count + 1, push_error             if order_push_state = 0 and retry_count as read
//	Failed:  order_push_state = 90, push_bucket removed, push_error       if order_push_state = 0 and retry_count as read
//
// Removing push_bucket takes the order out of the toPush index. A failed condition is
// ErrConflict: a duplicate execution can never mark an order twice.
func (s *Store) Apply(ctx context.Context, o Order, d Decision, now time.Time) error {
	at := expression.Value(int64(Ms(now)))
	notDone := expression.Name(attrPushState).Equal(expression.Value(PushInitial))
	sameTries := expression.Name(attrRetry).Equal(expression.Value(o.RetryCount))
	if o.RetryCount == 0 {
		sameTries = expression.Or(expression.AttributeNotExists(expression.Name(attrRetry)), sameTries)
	}
	var upd expression.UpdateBuilder
	cond := expression.AttributeExists(expression.Name(attrID)).And(notDone)
	switch d.Outcome {
	case Pushed:
		upd = expression.Set(expression.Name(attrPushState), expression.Value(PushDone)).
			Set(expression.Name(attrUpdated), at).
			Remove(expression.Name(attrBucket)).
			Remove(expression.Name(attrError))
	case Delayed:
		upd = expression.Set(expression.Name(attrScheduled), expression.Value(int64(msCeil(d.NextPush)))).
			Set(expression.Name(attrRetry), expression.Value(d.RetryCount)).
			Set(expression.Name(attrUpdated), at).
			Set(expression.Name(attrError), expression.Value(d.Error))
		cond = cond.And(sameTries)
	case Failed:
		upd = expression.Set(expression.Name(attrPushState), expression.Value(PushFailed)).
			Set(expression.Name(attrUpdated), at).
			Set(expression.Name(attrError), expression.Value(d.Error)).
			Remove(expression.Name(attrBucket))
		cond = cond.And(sameTries)
	default:
		return fmt.Errorf("orders: order %d: unknown outcome %q", o.ID, d.Outcome)
	}
	ex, err := expression.NewBuilder().WithUpdate(upd).WithCondition(cond).Build()
	if err != nil {
		return fmt.Errorf("orders: build update: %w", err)
	}
	_, err = s.DB.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: &s.Table, Key: key(o.ID),
		UpdateExpression:          ex.Update(),
		ConditionExpression:       ex.Condition(),
		ExpressionAttributeNames:  ex.Names(),
		ExpressionAttributeValues: ex.Values(),
	})
	if _, ok := errors.AsType[*types.ConditionalCheckFailedException](err); ok {
		return fmt.Errorf("%w: order %d (%s)", ErrConflict, o.ID, d.Outcome)
	}
	if err != nil {
		return fmt.Errorf("orders: mark order %d %s: %w", o.ID, d.Outcome, err)
	}
	return nil
}

func backoff(try int) time.Duration {
	return min(time.Duration(1<<min(try, 6))*25*time.Millisecond, time.Second)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
