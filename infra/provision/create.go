package provision

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/sundialhq/sundial/infra/eventfilter"
	"github.com/sundialhq/sundial/infra/iam"
	"github.com/sundialhq/sundial/infra/sam"
)

type creator struct {
	o Options
	s *Stack
	// tables are the tables that exist, listed once per Provision (ListTables rather than
	// DescribeTable: DynamoDB Local's ResourceNotFound answer makes the SDK log a checksum
	// warning).
	tables map[string]bool
}

// existing reports whether the table exists, listing the tables on first use.
func (c *creator) existing(ctx context.Context, name string) (bool, error) {
	if c.tables == nil {
		c.tables = map[string]bool{}
		pages := dynamodb.NewListTablesPaginator(c.o.DynamoDB, &dynamodb.ListTablesInput{})
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				c.tables = nil
				return false, fmt.Errorf("list tables: %w", err)
			}
			for _, t := range page.TableNames {
				c.tables[t] = true
			}
		}
	}
	return c.tables[name], nil
}

func (c *creator) create(ctx context.Context, res *Resource) error {
	s := c.s
	switch res.Type {
	case "AWS::DynamoDB::Table":
		return c.table(ctx, res)
	case "AWS::SQS::Queue":
		return c.queue(ctx, res)
	case "AWS::IAM::Role":
		name := s.physicalName(res, "RoleName")
		res.Ref = name
		res.Attrs["Arn"] = fmt.Sprintf("arn:aws:iam::%s:role/%s", "000000000000", name)
		res.Attrs["RoleId"] = "AROALOCAL" + strings.ToUpper(res.LogicalID)
		role, err := roleOf(res)
		if err != nil {
			return err
		}
		s.Roles[res.LogicalID] = role
		return nil
	case "AWS::Lambda::Function":
		name := s.physicalName(res, "FunctionName")
		res.Ref = name
		res.Attrs["Arn"] = s.arn("lambda", "function:"+name)
		return nil
	case "AWS::Lambda::Version":
		res.Ref = fmt.Sprint(res.Properties["FunctionName"]) + ":1"
		res.Attrs["Version"] = "1"
		s.NotEmulated = append(s.NotEmulated, res.LogicalID+" ("+res.Type+")")
		return nil
	case "AWS::Lambda::Alias":
		res.Ref = fmt.Sprint(res.Properties["FunctionName"]) + ":" + fmt.Sprint(res.Properties["Name"])
		return nil
	case "AWS::Logs::LogGroup":
		name := "/aws/lambda/" + s.Name + "-" + res.LogicalID
		if v, ok := res.Properties["LogGroupName"].(string); ok && v != "" {
			name = v
		}
		res.Ref = name
		res.Attrs["Arn"] = s.arn("logs", "log-group:"+name+":*")
		s.NotEmulated = append(s.NotEmulated, res.LogicalID+" ("+res.Type+"): function logs go to the platform's log instead")
		return nil
	case "AWS::Lambda::EventSourceMapping", "AWS::Events::Rule":
		res.Ref = s.Name + "-" + res.LogicalID
		res.Attrs["Arn"] = s.arn("events", "rule/"+res.Ref)
		return nil // run by the local platform (Function.Schedules, Function.EventSources)
	case "AWS::Lambda::EventInvokeConfig":
		res.Ref = s.Name + "-" + res.LogicalID
		return nil // read into Function.Async: the local Invoke API applies it
	case "AWS::Lambda::Permission":
		res.Ref = s.Name + "-" + res.LogicalID
		return nil // who may invoke a function: the local platform invokes them itself
	case "AWS::ApplicationAutoScaling::ScalableTarget":
		return s.scalableTarget(res)
	case "AWS::ApplicationAutoScaling::ScalingPolicy":
		return s.scalingPolicy(res)
	}
	// Anything else gets a name and an ARN so that references resolve; it does not run here.
	res.Ref = s.Name + "-" + res.LogicalID
	service := strings.ToLower(strings.SplitN(strings.TrimPrefix(res.Type, "AWS::"), "::", 2)[0])
	res.Attrs["Arn"] = s.arn(service, res.Ref)
	s.NotEmulated = append(s.NotEmulated, res.LogicalID+" ("+res.Type+")")
	return nil
}

