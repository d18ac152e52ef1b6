package iam

import (
	"fmt"
	"maps"
	"net/url"
	"regexp"
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
	Path      string // Lambda's REST path, escaped as sent
	Query     string // Lambda's REST query, as sent
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
		return e.lambdaCalls(r.Operation, r.Path, r.Query)
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
	if strings.HasPrefix(name, "arn:") {
		return name // DynamoDB takes a table's ARN as its TableName
	}
	return fmt.Sprintf("arn:aws:dynamodb:%s:%s:table/%s", e.Region, e.Account, name)
}

// dynamoCalls: most operations act on the table named by TableName (on the index named by
// IndexName for Query and Scan); batches on each table they name; a transaction is
// authorized item by item, with the action of each item's own operation (ConditionCheck is
// dynamodb:ConditionCheckItem), as the DynamoDB documentation describes. DynamoDB Streams'
// operations are dynamodb: actions too, on the stream's ARN
// (arn:aws:dynamodb:REGION:ACCOUNT:table/NAME/stream/LABEL): DescribeStream and
// GetShardIterator name it, GetRecords carries it at the head of its shard iterator (as
// AWS's iterators do: "ARN|…"), and ListStreams acts on "*". The body is read strictly
// (strict.go): the names authorized are the ones the engine reads.
func (e Env) dynamoCalls(op string, body []byte) ([]Call, error) {
	b := object{}
	if len(body) > 0 {
		var err error
		if b, err = strictObject(body, true); err != nil {
			return nil, fmt.Errorf("dynamodb %s: the body: %w", op, err)
		}
	}
	fields := map[string]string{}
	for _, key := range []string{"TableName", "IndexName", "StreamArn", "ShardIterator"} {
		v, err := b.str(key)
		if err != nil {
			return nil, fmt.Errorf("dynamodb %s: %w", op, err)
		}
		fields[key] = v
	}
	field := func(key string) string { return fields[key] }
	var out []Call
	switch op {
	case "ListTables", "DescribeLimits", "DescribeEndpoints", "ListStreams":
		return []Call{{Action: "dynamodb:" + op, Resource: "*"}}, nil
	case "DescribeStream", "GetShardIterator":
		arn := field("StreamArn")
		if !isStreamARN(arn) {
			return nil, fmt.Errorf("dynamodb %s: StreamArn %q is not a stream's ARN", op, arn)
		}
		return []Call{{Action: "dynamodb:" + op, Resource: arn}}, nil
	case "GetRecords":
		arn, _, _ := strings.Cut(field("ShardIterator"), "|")
		if !isStreamARN(arn) {
			return nil, fmt.Errorf("dynamodb %s: the shard iterator does not begin with a stream's ARN", op)
		}
		return []Call{{Action: "dynamodb:" + op, Resource: arn}}, nil
	case "BatchGetItem", "BatchWriteItem":
		// Table names keep their case: two names differing in case are two tables.
		items, err := b.obj("RequestItems", false)
		if err != nil {
			return nil, fmt.Errorf("dynamodb %s: %w", op, err)
		}
		for _, t := range slices.Sorted(maps.Keys(items)) {
			out = append(out, Call{Action: "dynamodb:" + op, Resource: e.table(t)})
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("dynamodb %s: no RequestItems", op)
		}
		return out, nil
	case "TransactWriteItems", "TransactGetItems":
		items, err := b.list("TransactItems")
		if err != nil {
			return nil, fmt.Errorf("dynamodb %s: %w", op, err)
		}
		for i, raw := range items {
			item, err := strictObject(raw, true)
			if err != nil {
				return nil, fmt.Errorf("dynamodb %s: item %d: %w", op, i, err)
			}
			if len(item) != 1 {
				return nil, fmt.Errorf("dynamodb %s: item %d has %d operations", op, i, len(item))
			}
			for kind := range item {
				action := map[string]string{"ConditionCheck": "ConditionCheckItem", "Put": "PutItem", "Update": "UpdateItem", "Delete": "DeleteItem", "Get": "GetItem"}[kind]
				v, err := item.obj(kind, true)
				if err != nil {
					return nil, fmt.Errorf("dynamodb %s: item %d: %w", op, i, err)
				}
				table, err := v.str("TableName")
				if err != nil || action == "" || table == "" {
					return nil, fmt.Errorf("dynamodb %s: item %d: %s needs a TableName", op, i, kind)
				}
				// Each item is authorized as its single-item action, with its own
				// dynamodb:LeadingKeys (transaction-apis-iam.html).
				call := Call{Action: "dynamodb:" + action, Resource: e.table(table)}
				if call.LeadingKey, call.KeyKnown, err = leadingKey(v, action); err != nil {
					return nil, fmt.Errorf("dynamodb %s: item %d: %w", op, i, err)
				}
				out = append(out, call)
			}
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("dynamodb %s: no TransactItems", op)
		}
		return out, nil
	}
	table := field("TableName")
	if table == "" {
		return nil, fmt.Errorf("dynamodb %s: no TableName", op)
	}
	res := e.table(table)
	if index := field("IndexName"); index != "" && (op == "Query" || op == "Scan") {
		res += "/index/" + index
	}
	call := Call{Action: "dynamodb:" + op, Resource: res}
	if op == "GetItem" || op == "PutItem" || op == "UpdateItem" || op == "DeleteItem" {
		var err error
		if call.LeadingKey, call.KeyKnown, err = leadingKey(b, op); err != nil {
			return nil, fmt.Errorf("dynamodb %s: %w", op, err)
		}
	}
	return []Call{call}, nil
}

