package iam

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
)

// Service names the AWS service a request is for, from its protocol headers.
type Service string

const (
	DynamoDB       Service = "dynamodb"
	SQS            Service = "sqs"
	Lambda         Service = "lambda"
	CloudFormation Service = "cloudformation"
)

// Request is what the authorization of one HTTP request to AWS needs.
type Request struct {
	Service   Service
	Operation string // e.g. UpdateItem, SendMessageBatch, Invoke, DescribeStacks
	Body      []byte
	Path      string // Lambda's REST path
	Form      url.Values
}

// Env are the names that turn a request's table, queue and function names into ARNs.
type Env struct {
	Region, Account string
}

// Calls returns what IAM authorizes for the request: one or more (action, resource) pairs.
// A request this cannot read is an error (the caller answers it as a bad request).
func (e Env) Calls(r Request) ([]Call, error) {
	switch r.Service {
	case DynamoDB:
		return e.dynamoCalls(r.Operation, r.Body)
	case SQS:
		return e.sqsCalls(r.Operation, r.Body)
	case Lambda:
		return e.lambdaCalls(r.Operation, r.Path)
	case Events:
		return e.eventsCalls(r.Operation, r.Body)
	case SNS:
		return snsCalls(r.Operation, r.Form)
	case CloudFormation:
		stack := r.Form.Get("StackName")
		if stack == "" {
			stack = "*"
		}
		res := stack
		if !strings.HasPrefix(stack, "arn:") {
			res = fmt.Sprintf("arn:aws:cloudformation:%s:%s:stack/%s/*", e.Region, e.Account, stack)
		}
		return []Call{{Action: "cloudformation:" + r.Operation, Resource: res}}, nil
	}
	return nil, fmt.Errorf("unknown service %q", r.Service)
}

func (e Env) table(name string) string {
	return fmt.Sprintf("arn:aws:dynamodb:%s:%s:table/%s", e.Region, e.Account, name)
}

type dynamoBody struct {
	TableName     string
	IndexName     string
	StreamArn     string // DynamoDB Streams: DescribeStream, GetShardIterator
	ShardIterator string // DynamoDB Streams: GetRecords
	RequestItems  map[string]json.RawMessage
	TransactItems []map[string]struct{ TableName string }
}

// dynamoCalls: most operations act on the table named by TableName (on the index named by
// IndexName for Query and Scan); batches on each table they name; a transaction is
// authorized item by item, with the action of each item's own operation (ConditionCheck is
// dynamodb:ConditionCheckItem), as the DynamoDB documentation describes. DynamoDB Streams'
// operations are dynamodb: actions too, on the stream's ARN
// (arn:aws:dynamodb:REGION:ACCOUNT:table/NAME/stream/LABEL): DescribeStream and
// GetShardIterator name it, GetRecords carries it at the head of its shard iterator (as
// AWS's iterators do: "ARN|…"), and ListStreams acts on "*".
func (e Env) dynamoCalls(op string, body []byte) ([]Call, error) {
	var b dynamoBody
	if len(body) > 0 {
		if err := json.Unmarshal(body, &b); err != nil {
			return nil, fmt.Errorf("dynamodb %s: the body is not JSON: %w", op, err)
		}
	}
	switch op {
	case "ListTables", "DescribeLimits", "DescribeEndpoints", "ListStreams":
		return []Call{{Action: "dynamodb:" + op, Resource: "*"}}, nil
	case "DescribeStream", "GetShardIterator":
		if !isStreamARN(b.StreamArn) {
			return nil, fmt.Errorf("dynamodb %s: StreamArn %q is not a stream's ARN", op, b.StreamArn)
		}
		return []Call{{Action: "dynamodb:" + op, Resource: b.StreamArn}}, nil
	case "GetRecords":
		arn, _, _ := strings.Cut(b.ShardIterator, "|")
		if !isStreamARN(arn) {
			return nil, fmt.Errorf("dynamodb %s: the shard iterator does not begin with a stream's ARN", op)
		}
		return []Call{{Action: "dynamodb:" + op, Resource: arn}}, nil
	case "BatchGetItem", "BatchWriteItem":
		var out []Call
		for _, t := range slices.Sorted(maps.Keys(b.RequestItems)) {
			out = append(out, Call{Action: "dynamodb:" + op, Resource: e.table(t)})
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("dynamodb %s: no RequestItems", op)
		}
		return out, nil
	case "TransactWriteItems", "TransactGetItems":
		var out []Call
		for i, item := range b.TransactItems {
			if len(item) != 1 {
				return nil, fmt.Errorf("dynamodb %s: item %d has %d operations", op, i, len(item))
			}
			for kind, v := range item {
				action := map[string]string{"ConditionCheck": "ConditionCheckItem", "Put": "PutItem", "Update": "UpdateItem", "Delete": "DeleteItem", "Get": "GetItem"}[kind]
				if action == "" || v.TableName == "" {
					return nil, fmt.Errorf("dynamodb %s: item %d: %s", op, i, kind)
				}
				out = append(out, Call{Action: "dynamodb:" + action, Resource: e.table(v.TableName)})
			}
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("dynamodb %s: no TransactItems", op)
		}
		return out, nil
	}
	if b.TableName == "" {
		return nil, fmt.Errorf("dynamodb %s: no TableName", op)
	}
	res := e.table(b.TableName)
	if b.IndexName != "" && (op == "Query" || op == "Scan") {
		res += "/index/" + b.IndexName
	}
	return []Call{{Action: "dynamodb:" + op, Resource: res}}, nil
}