// roleOf reads the role's inline policies and the managed policies SAM attached.
func roleOf(res *Resource) (*iam.Role, error) {
	role := &iam.Role{Name: res.LogicalID, Arn: res.Attrs["Arn"]}
	pols, _ := res.Properties["Policies"].([]any)
	for i, p := range pols {
		pm, _ := p.(map[string]any)
		name := fmt.Sprint(pm["PolicyName"])
		if name == "" || pm["PolicyName"] == nil {
			name = fmt.Sprintf("%sPolicy%d", res.LogicalID, i)
		}
		pol, err := iam.ParseDocument(name, pm["PolicyDocument"])
		if err != nil {
			return nil, err
		}
		role.Policies = append(role.Policies, pol)
	}
	managed, _ := res.Properties["ManagedPolicyArns"].([]any)
	for _, m := range managed {
		arn := fmt.Sprint(m)
		pol, ok := iam.Managed[arn]
		if !ok {
			return nil, fmt.Errorf("managed policy %s is not modelled by the local IAM check (known: %s)", arn, strings.Join(slices.Sorted(maps.Keys(iam.Managed)), ", "))
		}
		role.Policies = append(role.Policies, pol)
	}
	return role, nil
}

// tableProps are the AWS::DynamoDB::Table properties that CreateTable shares with the API
// (same names); the rest are applied after creation.
type tableProps struct {
	TimeToLiveSpecification *struct {
		AttributeName string
		Enabled       any
	}
	StreamSpecification *struct{ StreamViewType string }
}

func (c *creator) table(ctx context.Context, res *Resource) error {
	s, db := c.s, c.o.DynamoDB
	name := s.physicalName(res, "TableName")
	res.Ref = name
	res.Attrs["Arn"] = s.arn("dynamodb", "table/"+name)
	in, err := createTableInput(res.Properties)
	if err != nil {
		return err
	}
	in.TableName = aws.String(name)
	if c.o.Describe {
		if in.StreamSpecification != nil {
			res.Attrs["StreamArn"] = s.arn("dynamodb", "table/"+name+"/stream/described")
		}
		return nil
	}
	exists, err := c.existing(ctx, name)
	if err != nil {
		return err
	}
	if !exists {
		if _, err := db.CreateTable(ctx, in); err != nil {
			return fmt.Errorf("create table %s: %w", name, err)
		}
	} else {
		cur, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
		if err != nil {
			return fmt.Errorf("describe table %s: %w", name, err)
		}
		if diff := schemaDiff(in, cur.Table); diff != "" {
			return fmt.Errorf("table %s exists with another schema than the template's (%s): it was made by an earlier template or with other parameters; start from a fresh state (sundial up --fresh) to recreate it", name, diff)
		}
		if err := updateThroughput(ctx, db, in, cur.Table); err != nil {
			return err
		}
	}
	var props tableProps
	if err := remarshal(res.Properties, &props); err != nil {
		return err
	}
	if t := props.TimeToLiveSpecification; t != nil && fmt.Sprint(t.Enabled) == "true" {
		ttl, err := db.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(name)})
		if err != nil {
			return fmt.Errorf("describe TTL of %s: %w", name, err)
		}
		if d := ttl.TimeToLiveDescription; d == nil || d.TimeToLiveStatus != ddbtypes.TimeToLiveStatusEnabled {
			if _, err := db.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{TableName: aws.String(name),
				TimeToLiveSpecification: &ddbtypes.TimeToLiveSpecification{AttributeName: aws.String(t.AttributeName), Enabled: aws.Bool(true)}}); err != nil {
				return fmt.Errorf("enable TTL on %s: %w", name, err)
			}
		}
	}
	if props.StreamSpecification != nil {
		d, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(name)})
		if err != nil {
			return fmt.Errorf("describe table %s: %w", name, err)
		}
		label := aws.ToString(d.Table.LatestStreamLabel)
		if label == "" {
			return fmt.Errorf("table %s has no stream although the template gives it one", name)
		}
		// DynamoDB Local names the stream in its own region (ddblocal); the stack names it in
		// its region, as AWS would, and the gateway translates (infra/gateway).
		res.Attrs["StreamArn"] = s.arn("dynamodb", "table/"+name+"/stream/"+label)
	}
	return nil
}

