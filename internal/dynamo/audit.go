package dynamo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/sundialhq/sundial/internal/audit"
)

// The audit trail lives in the log table, one partition per UTC day ("AUDIT#2026-11-25",
// no instance name contains '#'), sorted by time then ID. Its records form one hash chain
// (internal/audit, chain.go) whose head is the item AuditHeadPK/"HEAD": Add appends a record
// and moves the head in one transaction, the record put only where none is
// (attribute_not_exists) and the head only from the sequence number and hash it read, so
// concurrent writers serialise on the head (the loser reads it again and retries). The roles
// that audit may PutItem (and GetItem the head) only items whose partition key begins with
// AuditPrefix (an IAM condition on dynamodb:LeadingKeys), and may not update or delete any
// item of the table.
const AuditPrefix = "AUDIT#"

// AuditHeadPK is the partition of the chain's head (under AuditPrefix, so the same grant
// covers it; no day is named "HEAD").
const AuditHeadPK = AuditPrefix + "HEAD"

// auditAppendAttempts bounds how often Add reads the head again after losing it to another
// writer.
const auditAppendAttempts = 64

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
	// The chain (absent on records written before it).
	Seq  int64  `dynamodbav:"seq,omitempty"`
	Prev string `dynamodbav:"prev,omitempty"`
	Hash string `dynamodbav:"hash,omitempty"`
}

// auditHeadItem is the chain's head: the last record's sequence number, hash, time and key,
// and when the chain began. It does not expire.
type auditHeadItem struct {
	PK    string `dynamodbav:"pk"`
	SK    string `dynamodbav:"sk"`
	Kind  string `dynamodbav:"kind"`
	Seq   int64  `dynamodbav:"seq"`
	Hash  string `dynamodbav:"hash"`
	At    string `dynamodbav:"at"`
	Key   string `dynamodbav:"key"`
	Start string `dynamodbav:"start"`
}

func auditPK(day time.Time) string { return AuditPrefix + day.UTC().Format(time.DateOnly) }

// auditKey is how a record's storage key enters its hash.
func auditKey(pk, sk string) string { return pk + "/" + sk }

var auditHeadKey = map[string]types.AttributeValue{
	"pk": &types.AttributeValueMemberS{Value: AuditHeadPK}, "sk": &types.AttributeValueMemberS{Value: "HEAD"}}

// head reads the chain's head (strongly consistent: the writer's condition is on it).
func (l *AuditLog) head(ctx context.Context) (audit.Head, error) {
	out, err := l.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: &l.table, Key: auditHeadKey, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return audit.Head{}, fmt.Errorf("read the audit chain's head: %w", err)
	}
	if out.Item == nil {
		return audit.Head{}, nil
	}
	var it auditHeadItem
	if err := attributevalue.UnmarshalMap(out.Item, &it); err != nil {
		return audit.Head{}, fmt.Errorf("decode the audit chain's head: %w", err)
	}
	h := audit.Head{Present: true, Seq: it.Seq, Hash: it.Hash}
	h.At, _ = time.Parse(time.RFC3339Nano, it.At)
	h.Start, _ = time.Parse(time.RFC3339Nano, it.Start)
	return h, nil
}

// Add appends the record to the chain: the record (never over another, attribute_not_exists)
// and the head moved from the value read, in one transaction; another writer having moved
// the head first, it reads the head again and retries.
func (l *AuditLog) Add(ctx context.Context, r audit.Record) error {
	r = audit.Fill(r, l.now())
	body, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode audit record: %w", err)
	}
	pk, sk := auditPK(r.At), r.At.UTC().Format(logSortLayout)+"#"+r.ID
	for attempt := 0; attempt < auditAppendAttempts; attempt++ {
		if attempt > 0 {
			// Jittered, growing pause: writers that lost the head spread out.
			d := time.Duration(1+rand.IntN(5*min(attempt, 20))) * time.Millisecond
			select {
			case <-ctx.Done():
				return fmt.Errorf("audit record of %s: %w", r.Action, ctx.Err())
			case <-time.After(d):
			}
		}
		head, err := l.head(ctx)
		if err != nil {
			return fmt.Errorf("audit record of %s: %w", r.Action, err)
		}
		link := audit.Next(head, auditKey(pk, sk), string(body))
		item, err := attributevalue.MarshalMap(auditItem{PK: pk, SK: sk, Kind: "audit", Record: string(body),
			ExpiresAt: r.At.Add(l.retention).Unix(), Seq: link.Seq, Prev: link.Prev, Hash: link.Hash})
		if err != nil {
			return fmt.Errorf("encode audit record: %w", err)
		}
		start := head.Start
		if !head.Present {
			start = r.At
		}
		headItem, err := attributevalue.MarshalMap(auditHeadItem{PK: AuditHeadPK, SK: "HEAD", Kind: "audit-head", Seq: link.Seq, Hash: link.Hash,
			At: r.At.UTC().Format(time.RFC3339Nano), Key: auditKey(pk, sk), Start: start.UTC().Format(time.RFC3339Nano)})
		if err != nil {
			return fmt.Errorf("encode audit chain head: %w", err)
		}
		cond := expression.AttributeNotExists(expression.Name("pk"))
		if head.Present {
			cond = expression.Name("seq").Equal(expression.Value(head.Seq)).And(expression.Name("hash").Equal(expression.Value(head.Hash)))
		}
		hexpr, err := expression.NewBuilder().WithCondition(cond).Build()
		if err != nil {
			return err
		}
		_, err = l.api.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
			{Put: &types.Put{TableName: &l.table, Item: item, ConditionExpression: aws.String("attribute_not_exists(pk)")}},
			{Put: &types.Put{TableName: &l.table, Item: headItem, ConditionExpression: hexpr.Condition(),
				ExpressionAttributeNames: hexpr.Names(), ExpressionAttributeValues: hexpr.Values()}},
		}})
		if err == nil {
			return nil
		}
		if !headLost(err) {
			return fmt.Errorf("audit record of %s: %w", r.Action, err)
		}
	}
	return fmt.Errorf("audit record of %s: the audit chain's head moved under it %d times in a row", r.Action, auditAppendAttempts)
}

