package dynamo

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/sundialhq/sundial/internal/timer"
)

// The execution log is derived from the timers table's stream (template.yaml,
// LogWriterFunction). An execution ends with exactly one successful write, the fenced finish
// (Store.Finish), whose record carries the item before it (holding execId and the run's
// attributes) and after it (no execId; lastExecId naming the execution, and the results).
// Nothing else removes execId from an item. So the records that end executions are exactly
// those ExecutionFromImages accepts, each names its execution, and the log item's key is the
// execution's (instance, start time, execution id): a record delivered twice writes the same
// item twice, and the log holds one entry per execution.

// ErrNotAFinish is a record that removed an execution without the finish that ends one: no
// writer of Sundial's does that, so it is reported, not logged as an execution.
var ErrNotAFinish = errors.New("an execution removed by a write that is not its finish")

// ExecutionFromImages returns the execution that a stream record of the timers table ended,
// and false for every other record (claims, edits, lease extensions, other items).
func ExecutionFromImages(oldImage, newImage map[string]types.AttributeValue) (timer.Execution, bool, error) {
	if len(oldImage) == 0 || len(newImage) == 0 {
		return timer.Execution{}, false, nil
	}
	if id, running := oldImage["execId"].(*types.AttributeValueMemberS); !running || id.Value == "" {
		return timer.Execution{}, false, nil
	}
	if _, running := newImage["execId"]; running {
		return timer.Execution{}, false, nil
	}
	if parkedBy(newImage) == oldImage["execId"].(*types.AttributeValueMemberS).Value {
		return timer.Execution{}, false, nil // the dependency gate parked the firing (Store.Park): no execution
	}
	var before, after instanceItem
	if err := attributevalue.UnmarshalMap(oldImage, &before); err != nil {
		return timer.Execution{}, false, fmt.Errorf("decode old image: %w", err)
	}
	if err := attributevalue.UnmarshalMap(newImage, &after); err != nil {
		return timer.Execution{}, false, fmt.Errorf("decode new image: %w", err)
	}
	if after.LastExecID != before.ExecID {
		return timer.Execution{}, false, fmt.Errorf("%w: the record of %s removes execution %s but names %q as the last",
			ErrNotAFinish, before.instance().Key, before.ExecID, after.LastExecID)
	}
	running, ended := before.instance(), after.instance()
	return timer.NewExecution(running, timer.Finish{
		LastDuration: ended.LastDuration, Outcome: ended.LastOutcome, Error: ended.LastError, Output: ended.LastOutput, Report: ended.LastReport,
		NextRun: ended.NextRun, GaveUp: after.LastGaveUp,
		// The finish adds this execution's skipped instants to the counter.
		Skipped: max(after.Skipped-before.Skipped, 0),
	}), true, nil
}

// PutExecutions writes log entries and the all-timers pages that list them (logPages), 25
// items a request (BatchWriteItem), until DynamoDB has taken every one (UnprocessedItems are
// sent again after a pause). A put replaces the item of the same execution, and the same
// batch makes the same pages, so writing a batch again changes nothing.
func (s *Store) PutExecutions(ctx context.Context, es []timer.Execution) error {
	var reqs []types.WriteRequest
	seen := make(map[[2]string]bool, len(es))
	for _, e := range es {
		// One request may not name an item twice; an execution delivered twice in one batch
		// is the same entry.
		k := [2]string{e.Key.String(), logSortKey(e)}
		if seen[k] {
			continue
		}
		seen[k] = true
		item, err := attributevalue.MarshalMap(toLogItem(e, s.retention))
		if err != nil {
			return fmt.Errorf("encode log entry for %s: %w", e.Key, err)
		}
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: item}})
	}
	pages, err := s.pageWrites(es)
	if err != nil {
		return err
	}
	return s.batchWriteLog(ctx, append(reqs, pages...))
}

// pageWrites are the puts of the pages that list es (logPages).
func (s *Store) pageWrites(es []timer.Execution) ([]types.WriteRequest, error) {
	var reqs []types.WriteRequest
	for _, p := range logPages(es, s.retention) {
		item, err := attributevalue.MarshalMap(p)
		if err != nil {
			return nil, fmt.Errorf("encode log page %s: %w", p.SK, err)
		}
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: item}})
	}
	return reqs, nil
}