// PartitionKey is the attribute the local check reads dynamodb:LeadingKeys from: every
// Sundial table's partition key is "pk". A table keyed otherwise has no known leading key,
// and a condition on it is not met (refused).
const PartitionKey = "pk"

// leadingKey reads the partition key value of a single-item call's Item (PutItem) or Key.
func leadingKey(b object, op string) (string, bool, error) {
	field := "Key"
	if op == "PutItem" {
		field = "Item"
	}
	item, err := b.obj(field, false)
	if err != nil {
		return "", false, err
	}
	attr, err := item.obj(PartitionKey, false)
	if err != nil || attr == nil {
		return "", false, nil
	}
	for _, t := range []string{"S", "N", "B"} {
		if v, err := attr.str(t); err == nil && v != "" {
			return v, true, nil
		}
	}
	return "", false, nil
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

// queueName is what SQS names a queue: 1 to 80 letters, digits, hyphens and underscores, a
// FIFO queue's ending in .fifo.
var queueName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,80}(\.fifo)?$`)

// sqsCalls: an operation on a queue names it by QueueUrl (QueueName for CreateQueue and
// GetQueueUrl). The engine finds a queue by its whole URL, so only a URL of the canonical
// form http(s)://HOST/ACCOUNT/NAME is accepted: its last segment is then the queue the engine
// acts on.
func (e Env) sqsCalls(op string, body []byte) ([]Call, error) {
	b := object{}
	if len(body) > 0 {
		var err error
		if b, err = strictObject(body, true); err != nil {
			return nil, fmt.Errorf("sqs %s: the body: %w", op, err)
		}
	}
	qurl, err := b.str("QueueUrl")
	if err != nil {
		return nil, fmt.Errorf("sqs %s: %w", op, err)
	}
	name, err := b.str("QueueName")
	if err != nil {
		return nil, fmt.Errorf("sqs %s: %w", op, err)
	}
	action := op
	if a, ok := sqsActions[op]; ok {
		action = a
	}
	if qurl != "" {
		if name, err = queueOfURL(qurl); err != nil {
			return nil, fmt.Errorf("sqs %s: %w", op, err)
		}
	} else if name != "" && !queueName.MatchString(name) {
		return nil, fmt.Errorf("sqs %s: QueueName %q is not a queue name ([A-Za-z0-9_-]{1,80}, .fifo for a FIFO queue)", op, name)
	}
	if name == "" {
		return []Call{{Action: "sqs:" + action, Resource: "*"}}, nil
	}
	return []Call{{Action: "sqs:" + action, Resource: fmt.Sprintf("arn:aws:sqs:%s:%s:%s", e.Region, e.Account, name)}}, nil
}

// queueOfURL returns the queue a canonical queue URL names.
func queueOfURL(s string) (string, error) {
	u, err := url.Parse(s)
	bad := func(why string) error {
		return fmt.Errorf("QueueUrl %q %s: a queue URL is http(s)://HOST/ACCOUNT/NAME, as CreateQueue and GetQueueUrl answer it", s, why)
	}
	if err != nil {
		return "", bad("does not parse")
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.RawPath != "" {
		return "", bad("is not a plain URL")
	}
	parts := strings.Split(u.Path, "/")
	if len(parts) != 3 || parts[0] != "" || !accountID.MatchString(parts[1]) || !queueName.MatchString(parts[2]) {
		return "", bad("has another path")
	}
	return parts[2], nil
}

var accountID = regexp.MustCompile(`^[0-9]{12}$`)

// lambdaPath is Lambda's REST path of a function: its name (or ARN, or name:qualifier)
// between /2015-03-31/functions/ and /invocations (Invoke) or the end (GetFunction).
var (
	lambdaFunction = regexp.MustCompile(`^(arn:aws:lambda:[a-z0-9-]+:[0-9]{12}:function:)?[A-Za-z0-9_-]{1,64}(:[A-Za-z0-9$_-]{1,128})?$`)
	lambdaQualifer = regexp.MustCompile(`^[A-Za-z0-9$_-]{1,128}$`)
)

// lambdaCalls: Invoke is authorized as lambda:InvokeFunction on the function's ARN (a
// qualifier, as in NAME:alias or ?Qualifier=, is part of it). p is the path as sent
// (escaped); only a canonical path is accepted — no dot segments, no empty segments, no
// escaped slash — so that the function authorized is the one the path names for every
// reader of it.
func (e Env) lambdaCalls(op, p, query string) ([]Call, error) {
	const prefix = "/2015-03-31/functions/"
	rest, ok := strings.CutPrefix(p, prefix)
	if !ok {
		return nil, fmt.Errorf("lambda: unknown path %s", p)
	}
	fn, tail, _ := strings.Cut(rest, "/")
	if (op == "Invoke") != (tail == "invocations") || (op != "Invoke" && tail != "") {
		return nil, fmt.Errorf("lambda: the path %s is not /2015-03-31/functions/FUNCTION[/invocations]", p)
	}
	name, err := url.PathUnescape(fn)
	if err != nil || !lambdaFunction.MatchString(name) {
		return nil, fmt.Errorf("lambda: %q in the path %s is not a function name, ARN or NAME:QUALIFIER", fn, p)
	}
	arn := name
	if !strings.HasPrefix(name, "arn:") {
		arn = fmt.Sprintf("arn:aws:lambda:%s:%s:function:%s", e.Region, e.Account, name)
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return nil, fmt.Errorf("lambda: the query %q: %w", query, err)
	}
	for k, v := range q {
		if k != "Qualifier" || len(v) != 1 || !lambdaQualifer.MatchString(v[0]) {
			return nil, fmt.Errorf("lambda: the query %q: only one Qualifier=VERSION|ALIAS is accepted", query)
		}
		if strings.Count(strings.TrimPrefix(arn, "arn:aws:lambda:"), ":") > 3 {
			return nil, fmt.Errorf("lambda: the function %s has a qualifier in its name and in the query", name)
		}
		arn += ":" + v[0]
	}
	action := "lambda:InvokeFunction"
	if op != "Invoke" {
		action = "lambda:" + op
	}
	return []Call{{Action: action, Resource: arn}}, nil
}
