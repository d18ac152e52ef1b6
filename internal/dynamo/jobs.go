package dynamo

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/sundialhq/sundial/internal/jobs"
	"github.com/sundialhq/sundial/internal/timer"
)

// A job (internal/jobs) is an item of the timers table: pk "JOB", sk its id, which sorts by
// creation, so a listing is one Query newest first and the sweep's is one Query from
// jobs.OpenWindow back. No index attribute: the engine never reads it, and the stream's
// log writer ignores it (no execId). Every write is an UpdateItem (the API function's
// policy allows UpdateItem on the timers table, not PutItem), conditional: a create on
// the item's absence, a save on the version the writer read.
const (
	jobPK   = "JOB"
	kindJob = "job"
)

var _ jobs.Store = (*Store)(nil)

type jobItem struct {
	ID          string         `dynamodbav:"id"`
	JobKind     string         `dynamodbav:"jobKind"`
	App         string         `dynamodbav:"app"`
	Params      string         `dynamodbav:"params"`
	Actor       string         `dynamodbav:"actor"`
	State       string         `dynamodbav:"state"`
	Done        int            `dynamodbav:"done"`
	Total       int            `dynamodbav:"total"`
	Failed      int            `dynamodbav:"failed"`
	Failures    []jobs.Failure `dynamodbav:"failures"`
	Cursor      string         `dynamodbav:"cursor"`
	Error       string         `dynamodbav:"error"`
	Summary     string         `dynamodbav:"summary"`
	Created     int64          `dynamodbav:"created"`
	Updated     int64          `dynamodbav:"updated"`
	Ended       int64          `dynamodbav:"ended"`
	Owner       string         `dynamodbav:"owner"`
	Lease       int64          `dynamodbav:"lease"`
	CancelledBy string         `dynamodbav:"cancelledBy"`
	Attempts    int            `dynamodbav:"attempts"`
	Audited     bool           `dynamodbav:"audited"`
	Version     int64          `dynamodbav:"version"`
}

func jobItemOf(j jobs.Job) jobItem {
	return jobItem{ID: j.ID, JobKind: j.Kind, App: j.App, Params: string(j.Params), Actor: j.Actor, State: string(j.State),
		Done: j.Done, Total: j.Total, Failed: j.Failed, Failures: j.Failures, Cursor: j.Cursor, Error: j.Error, Summary: j.Summary,
		Created: ms(j.Created), Updated: ms(j.Updated), Ended: ms(j.Ended), Owner: j.Owner, Lease: ms(j.Lease),
		CancelledBy: j.CancelledBy, Attempts: j.Attempts, Audited: j.Audited, Version: j.Version}
}

func (it jobItem) job() jobs.Job {
	j := jobs.Job{ID: it.ID, Kind: it.JobKind, App: it.App, Params: json.RawMessage(it.Params), Actor: it.Actor, State: jobs.State(it.State),
		Done: it.Done, Total: it.Total, Failed: it.Failed, Failures: it.Failures, Cursor: it.Cursor, Error: it.Error, Summary: it.Summary,
		Created: fromMs(it.Created), Updated: fromMs(it.Updated), Ended: fromMs(it.Ended), Owner: it.Owner, Lease: fromMs(it.Lease),
		CancelledBy: it.CancelledBy, Attempts: it.Attempts, Audited: it.Audited, Version: it.Version}
	if len(j.Failures) == 0 {
		j.Failures = nil
	}
	return j
}

func jobKey(id string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: jobPK}, "sk": &types.AttributeValueMemberS{Value: id}}
}

// writeJob sets every attribute of j's item, on cond.
func (s *Store) writeJob(ctx context.Context, j jobs.Job, cond expression.ConditionBuilder) error {
	av, err := attributevalue.MarshalMap(jobItemOf(j))
	if err != nil {
		return fmt.Errorf("encode job %s: %w", j.ID, err)
	}
	upd := expression.Set(expression.Name("kind"), expression.Value(kindJob))
	for _, name := range slices.Sorted(maps.Keys(av)) {
		upd = upd.Set(expression.Name(name), expression.Value(av[name]))
	}
	_, err = s.update(ctx, s.timers, jobKey(j.ID), upd, &cond, types.ReturnValueNone)
	return err
}