// createTableInput maps the resource's properties onto CreateTable's input: CloudFormation
// uses the API's own names, so the properties decode into the SDK's type; numbers that came
// from parameters (strings) are made numbers first.
func createTableInput(props map[string]any) (*dynamodb.CreateTableInput, error) {
	p := maps.Clone(props)
	for _, k := range []string{"TimeToLiveSpecification", "PointInTimeRecoverySpecification", "ContributorInsightsSpecification",
		"KinesisStreamSpecification", "ImportSourceSpecification", "SSESpecification", "Tags", "ResourcePolicy"} {
		delete(p, k) // applied separately, or not meaningful locally
	}
	b, err := json.Marshal(numbers(p))
	if err != nil {
		return nil, err
	}
	in := &dynamodb.CreateTableInput{}
	if err := json.Unmarshal(b, in); err != nil {
		return nil, fmt.Errorf("table properties: %w", err)
	}
	if ss, ok := props["StreamSpecification"].(map[string]any); ok {
		in.StreamSpecification = &ddbtypes.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: ddbtypes.StreamViewType(fmt.Sprint(ss["StreamViewType"]))}
	}
	return in, nil
}

// numbers turns numeric strings under the throughput properties into numbers.
func numbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if s, ok := e.(string); ok && (strings.HasSuffix(k, "CapacityUnits") || strings.HasSuffix(k, "RequestUnits")) {
				if n, err := strconv.ParseInt(s, 10, 64); err == nil {
					out[k] = n
					continue
				}
			}
			out[k] = numbers(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = numbers(e)
		}
		return out
	}
	return v
}

// schemaDiff compares what a kept table does not change to: keys, indexes and the billing mode
// (which AWS switches in place; a kept table is not switched here, the mismatch is reported).
func schemaDiff(want *dynamodb.CreateTableInput, have *ddbtypes.TableDescription) string {
	keys := func(ks []ddbtypes.KeySchemaElement) string {
		var parts []string
		for _, k := range ks {
			parts = append(parts, aws.ToString(k.AttributeName)+":"+string(k.KeyType))
		}
		return strings.Join(parts, ",")
	}
	if keys(want.KeySchema) != keys(have.KeySchema) {
		return "key " + keys(have.KeySchema) + ", template " + keys(want.KeySchema)
	}
	idx := func(name string, ks []ddbtypes.KeySchemaElement, p *ddbtypes.Projection) string {
		s := name + "(" + keys(ks)
		if p != nil {
			s += " " + string(p.ProjectionType)
			if len(p.NonKeyAttributes) > 0 {
				s += " " + strings.Join(slices.Sorted(slices.Values(p.NonKeyAttributes)), ",")
			}
		}
		return s + ")"
	}
	var w, h []string
	for _, g := range want.GlobalSecondaryIndexes {
		w = append(w, idx(aws.ToString(g.IndexName), g.KeySchema, g.Projection))
	}
	for _, g := range have.GlobalSecondaryIndexes {
		h = append(h, idx(aws.ToString(g.IndexName), g.KeySchema, g.Projection))
	}
	slices.Sort(w)
	slices.Sort(h)
	if !slices.Equal(w, h) {
		return "indexes " + strings.Join(h, " ") + ", template " + strings.Join(w, " ")
	}
	if w, h := wantBillingMode(want), billingMode(have); w != h {
		return "billing mode " + string(h) + ", template " + string(w)
	}
	// A stream is recreated with a new ARN when it changes (and its records are lost): the
	// event source mapping's position would not survive it.
	stream := func(enabled *bool, view ddbtypes.StreamViewType) string {
		if enabled == nil || !*enabled {
			return "no stream"
		}
		return "stream " + string(view)
	}
	var ws, hs string
	if want.StreamSpecification != nil {
		ws = stream(want.StreamSpecification.StreamEnabled, want.StreamSpecification.StreamViewType)
	} else {
		ws = stream(nil, "")
	}
	if have.StreamSpecification != nil {
		hs = stream(have.StreamSpecification.StreamEnabled, have.StreamSpecification.StreamViewType)
	} else {
		hs = stream(nil, "")
	}
	if ws != hs {
		return hs + ", template " + ws
	}
	return ""
}