// isStreamARN: arn:aws:dynamodb:REGION:ACCOUNT:table/NAME/stream/LABEL.
func isStreamARN(arn string) bool {
	rest, ok := strings.CutPrefix(arn, "arn:aws:dynamodb:")
	if !ok {
		return false
	}
	parts := strings.SplitN(rest, ":", 3)
	if len(parts) != 3 {
		return false
	}
	table, label, ok := strings.Cut(parts[2], "/stream/")
	return ok && strings.HasPrefix(table, "table/") && len(table) > len("table/") && label != "" && !strings.Contains(label, "/")
}

// sqsActions maps SQS operations to their IAM action where the two differ (the batch
// operations are authorized as their single forms).
var sqsActions = map[string]string{
	"SendMessageBatch":             "SendMessage",
	"DeleteMessageBatch":           "DeleteMessage",
	"ChangeMessageVisibilityBatch": "ChangeMessageVisibility",
}

func (e Env) sqsCalls(op string, body []byte) ([]Call, error) {
	var b struct{ QueueUrl, QueueName string }
	if len(body) > 0 {
		if err := json.Unmarshal(body, &b); err != nil {
			return nil, fmt.Errorf("sqs %s: the body is not JSON: %w", op, err)
		}
	}
	action := op
	if a, ok := sqsActions[op]; ok {
		action = a
	}
	name := b.QueueName
	if b.QueueUrl != "" {
		u, err := url.Parse(b.QueueUrl)
		if err != nil {
			return nil, fmt.Errorf("sqs %s: QueueUrl %q: %w", op, b.QueueUrl, err)
		}
		name = u.Path[strings.LastIndex(u.Path, "/")+1:]
	}
	if name == "" {
		return []Call{{Action: "sqs:" + action, Resource: "*"}}, nil
	}
	return []Call{{Action: "sqs:" + action, Resource: fmt.Sprintf("arn:aws:sqs:%s:%s:%s", e.Region, e.Account, name)}}, nil
}

// lambdaCalls: Invoke is authorized as lambda:InvokeFunction on the function's ARN (a
// qualifier, as in NAME:alias, is part of it).
func (e Env) lambdaCalls(op, p string) ([]Call, error) {
	const prefix = "/2015-03-31/functions/"
	if !strings.HasPrefix(p, prefix) {
		return nil, fmt.Errorf("lambda: unknown path %s", p)
	}
	fn := strings.TrimPrefix(p, prefix)
	fn, _, _ = strings.Cut(fn, "/")
	if u, err := url.PathUnescape(fn); err == nil {
		fn = u
	}
	arn := fn
	if !strings.HasPrefix(fn, "arn:") {
		arn = fmt.Sprintf("arn:aws:lambda:%s:%s:function:%s", e.Region, e.Account, fn)
	}
	action := "lambda:InvokeFunction"
	if op != "Invoke" {
		action = "lambda:" + op
	}
	return []Call{{Action: action, Resource: arn}}, nil
}
