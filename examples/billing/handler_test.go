package billing_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/actionkit"
	"github.com/sundialhq/sundial/examples/billing"
)

// fakeTable is the runs table: sort keys of kind "run", in order; Query pages by two.
type fakeTable struct{ at []string }

func (f *fakeTable) PutItem(_ context.Context, in *dynamodb.PutItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	f.at = append(f.at, in.Item["at"].(*types.AttributeValueMemberS).Value)
	slices.Sort(f.at)
	return &dynamodb.PutItemOutput{}, nil
}

func (f *fakeTable) Query(_ context.Context, in *dynamodb.QueryInput, _ ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	cut := in.ExpressionAttributeValues[":cut"].(*types.AttributeValueMemberS).Value
	after := ""
	if in.ExclusiveStartKey != nil {
		after = in.ExclusiveStartKey["at"].(*types.AttributeValueMemberS).Value
	}
	out := &dynamodb.QueryOutput{}
	for _, at := range f.at {
		if at > after && at < cut {
			item := map[string]types.AttributeValue{"kind": &types.AttributeValueMemberS{Value: "run"}, "at": &types.AttributeValueMemberS{Value: at}}
			if len(out.Items) == 2 {
				out.LastEvaluatedKey = out.Items[1]
				break
			}
			out.Items = append(out.Items, item)
		}
	}
	return out, nil
}

func (f *fakeTable) DeleteItem(_ context.Context, in *dynamodb.DeleteItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	at := in.Key["at"].(*types.AttributeValueMemberS).Value
	f.at = slices.DeleteFunc(f.at, func(s string) bool { return s == at })
	return &dynamodb.DeleteItemOutput{}, nil
}

func TestHandler(t *testing.T) {
	ctx := context.Background()
	db := &fakeTable{}
	h := &billing.Handler{DB: db, Table: "runs"}
	day := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	for i := range 5 {
		res, err := h.Handle(ctx, actionkit.Payload{Timer: "Invoices", ScheduledAt: day.AddDate(0, 0, i*10), ExecutionID: "e" + string(rune('a'+i)),
			Properties: map[string]string{}})
		require.NoError(t, err)
		require.Equal(t, 1, res.Written)
	}
	require.Len(t, db.at, 5)
	require.True(t, strings.HasPrefix(db.at[0], "2026-11-01T10:00:00Z#ea"))

	// Cleanup on Dec 31 with 25 days kept: the runs of Nov 1, 11, 21 and Dec 1 go (before Dec 6).
	res, err := h.Handle(ctx, actionkit.Payload{Timer: "Cleanup", ScheduledAt: time.Date(2026, 12, 31, 3, 30, 0, 0, time.UTC),
		Properties: map[string]string{"task": "cleanup", "retentionDays": "25"}})
	require.NoError(t, err)
	require.Equal(t, 4, res.Deleted)
	require.Len(t, db.at, 1)
	require.True(t, strings.HasPrefix(db.at[0], "2026-12-11"))

	_, err = h.Handle(ctx, actionkit.Payload{Timer: "Cleanup", Properties: map[string]string{"task": "cleanup", "retentionDays": "-1"}})
	require.ErrorContains(t, err, "retentionDays")
	_, err = h.Handle(ctx, actionkit.Payload{Timer: "X", Properties: map[string]string{"task": "refund"}})
	require.ErrorContains(t, err, `got "refund"`)
}