// wantBillingMode is the billing mode CreateTable gives the table: PROVISIONED unless it says
// otherwise.
func wantBillingMode(in *dynamodb.CreateTableInput) ddbtypes.BillingMode {
	if in.BillingMode == "" {
		return ddbtypes.BillingModeProvisioned
	}
	return in.BillingMode
}

// billingMode is the table's billing mode as DescribeTable reports it: DynamoDB (and DynamoDB
// Local) leaves BillingModeSummary out for a table created PROVISIONED.
func billingMode(d *ddbtypes.TableDescription) ddbtypes.BillingMode {
	if d.BillingModeSummary != nil && d.BillingModeSummary.BillingMode != "" {
		return d.BillingModeSummary.BillingMode
	}
	return ddbtypes.BillingModeProvisioned
}

// updateThroughput gives a kept PROVISIONED table and its indexes the template's units where
// they differ (a changed parameter), in place, as CloudFormation updates them on AWS.
func updateThroughput(ctx context.Context, db *dynamodb.Client, want *dynamodb.CreateTableInput, have *ddbtypes.TableDescription) error {
	if wantBillingMode(want) != ddbtypes.BillingModeProvisioned {
		return nil
	}
	name := aws.ToString(have.TableName)
	differs := func(w *ddbtypes.ProvisionedThroughput, h *ddbtypes.ProvisionedThroughputDescription) bool {
		return w != nil && (h == nil || aws.ToInt64(w.ReadCapacityUnits) != aws.ToInt64(h.ReadCapacityUnits) ||
			aws.ToInt64(w.WriteCapacityUnits) != aws.ToInt64(h.WriteCapacityUnits))
	}
	if differs(want.ProvisionedThroughput, have.ProvisionedThroughput) {
		if _, err := db.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String(name), ProvisionedThroughput: want.ProvisionedThroughput}); err != nil {
			return fmt.Errorf("update the provisioned throughput of table %s: %w", name, err)
		}
	}
	for _, g := range want.GlobalSecondaryIndexes {
		for _, h := range have.GlobalSecondaryIndexes {
			if aws.ToString(h.IndexName) != aws.ToString(g.IndexName) || !differs(g.ProvisionedThroughput, h.ProvisionedThroughput) {
				continue
			}
			if _, err := db.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String(name),
				GlobalSecondaryIndexUpdates: []ddbtypes.GlobalSecondaryIndexUpdate{{Update: &ddbtypes.UpdateGlobalSecondaryIndexAction{
					IndexName: g.IndexName, ProvisionedThroughput: g.ProvisionedThroughput}}}}); err != nil {
				return fmt.Errorf("update the provisioned throughput of index %s of table %s: %w", aws.ToString(g.IndexName), name, err)
			}
		}
	}
	return nil
}

func remarshal(from, to any) error {
	b, err := json.Marshal(from)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, to)
}

// queueAttributes are the AWS::SQS::Queue properties that are queue attributes.
var queueAttributes = []string{"DelaySeconds", "MaximumMessageSize", "MessageRetentionPeriod", "ReceiveMessageWaitTimeSeconds",
	"VisibilityTimeout", "RedrivePolicy", "RedriveAllowPolicy", "FifoQueue", "ContentBasedDeduplication",
	"DeduplicationScope", "FifoThroughputLimit"}

func (c *creator) queue(ctx context.Context, res *Resource) error {
	s := c.s
	name := s.physicalName(res, "QueueName")
	if fmt.Sprint(res.Properties["FifoQueue"]) == "true" && !strings.HasSuffix(name, ".fifo") {
		name += ".fifo"
	}
	attrs, err := queueAttrs(res)
	if err != nil {
		return err
	}
	if c.o.Describe {
		res.Ref = "https://sqs." + s.Region + ".amazonaws.com/" + sam.Account + "/" + name
		res.Attrs["Arn"] = s.arn("sqs", name)
		res.Attrs["QueueName"], res.Attrs["QueueUrl"] = name, res.Ref
		return nil
	}
	out, err := c.o.SQS.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
	if err != nil {
		return fmt.Errorf("create queue %s: %w", name, err)
	}
	url := aws.ToString(out.QueueUrl)
	got, err := c.o.SQS.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: out.QueueUrl,
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		return fmt.Errorf("queue %s: %w", name, err)
	}
	res.Ref = url
	res.Attrs["Arn"] = got.Attributes[string(sqstypes.QueueAttributeNameQueueArn)]
	res.Attrs["QueueName"] = name
	res.Attrs["QueueUrl"] = url
	return nil
}

