package dynamo

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/audit"
)

// queryCounter answers every Query with no items and counts them.
type queryCounter struct {
	API
	queries int
}

func (q *queryCounter) Query(context.Context, *dynamodb.QueryInput, ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	q.queries++
	return &dynamodb.QueryOutput{}, nil
}

// TestAuditSinceBoundedByRetention: a listing since 1970 reads the days of the retention
// (one Query a day), not every day since 1970 (~20,400 Queries).
func TestAuditSinceBoundedByRetention(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name  string
		since time.Time
		want  int
	}{
		{"since 1970: the retention's 90 days and today", time.Unix(0, 0), 91},
		{"since within the retention: its days", now.AddDate(0, 0, -3), 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := &queryCounter{}
			l := NewAuditLog(api, "log", 90*24*time.Hour)
			l.now = func() time.Time { return now }
			_, err := l.List(context.Background(), audit.Query{Since: tc.since, Limit: 10})
			require.NoError(t, err)
			require.Equal(t, tc.want, api.queries)
		})
	}
}
