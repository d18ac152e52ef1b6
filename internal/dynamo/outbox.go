package dynamo

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The events outbox: EventBridge events the log writer could not put, kept in the log table
// (partition pendingEventsPK, one item per event, keyed by the event's id so an event kept
// twice is one item) until recovery's sweep puts them (internal/events). They expire with
// the log's retention. Timer names cannot contain '#', so no instance's log partition is it.
const pendingEventsPK = "E#pending"

// PutPendingEvents keeps events (their ids and JSON bodies) in the outbox.
func (s *Store) PutPendingEvents(ctx context.Context, ids []string, bodies [][]byte) error {
	if len(ids) != len(bodies) {
		return fmt.Errorf("pending events: %d ids for %d bodies", len(ids), len(bodies))
	}
	exp := strconv.FormatInt(time.Now().Add(s.retention).Unix(), 10)
	seen := map[string]bool{}
	var reqs []types.WriteRequest
	for i, id := range ids {
		if seen[id] {
			continue // one request may not name an item twice
		}
		seen[id] = true
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: map[string]types.AttributeValue{
			"pk":        &types.AttributeValueMemberS{Value: pendingEventsPK},
			"sk":        &types.AttributeValueMemberS{Value: id},
			"event":     &types.AttributeValueMemberS{Value: string(bodies[i])},
			"expiresAt": &types.AttributeValueMemberN{Value: exp},
		}}})
	}
	return s.batchWriteLog(ctx, reqs)
}

// PendingEvents reads up to limit events from the outbox.
func (s *Store) PendingEvents(ctx context.Context, limit int) (ids []string, bodies [][]byte, err error) {
	expr, err := expression.NewBuilder().WithKeyCondition(expression.Key("pk").Equal(expression.Value(pendingEventsPK))).Build()
	if err != nil {
		return nil, nil, err
	}
	out, err := s.api.Query(ctx, &dynamodb.QueryInput{TableName: &s.logs, KeyConditionExpression: expr.KeyCondition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(), Limit: aws.Int32(int32(limit)), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, nil, fmt.Errorf("read pending events: %w", err)
	}
	for _, it := range out.Items {
		sk, _ := it["sk"].(*types.AttributeValueMemberS)
		ev, _ := it["event"].(*types.AttributeValueMemberS)
		if sk == nil || ev == nil {
			continue
		}
		ids, bodies = append(ids, sk.Value), append(bodies, []byte(ev.Value))
	}
	return ids, bodies, nil
}

// DeletePendingEvents removes events from the outbox.
func (s *Store) DeletePendingEvents(ctx context.Context, ids []string) error {
	var reqs []types.WriteRequest
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			continue
		}
		seen[id] = true
		reqs = append(reqs, types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: pendingEventsPK}, "sk": &types.AttributeValueMemberS{Value: id}}}})
	}
	return s.batchWriteLog(ctx, reqs)
}