// RecreateQueues creates the stack's queues again, from their resources' properties as
// Provision created them, on an SQS engine that lost them (fauxqs keeps its state in memory:
// a restart loses every queue). The queues without a redrive policy come first: the others'
// policies name them. Each must come back at the URL the functions were given.
func RecreateQueues(ctx context.Context, client *sqs.Client, st *Stack) (int, error) {
	var queues []*Resource
	for _, id := range slices.Sorted(maps.Keys(st.Resources)) {
		if r := st.Resources[id]; r.Type == "AWS::SQS::Queue" {
			queues = append(queues, r)
		}
	}
	slices.SortStableFunc(queues, func(a, b *Resource) int {
		_, ra := a.Properties["RedrivePolicy"]
		_, rb := b.Properties["RedrivePolicy"]
		switch {
		case ra == rb:
			return 0
		case rb:
			return -1
		}
		return 1
	})
	for i, r := range queues {
		attrs, err := queueAttrs(r)
		if err != nil {
			return i, err
		}
		name := r.Attrs["QueueName"]
		out, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
		if err != nil {
			return i, fmt.Errorf("stack %s: re-create queue %s: %w", st.Name, name, err)
		}
		if got := aws.ToString(out.QueueUrl); got != r.Attrs["QueueUrl"] {
			return i, fmt.Errorf("stack %s: queue %s came back at %s, not at %s where the functions send", st.Name, name, got, r.Attrs["QueueUrl"])
		}
	}
	return len(queues), nil
}

// queueAttrs are a queue resource's properties that are queue attributes, as CreateQueue
// takes them.
func queueAttrs(res *Resource) (map[string]string, error) {
	attrs := map[string]string{}
	for _, k := range queueAttributes {
		v, ok := res.Properties[k]
		if !ok {
			continue
		}
		switch x := v.(type) {
		case map[string]any:
			b, err := json.Marshal(x)
			if err != nil {
				return nil, err
			}
			attrs[k] = string(b)
		case float64:
			attrs[k] = strconv.FormatInt(int64(x), 10)
		default:
			attrs[k] = fmt.Sprint(x)
		}
	}
	return attrs, nil
}

// function reads a Lambda function's configuration (defaults as Lambda's).
func (s *Stack) function(res *Resource) (*Function, error) {
	p := res.Properties
	fn := &Function{LogicalID: res.LogicalID, Name: res.Ref, Arn: res.Attrs["Arn"], Env: map[string]string{},
		Timeout: 3 * time.Second, MemoryMB: 128, Architectures: []string{"x86_64"}, RecursiveLoop: "Terminate", Async: DefaultAsync}
	fn.Runtime, _ = p["Runtime"].(string)
	if v, ok := p["RecursiveLoop"]; ok {
		if fn.RecursiveLoop = fmt.Sprint(v); fn.RecursiveLoop != "Allow" && fn.RecursiveLoop != "Terminate" {
			return nil, fmt.Errorf("RecursiveLoop %v: want Allow or Terminate", v)
		}
	}
	fn.Handler, _ = p["Handler"].(string)
	if v, ok := p["Timeout"]; ok {
		n, err := strconv.Atoi(fmt.Sprint(v))
		if err != nil || n < 1 || n > 900 {
			return nil, fmt.Errorf("Timeout %v: want 1..900 seconds", v)
		}
		fn.Timeout = time.Duration(n) * time.Second
	}
	if v, ok := p["MemorySize"]; ok {
		n, err := strconv.Atoi(fmt.Sprint(v))
		if err != nil || n < 128 || n > 10240 {
			return nil, fmt.Errorf("MemorySize %v: want 128..10240 MB", v)
		}
		fn.MemoryMB = n
	}
	if v, ok := p["ReservedConcurrentExecutions"]; ok {
		n, err := strconv.Atoi(fmt.Sprint(v))
		switch {
		case err != nil || n < 0:
			return nil, fmt.Errorf("ReservedConcurrentExecutions %v: want a whole number, 0 or more", v)
		case n == 0:
			// Lambda throttles every invocation of such a function; none would ever run here.
			return nil, errors.New("ReservedConcurrentExecutions 0 stops the function (every invocation is throttled): the local platform does not run such a function; leave the property out instead")
		}
		fn.ReservedConcurrency = n
	}
	if a, ok := p["Architectures"].([]any); ok && len(a) > 0 {
		fn.Architectures = nil
		for _, x := range a {
			fn.Architectures = append(fn.Architectures, fmt.Sprint(x))
		}
	}
	if env, ok := p["Environment"].(map[string]any); ok {
		vars, _ := env["Variables"].(map[string]any)
		for k, v := range vars {
			switch x := v.(type) {
			case float64:
				fn.Env[k] = strconv.FormatInt(int64(x), 10)
			default:
				fn.Env[k] = fmt.Sprint(x)
			}
		}
	}
	roleArn := fmt.Sprint(p["Role"])
	for _, id := range slices.Sorted(maps.Keys(s.Roles)) {
		if s.Resources[id] != nil && s.Resources[id].Attrs["Arn"] == roleArn {
			fn.Role = s.Roles[id]
		}
	}
	if fn.Role == nil {
		return nil, fmt.Errorf("role %s is not a role of the stack", roleArn)
	}
	return fn, nil
}