// CreateJob implements jobs.Store.
func (s *Store) CreateJob(ctx context.Context, j jobs.Job) error {
	err := s.writeJob(ctx, j, expression.Name("pk").AttributeNotExists())
	if isConditionFailed(err) {
		return fmt.Errorf("%w: job %s", timer.ErrExists, j.ID)
	}
	if err != nil {
		return fmt.Errorf("save job %s: %w", j.ID, err)
	}
	return nil
}

// SaveJob implements jobs.Store.
func (s *Store) SaveJob(ctx context.Context, j jobs.Job, prev int64) error {
	n := expression.Name
	err := s.writeJob(ctx, j, n("pk").AttributeExists().And(n("version").Equal(expression.Value(prev))))
	if isConditionFailed(err) {
		if _, gerr := s.GetJob(ctx, j.ID); gerr != nil {
			return gerr
		}
		return fmt.Errorf("%w: job %s is past version %d", timer.ErrChanged, j.ID, prev)
	}
	if err != nil {
		return fmt.Errorf("save job %s: %w", j.ID, err)
	}
	return nil
}

// GetJob implements jobs.Store.
func (s *Store) GetJob(ctx context.Context, id string) (jobs.Job, error) {
	out, err := s.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: &s.timers, Key: jobKey(id), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return jobs.Job{}, fmt.Errorf("get job %s: %w", id, err)
	}
	if len(out.Item) == 0 {
		return jobs.Job{}, fmt.Errorf("%w: job %s", timer.ErrNotFound, id)
	}
	var it jobItem
	if err := attributevalue.UnmarshalMap(out.Item, &it); err != nil {
		return jobs.Job{}, fmt.Errorf("decode job %s: %w", id, err)
	}
	return it.job(), nil
}

// ListJobs implements jobs.Store: pages of the partition, newest first, until q.Limit jobs
// matched.
func (s *Store) ListJobs(ctx context.Context, q jobs.Query) ([]jobs.Job, error) {
	n := expression.Name
	kc := expression.Key("pk").Equal(expression.Value(jobPK))
	if q.Before != "" {
		kc = kc.And(expression.Key("sk").LessThan(expression.Value(q.Before)))
	}
	b := expression.NewBuilder().WithKeyCondition(kc)
	var filt *expression.ConditionBuilder
	and := func(c expression.ConditionBuilder) {
		if filt == nil {
			filt = &c
		} else {
			f := filt.And(c)
			filt = &f
		}
	}
	if q.App != "" {
		and(n("app").Equal(expression.Value(q.App)))
	}
	if q.State != "" {
		and(n("state").Equal(expression.Value(string(q.State))))
	}
	if filt != nil {
		b = b.WithFilter(*filt)
	}
	return s.queryJobs(ctx, b, false, q.Limit)
}

// OpenJobs implements jobs.Store: one Query of the jobs created since then.
func (s *Store) OpenJobs(ctx context.Context, since time.Time) ([]jobs.Job, error) {
	kc := expression.Key("pk").Equal(expression.Value(jobPK)).And(expression.Key("sk").GreaterThanEqual(expression.Value("job-" + since.UTC().Format("20060102-150405"))))
	b := expression.NewBuilder().WithKeyCondition(kc).WithFilter(expression.Name("audited").Equal(expression.Value(false)))
	return s.queryJobs(ctx, b, true, 0)
}

func (s *Store) queryJobs(ctx context.Context, b expression.Builder, forward bool, limit int) ([]jobs.Job, error) {
	expr, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("build query: %w", err)
	}
	p := dynamodb.NewQueryPaginator(s.api, &dynamodb.QueryInput{
		TableName: &s.timers, KeyConditionExpression: expr.KeyCondition(), FilterExpression: expr.Filter(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(), ConsistentRead: aws.Bool(true),
		ScanIndexForward: aws.Bool(forward),
	})
	out := []jobs.Job{}
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("list jobs: %w", err)
		}
		var items []jobItem
		if err := attributevalue.UnmarshalListOfMaps(page.Items, &items); err != nil {
			return nil, fmt.Errorf("decode jobs: %w", err)
		}
		for _, it := range items {
			out = append(out, it.job())
			if limit > 0 && len(out) == limit {
				return out, nil
			}
		}
	}
	return out, nil
}