// headLost: the transaction was cancelled because another writer moved the head first (its
// condition failed, or the two transactions conflicted) or for want of capacity, not because
// the record exists: reading the head again and retrying is right.
func headLost(err error) bool {
	var tc *types.TransactionCanceledException
	if !errors.As(err, &tc) {
		var conflict *types.TransactionConflictException
		return errors.As(err, &conflict)
	}
	reasons := tc.CancellationReasons
	if len(reasons) == 2 && aws.ToString(reasons[0].Code) == "ConditionalCheckFailed" {
		return false // the record's key is taken: not a race on the head
	}
	for _, r := range reasons {
		switch aws.ToString(r.Code) {
		case "ConditionalCheckFailed", "TransactionConflict", "ThrottlingError":
			return true
		}
	}
	return len(reasons) == 0
}

// Verify checks the chain from since to now (from a day after the retention's end, at the
// earliest): it reads the head, then every record of those days (strongly consistent), and
// names every record deleted, changed or inserted (audit.Check).
func (l *AuditLog) Verify(ctx context.Context, since time.Time) (audit.Report, error) {
	began := l.now().UTC()
	// TTL deletes expired records in no set order, within days: a window reaching into the
	// retention's end would report them as deleted. It starts a day after that end.
	if oldest := began.Add(-l.retention).Add(24 * time.Hour); l.retention > 48*time.Hour && since.Before(oldest) {
		since = oldest
	}
	head, err := l.head(ctx)
	if err != nil {
		return audit.Report{}, err
	}
	var entries []audit.Entry
	first := since.UTC().Truncate(24 * time.Hour)
	for day := first; !day.After(began); day = day.AddDate(0, 0, 1) {
		kc := expression.Key("pk").Equal(expression.Value(auditPK(day)))
		if day.Equal(first) {
			kc = kc.And(expression.Key("sk").GreaterThanEqual(expression.Value(since.UTC().Format(logSortLayout))))
		}
		expr, err := expression.NewBuilder().WithKeyCondition(kc).Build()
		if err != nil {
			return audit.Report{}, err
		}
		p := dynamodb.NewQueryPaginator(l.api, &dynamodb.QueryInput{TableName: &l.table, KeyConditionExpression: expr.KeyCondition(),
			ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(), ConsistentRead: aws.Bool(true)})
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				return audit.Report{}, fmt.Errorf("read the audit trail of %s: %w", day.Format(time.DateOnly), err)
			}
			var items []auditItem
			if err := attributevalue.UnmarshalListOfMaps(page.Items, &items); err != nil {
				return audit.Report{}, fmt.Errorf("decode the audit trail of %s: %w", day.Format(time.DateOnly), err)
			}
			for _, it := range items {
				e := audit.Entry{Key: auditKey(it.PK, it.SK), Body: it.Record, Link: audit.Link{Seq: it.Seq, Prev: it.Prev, Hash: it.Hash}}
				_ = json.Unmarshal([]byte(it.Record), &e.Record) // an undecodable record fails its hash
				entries = append(entries, e)
			}
		}
	}
	return audit.Check(entries, head, since.UTC(), began, began), nil
}

// List walks the days from today back to q.Since (at the earliest the retention's start),
// newest first.
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
	// Nothing is kept past the retention (TTL deletes it): an earlier since reads from the
	// retention's start, one Query a day, not one for every day back to it.
	if oldest := now.Add(-l.retention); l.retention > 0 && since.Before(oldest) {
		since = oldest
	}
	out := []audit.Record{}
	from, before := now.Truncate(24*time.Hour), ""
	if q.Cursor != "" {
		// The records older than the previous page's last: from its day, below its key.
		at, id, err := audit.ParseCursor(q.Cursor)
		if err != nil {
			return nil, err
		}
		from, before = at.Truncate(24*time.Hour), at.Format(logSortLayout)+"#"+id
		if before < since.UTC().Format(logSortLayout) {
			return out, nil // the previous page reached since
		}
	}
	for day := from; !day.Before(since.UTC().Truncate(24 * time.Hour)); day = day.AddDate(0, 0, -1) {
		kc := expression.Key("pk").Equal(expression.Value(auditPK(day))).And(expression.Key("sk").GreaterThanEqual(expression.Value(since.UTC().Format(logSortLayout))))
		if before != "" && day.Equal(from) {
			kc = expression.Key("pk").Equal(expression.Value(auditPK(day))).And(expression.Key("sk").Between(expression.Value(since.UTC().Format(logSortLayout)), expression.Value(before)))
		}
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
				if it.Kind != "audit" {
					continue
				}
				var r audit.Record
				if err := json.Unmarshal([]byte(it.Record), &r); err != nil {
					return nil, fmt.Errorf("decode audit record %s: %w", it.SK, err)
				}
				if it.SK == before {
					continue // the previous page's last (Between is inclusive)
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
