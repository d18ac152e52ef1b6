// Package billing is the example app of examples/billing: an application with its own SAM
// stack (template.yaml) whose timers Sundial runs. Its stack declares the timers with a
// Custom::SundialTimers resource (app "billing") and the Lambda action they call, this
// package's Handler: Invoices records an invoicing run, Cleanup deletes old runs.
package billing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/sundialhq/sundial/actionkit"
)

// TableEnv names the runs table (template.yaml's RunsTable).
const TableEnv = "RUNS_TABLE"

// DynamoDBAPI is the part of the DynamoDB client the handler uses.
type DynamoDBAPI interface {
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
}

// Handler is the app's timer action. The timer's property "task" chooses what a run does:
// "invoice" (the default) records the run; "cleanup" deletes runs older than the property
// "retentionDays" (default 30).
type Handler struct {
	DB    DynamoDBAPI
	Table string
	Log   *slog.Logger // default: discard
}

// Result is the function's answer: Sundial keeps it (its first 1 KB) as the execution's output in
// the log.
type Result struct {
	Timer   string `json:"timer"`
	Task    string `json:"task"`
	Tenant  string `json:"tenant,omitempty"`
	Written int    `json:"written"`
	Deleted int    `json:"deleted"`
}

// The runs table: partition key "kind" ("run"), sort key "at" (RFC 3339 of the scheduled time,
// then the execution id: unique and in time order).
const runKind = "run"

// Handle runs one timer execution.
func (h *Handler) Handle(ctx context.Context, p actionkit.Payload) (Result, error) {
	log := h.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	task := p.Properties["task"]
	if task == "" {
		task = "invoice"
	}
	res := Result{Timer: p.Timer, Task: task, Tenant: p.Tenant}
	switch task {
	case "invoice":
		at := p.ScheduledAt.UTC().Format(time.RFC3339) + "#" + p.ExecutionID
		_, err := h.DB.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(h.Table), Item: map[string]types.AttributeValue{
			"kind": &types.AttributeValueMemberS{Value: runKind}, "at": &types.AttributeValueMemberS{Value: at},
			"timer": &types.AttributeValueMemberS{Value: p.Timer}, "attempt": &types.AttributeValueMemberN{Value: strconv.Itoa(p.Attempt)},
		}})
		if err != nil {
			return res, fmt.Errorf("billing: record the run: %w", err)
		}
		res.Written = 1
	case "cleanup":
		days := 30
		if s := p.Properties["retentionDays"]; s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 {
				return res, fmt.Errorf("billing: property retentionDays: want a positive number of days, got %q", s)
			}
			days = n
		}
		cut := p.ScheduledAt.UTC().AddDate(0, 0, -days).Format(time.RFC3339)
		n, err := h.deleteBefore(ctx, cut)
		res.Deleted = n
		if err != nil {
			return res, err
		}
	default:
		return res, errors.New("billing: property task: want invoice or cleanup, got " + strconv.Quote(task))
	}
	log.Info("billing run", "timer", p.Timer, "task", task, "execution", p.ExecutionID, "written", res.Written, "deleted", res.Deleted)
	return res, nil
}

func (h *Handler) deleteBefore(ctx context.Context, cut string) (int, error) {
	deleted := 0
	var start map[string]types.AttributeValue
	for {
		out, err := h.DB.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(h.Table),
			KeyConditionExpression:   aws.String("kind = :k AND #at < :cut"),
			ExpressionAttributeNames: map[string]string{"#at": "at"},
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":k": &types.AttributeValueMemberS{Value: runKind}, ":cut": &types.AttributeValueMemberS{Value: cut}},
			ProjectionExpression: aws.String("kind, #at"), ExclusiveStartKey: start})
		if err != nil {
			return deleted, fmt.Errorf("billing: list old runs: %w", err)
		}
		for _, it := range out.Items {
			if _, err := h.DB.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(h.Table),
				Key: map[string]types.AttributeValue{"kind": it["kind"], "at": it["at"]}}); err != nil {
				return deleted, fmt.Errorf("billing: delete a run: %w", err)
			}
			deleted++
		}
		if len(out.LastEvaluatedKey) == 0 {
			return deleted, nil
		}
		start = out.LastEvaluatedKey
	}
}