func (s *Stack) eventSource(res *Resource) (EventSource, error) {
	p := res.Properties
	es := EventSource{LogicalID: res.LogicalID, BatchSize: 10, Enabled: fmt.Sprint(p["Enabled"]) != "false"}
	es.QueueArn = fmt.Sprint(p["EventSourceArn"])
	for _, r := range s.Resources {
		if r.Type == "AWS::SQS::Queue" && r.Attrs["Arn"] == es.QueueArn {
			es.QueueURL = r.Ref
		}
	}
	if es.QueueURL == "" {
		return es, fmt.Errorf("EventSourceArn %s is not a queue of the stack", es.QueueArn)
	}
	if v, ok := p["BatchSize"]; ok {
		n, err := strconv.Atoi(fmt.Sprint(v))
		if err != nil || n < 1 || n > 10000 {
			return es, fmt.Errorf("BatchSize %v", v)
		}
		es.BatchSize = n
	}
	if v, ok := p["MaximumBatchingWindowInSeconds"]; ok {
		n, err := strconv.Atoi(fmt.Sprint(v))
		if err != nil || n < 0 || n > 300 {
			return es, fmt.Errorf("MaximumBatchingWindowInSeconds %v", v)
		}
		es.BatchingWindow = time.Duration(n) * time.Second
	}
	if sc, ok := p["ScalingConfig"].(map[string]any); ok {
		if v, ok := sc["MaximumConcurrency"]; ok {
			n, err := strconv.Atoi(fmt.Sprint(v))
			if err != nil || n < 2 || n > 1000 {
				return es, fmt.Errorf("ScalingConfig.MaximumConcurrency %v: want 2..1000", v)
			}
			es.MaximumConcurrency = n
		}
	}
	if types, ok := p["FunctionResponseTypes"].([]any); ok {
		for _, t := range types {
			es.ReportBatchItemFailures = es.ReportBatchItemFailures || fmt.Sprint(t) == "ReportBatchItemFailures"
		}
	}
	if _, ok := p["FilterCriteria"]; ok {
		return es, errors.New("FilterCriteria on an SQS event source is not emulated by the local platform")
	}
	return es, nil
}

