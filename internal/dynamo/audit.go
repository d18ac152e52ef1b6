package dynamo

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/sundialhq/sundial/internal/audit"
)

// The audit trail lives in the log table, one partition per UTC day ("AUDIT#2026-11-25",
// no instance name contains '#'), sorted by time then ID. The API's role may PutItem only
// items whose partition key begins with AuditPrefix (an IAM condition on
// dynamodb:LeadingKeys), and may not update or delete any item of the table.
const AuditPrefix = "AUDIT#"

// AuditLog is the audit trail on the log table; records expire after retention.
type AuditLog struct {
	api       API
	table     string
	retention time.Duration
	now       func() time.Time
}

// NewAuditLog returns the trail on the log table.
func NewAuditLog(api API, logTable string, retention time.Duration) *AuditLog {
	return &AuditLog{api: api, table: logTable, retention: retention, now: time.Now}
}

type auditItem struct {
	PK        string `dynamodbav:"pk"`
	SK        string `dynamodbav:"sk"`
	Kind      string `dynamodbav:"kind"`
	Record    string `dynamodbav:"record"` // the Record as JSON
	ExpiresAt int64  `dynamodbav:"expiresAt"`
}

func auditPK(day time.Time) string { return AuditPrefix + day.UTC().Format(time.DateOnly) }

// Add puts the record, never over another (attribute_not_exists).
func (l *AuditLog) Add(ctx context.Context, r audit.Record) error {
	r = audit.Fill(r, l.now())
	body, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode audit record: %w", err)
	}
	item, err := attributevalue.MarshalMap(auditItem{PK: auditPK(r.At), SK: r.At.UTC().Format(logSortLayout) + "#" + r.ID, Kind: "audit",
		Record: string(body), ExpiresAt: r.At.Add(l.retention).Unix()})
	if err != nil {
		return fmt.Errorf("encode audit record: %w", err)
	}
	_, err = l.api.PutItem(ctx, &dynamodb.PutItemInput{TableName: &l.table, Item: item, ConditionExpression: aws.String("attribute_not_exists(pk)")})
	if err != nil {
		return fmt.Errorf("audit record of %s: %w", r.Action, err)
	}
	return nil
}

// List walks the days from today back to q.Since, newest first.
func (l *AuditLog) List(ctx context.Context, q audit.Query) ([]audit.Record, error) {
	if err := q.Validate(); err != nil {
		return nil, err
	}
	limit := q.Limit
	if limit == 0 {
		limit = audit.DefaultLimit
	}
	now := l.now().UTC()
	since := q.Since
	if since.IsZero() {
		since = now.AddDate(0, 0, -audit.DefaultDays)
	}
	out := []audit.Record{}
	for day := now.Truncate(24 * time.Hour); !day.Before(since.UTC().Truncate(24 * time.Hour)); day = day.AddDate(0, 0, -1) {
		kc := expression.Key("pk").Equal(expression.Value(auditPK(day))).And(expression.Key("sk").GreaterThanEqual(expression.Value(since.UTC().Format(logSortLayout))))
		expr, err := expression.NewBuilder().WithKeyCondition(kc).Build()
		if err != nil {
			return nil, err
		}
		p := dynamodb.NewQueryPaginator(l.api, &dynamodb.QueryInput{TableName: &l.table, KeyConditionExpression: expr.KeyCondition(),
			ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(), ScanIndexForward: aws.Bool(false)})
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				return nil, fmt.Errorf("read the audit trail: %w", err)
			}
			var items []auditItem
			if err := attributevalue.UnmarshalListOfMaps(page.Items, &items); err != nil {
				return nil, fmt.Errorf("decode the audit trail: %w", err)
			}
			for _, it := range items {
				var r audit.Record
				if err := json.Unmarshal([]byte(it.Record), &r); err != nil {
					return nil, fmt.Errorf("decode audit record %s: %w", it.SK, err)
				}
				if q.Match(r) {
					out = append(out, r)
					if len(out) == limit {
						return out, nil
					}
				}
			}
		}
	}
	return out, nil
}

// AuditLog is the audit trail on the store's log table, kept retention.
func (s *Store) AuditLog(retention time.Duration) *AuditLog {
	return NewAuditLog(s.api, s.logs, retention)
}