// batchWriteLog puts items into the log table, 25 a request, until every one is taken.
func (s *Store) batchWriteLog(ctx context.Context, reqs []types.WriteRequest) error {
	for len(reqs) > 0 {
		n := min(len(reqs), 25)
		req := map[string][]types.WriteRequest{s.logs: reqs[:n]}
		reqs = reqs[n:]
		for attempt := 0; len(req) > 0; attempt++ {
			if attempt > 0 {
				if err := pause(ctx, attempt); err != nil {
					return fmt.Errorf("write log entries: %w", err)
				}
			}
			out, err := s.api.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: req})
			if err != nil {
				return fmt.Errorf("write log entries: %w", err)
			}
			req = out.UnprocessedItems
		}
	}
	return nil
}

// FromStreamImage converts an image of a stream record as Lambda delivers it to the SDK's
// attribute values.
func FromStreamImage(img map[string]events.DynamoDBAttributeValue) (map[string]types.AttributeValue, error) {
	if img == nil {
		return nil, nil
	}
	out := make(map[string]types.AttributeValue, len(img))
	for k, v := range img {
		av, err := fromStreamValue(v)
		if err != nil {
			return nil, fmt.Errorf("attribute %s: %w", k, err)
		}
		out[k] = av
	}
	return out, nil
}

func fromStreamValue(v events.DynamoDBAttributeValue) (types.AttributeValue, error) {
	switch v.DataType() {
	case events.DataTypeString:
		return &types.AttributeValueMemberS{Value: v.String()}, nil
	case events.DataTypeNumber:
		return &types.AttributeValueMemberN{Value: v.Number()}, nil
	case events.DataTypeBoolean:
		return &types.AttributeValueMemberBOOL{Value: v.Boolean()}, nil
	case events.DataTypeNull:
		return &types.AttributeValueMemberNULL{Value: true}, nil
	case events.DataTypeBinary:
		return &types.AttributeValueMemberB{Value: v.Binary()}, nil
	case events.DataTypeStringSet:
		return &types.AttributeValueMemberSS{Value: v.StringSet()}, nil
	case events.DataTypeNumberSet:
		return &types.AttributeValueMemberNS{Value: v.NumberSet()}, nil
	case events.DataTypeBinarySet:
		return &types.AttributeValueMemberBS{Value: v.BinarySet()}, nil
	case events.DataTypeList:
		l := v.List()
		out := make([]types.AttributeValue, len(l))
		for i, e := range l {
			av, err := fromStreamValue(e)
			if err != nil {
				return nil, err
			}
			out[i] = av
		}
		return &types.AttributeValueMemberL{Value: out}, nil
	case events.DataTypeMap:
		m, err := FromStreamImage(v.Map())
		if err != nil {
			return nil, err
		}
		return &types.AttributeValueMemberM{Value: m}, nil
	}
	return nil, fmt.Errorf("unknown attribute type %v", v.DataType())
}

// parkedBy is the claim a park ended (waiting.exec; "" when the item is not waiting).
func parkedBy(img map[string]types.AttributeValue) string {
	w, ok := img["waiting"].(*types.AttributeValueMemberM)
	if !ok {
		return ""
	}
	e, _ := w.Value["exec"].(*types.AttributeValueMemberS)
	if e == nil {
		return ""
	}
	return e.Value
}

// ParkFromImages returns the instance before and after a record of the timers table's
// stream when that record is a park (Store.Park: a claim ended by the dependency gate,
// without an execution); false for any other record.
func ParkFromImages(oldImage, newImage map[string]types.AttributeValue) (before, after timer.Instance, ok bool, err error) {
	id, running := oldImage["execId"].(*types.AttributeValueMemberS)
	if !running || id.Value == "" || parkedBy(newImage) != id.Value {
		return timer.Instance{}, timer.Instance{}, false, nil
	}
	if _, still := newImage["execId"]; still {
		return timer.Instance{}, timer.Instance{}, false, nil
	}
	if before, err = InstanceFromImage(oldImage); err != nil {
		return timer.Instance{}, timer.Instance{}, false, err
	}
	if after, err = InstanceFromImage(newImage); err != nil {
		return timer.Instance{}, timer.Instance{}, false, err
	}
	return before, after, true, nil
}