// streamSource reads a DynamoDB stream event source mapping, with Lambda's defaults and
// ranges. What the local platform does not emulate is refused by name rather than ignored.
func (s *Stack) streamSource(res *Resource) (StreamSource, error) {
	p := res.Properties
	ss := StreamSource{LogicalID: res.LogicalID, StreamArn: fmt.Sprint(p["EventSourceArn"]), BatchSize: 100,
		MaximumRetryAttempts: -1, Enabled: fmt.Sprint(p["Enabled"]) != "false"}
	for _, r := range s.Resources {
		if r.Type == "AWS::DynamoDB::Table" && r.Attrs["StreamArn"] == ss.StreamArn {
			ss.Table = r.Ref
		}
	}
	if ss.Table == "" {
		return ss, fmt.Errorf("EventSourceArn %s is not the stream of a table of the stack", ss.StreamArn)
	}
	switch pos := fmt.Sprint(p["StartingPosition"]); pos {
	case "TRIM_HORIZON", "LATEST":
		ss.StartingPosition = pos
	default:
		return ss, fmt.Errorf("StartingPosition %q: a DynamoDB stream starts at TRIM_HORIZON or LATEST", pos)
	}
	num := func(name string, lo, hi int, into *int) error {
		v, ok := p[name]
		if !ok {
			return nil
		}
		n, err := strconv.Atoi(fmt.Sprint(v))
		if err != nil || n < lo || n > hi {
			return fmt.Errorf("%s %v: want %d..%d", name, v, lo, hi)
		}
		*into = n
		return nil
	}
	var window, age, parallel, tumbling int
	age, parallel = -1, 1
	for _, err := range []error{
		num("BatchSize", 1, 10000, &ss.BatchSize),
		num("MaximumBatchingWindowInSeconds", 0, 300, &window),
		num("MaximumRetryAttempts", -1, 10000, &ss.MaximumRetryAttempts),
		num("MaximumRecordAgeInSeconds", -1, 604800, &age),
		num("ParallelizationFactor", 1, 10, &parallel),
		num("TumblingWindowInSeconds", 0, 900, &tumbling),
	} {
		if err != nil {
			return ss, err
		}
	}
	ss.BatchingWindow = time.Duration(window) * time.Second
	if age != -1 && age < 60 {
		return ss, fmt.Errorf("MaximumRecordAgeInSeconds %d: want -1 or 60..604800", age)
	}
	if age > 0 {
		ss.MaximumRecordAge = time.Duration(age) * time.Second
	}
	if dc, ok := p["DestinationConfig"].(map[string]any); ok {
		of, _ := dc["OnFailure"].(map[string]any)
		dest := fmt.Sprint(of["Destination"])
		for _, r := range s.Resources {
			if r.Type == "AWS::SQS::Queue" && r.Attrs["Arn"] == dest {
				ss.OnFailure = r.Ref
			}
		}
		if ss.OnFailure == "" {
			return ss, fmt.Errorf("DestinationConfig.OnFailure.Destination %s: the local platform emulates only an SQS queue of the stack as a stream's on-failure destination", dest)
		}
	} else if p["DestinationConfig"] != nil {
		return ss, fmt.Errorf("DestinationConfig: want an object with OnFailure.Destination")
	}
	for _, o := range []struct {
		name string
		set  bool
	}{
		{"ParallelizationFactor", parallel != 1}, {"TumblingWindowInSeconds", tumbling != 0},
		{"StartingPositionTimestamp", p["StartingPositionTimestamp"] != nil},
	} {
		if o.set {
			return ss, fmt.Errorf("%s is not emulated by the local platform's stream event sources", o.name)
		}
	}
	ss.BisectBatchOnFunctionError = fmt.Sprint(p["BisectBatchOnFunctionError"]) == "true"
	if types, ok := p["FunctionResponseTypes"].([]any); ok {
		for _, t := range types {
			ss.ReportBatchItemFailures = ss.ReportBatchItemFailures || fmt.Sprint(t) == "ReportBatchItemFailures"
		}
	}
	if fc, ok := p["FilterCriteria"].(map[string]any); ok {
		filters, _ := fc["Filters"].([]any)
		var patterns []string
		for i, f := range filters {
			fm, _ := f.(map[string]any)
			pat, ok := fm["Pattern"].(string)
			if !ok {
				return ss, fmt.Errorf("FilterCriteria.Filters[%d]: no Pattern", i)
			}
			patterns = append(patterns, pat)
		}
		c, err := eventfilter.Parse(patterns)
		if err != nil {
			return ss, fmt.Errorf("FilterCriteria: %w", err)
		}
		ss.Filters = c
	}
	return ss, nil
}
