package localaws

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/sundialhq/sundial/infra/emulator"
	"github.com/sundialhq/sundial/infra/gateway"
	"github.com/sundialhq/sundial/infra/iam"
	"github.com/sundialhq/sundial/infra/provision"
	"github.com/sundialhq/sundial/infra/sam"
	"github.com/sundialhq/sundial/infra/stack"
)

// Region is the local region.
const Region = "us-east-1"

// Options configure Start.
type Options struct {
	// Template is the SAM template's text (template.yaml).
	Template []byte
	// DBPath keeps DynamoDB's data on disk there across restarts; empty keeps it in memory.
	DBPath string
	// Log receives the engines' output and the gateway's log lines.
	Log io.Writer
	// Listen is the gateway's address (default 127.0.0.1:0, a free loopback port); another
	// address lets containers (sam local) reach it.
	Listen string
	// Engines, when set, are engines already running (`sundial engines serve`, shared by the
	// test binaries of `make test`): none is started, and Stop leaves them running.
	Engines *Endpoints
	// Replica, when set, makes the gateway's DynamoDB answers lag as an index and a replica
	// may (infra/gateway/replica.go).
	Replica *gateway.Replica
	// Supervise, when set, restarts the engines Start starts when one dies (supervise.go);
	// nil leaves a dead engine dead. Shared engines (Engines) are not supervised here.
	Supervise *Supervision
}

// Endpoints are running engines' URLs and the secret they require (emulator.SecretHeader):
// whoever holds it can write the tables behind the endpoint's IAM checks, so it is kept
// only in this process and in `sundial engines serve`'s state file (mode 0600).
type Endpoints struct {
	DynamoDB string `json:"dynamodb"`
	SQS      string `json:"sqs"`
	Secret   string `json:"secret"`
	// DynamoDBPartitions, when more than one, are the DynamoDB engines the items are spread
	// over (the first is DynamoDB); see infra/gateway/partition.go.
	DynamoDBPartitions []string `json:"dynamodb_partitions,omitempty"`
}

// Env is a running local AWS.
type Env struct {
	// Endpoint is the gateway's URL: the one endpoint every local client uses.
	Endpoint string
	// Template is the SAM translation of the template.
	Template *sam.Template
	// Auth is the IAM check every call through Endpoint passes.
	Auth *iam.Authorizer
	// Gateway routes the calls.
	Gateway *gateway.Gateway

	dynamo   []*emulator.Server // started here (one per partition); nil for shared engines
	queues   *emulator.Server
	engines  Endpoints
	admin    aws.Credentials
	operator aws.Config
	ddb      *dynamodb.Client
	sqs      *sqs.Client

	mu      sync.Mutex
	stacks  map[string]*provision.Stack
	secrets map[string]string // role key ID → its secret

	// The engines' supervision (supervise.go), when Options.Supervise is set.
	failed          chan error
	stopSupervision context.CancelFunc
	supervising     sync.WaitGroup
}

// Start installs (when missing) and starts the engines, translates the template and starts
// the gateway. Stacks are created with Provision.
func Start(ctx context.Context, o Options) (_ *Env, err error) {
	if o.Log == nil {
		o.Log = io.Discard
	}
	e := &Env{stacks: map[string]*provision.Stack{}, secrets: map[string]string{}}
	defer func() {
		if err != nil {
			_ = e.Stop()
		}
	}()
	var translated error
	done := make(chan struct{})
	go func() { // the translation (python) runs while the engines start
		defer close(done)
		e.Template, translated = sam.Translate(ctx, o.Template)
	}()
	var ep Endpoints
	if o.Engines != nil {
		ep = *o.Engines
		<-done
	} else {
		started, err := StartEngines(ctx, o.DBPath, o.Log)
		<-done
		if err != nil {
			return nil, err
		}
		e.dynamo, e.queues = started.dynamo, started.queues
		ep = started.Endpoints
	}
	if translated != nil {
		return nil, translated
	}
	e.Auth = iam.NewAuthorizer(iam.Env{Region: Region, Account: sam.Account})
	e.admin = NewCredentials("LOCALADMIN")
	e.Auth.AddAdmin(e.admin.AccessKeyID, e.admin.SecretAccessKey, AdminPrincipal)
	e.engines = ep
	e.Gateway = &gateway.Gateway{DynamoDB: ep.DynamoDB, SQS: ep.SQS, EngineSecret: ep.Secret, Auth: e.Auth, Region: Region, Account: sam.Account, Throttle: &gateway.Throttle{},
		Log: slog.New(slog.NewJSONHandler(o.Log, nil)).With("component", "gateway"), Replica: o.Replica,
		Partitions: ep.DynamoDBPartitions, Colocate: Colocated}
	listen := o.Listen
	if listen == "" {
		listen = "127.0.0.1:0"
	}
	if e.Endpoint, err = e.Gateway.Start(listen); err != nil {
		return nil, err
	}
	if e.operator, err = emulator.AWSConfig(ctx, e.Endpoint, Region); err != nil {
		return nil, err
	}
	e.operator.Credentials = credentials.StaticCredentialsProvider{Value: e.admin}
	// Provisioning talks to the engines through the gateway too, as the administrator.
	e.ddb, e.sqs = dynamodb.NewFromConfig(e.operator), sqs.NewFromConfig(e.operator)
	if o.Supervise != nil && e.dynamo != nil {
		e.supervise(*o.Supervise, o.DBPath)
	}
	return e, nil
}

// AdminPrincipal names the platform's administrator: the credentials each local AWS
// generates for itself (Admin), allowed everything. The CLI, tests and the platform's own
// setup sign with them; `sundial up` records them in its state file for the CLI.
const AdminPrincipal = "local-administrator"

// NewCredentials returns a new access key: an ID of prefix and random letters and digits
// (DynamoDB Local accepts nothing else in one) and a random secret (crypto/rand.Text: 26
// base32 characters, 128 bits, each).
func NewCredentials(prefix string) aws.Credentials {
	return aws.Credentials{AccessKeyID: prefix + rand.Text(), SecretAccessKey: rand.Text() + rand.Text(), Source: "sundial local platform"}
}

// Admin returns the administrator's credentials.
func (e *Env) Admin() aws.Credentials { return e.admin }

// Provision creates (or finds, on a kept database) the stack name with the parameters, and
// makes DescribeStacks answer for it. Each function's role gets an access key of its own:
// Config(stack, function) signs with it.
func (e *Env) Provision(ctx context.Context, name string, params map[string]string) (*provision.Stack, error) {
	return e.ProvisionTemplate(ctx, e.Template, name, params, nil)
}

// ProvisionTemplate creates the stack name of another translated template on the same engines
// (an app's own stack), as Provision does; its Fn::ImportValue reads imports (the exports of
// the stacks deployed before it).
func (e *Env) ProvisionTemplate(ctx context.Context, t *sam.Template, name string, params, imports map[string]string) (*provision.Stack, error) {
	st, err := provision.Provision(ctx, t, provision.Options{StackName: name, Region: Region, Params: params, Imports: imports,
		DynamoDB: e.ddb, SQS: e.sqs})
	if err != nil {
		return nil, fmt.Errorf("stack %s: %w", name, err)
	}
	e.mu.Lock()
	for _, id := range slices.Sorted(maps.Keys(st.Roles)) {
		key := RoleKey(name, id)
		if e.secrets[key] == "" {
			e.secrets[key] = rand.Text() + rand.Text()
		}
		e.Auth.AddRole(key, e.secrets[key], st.Roles[id])
	}
	e.mu.Unlock()
	e.Gateway.AddStack(gateway.StackInfo{Name: name, Region: Region, Created: time.Now(), Parameters: st.Params, Outputs: st.Outputs})
	// DynamoDB Local does not throttle: the gateway enforces the provisioned tables' units.
	for _, u := range st.ProvisionedUnits() {
		e.Gateway.Throttle.SetCapacity(gateway.Capacity{Table: u.Table, Index: u.Index, Read: float64(u.Read), Write: float64(u.Write)})
	}
	e.mu.Lock()
	e.stacks[name] = st
	e.mu.Unlock()
	return st, nil
}

// RoleKey is the access key ID that stands for a role of a stack. DynamoDB Local accepts
// only letters and digits in an access key ID; other characters are dropped.
func RoleKey(stackName, roleID string) string {
	return "LOCALROLE" + alnum(stackName) + "X" + alnum(roleID)
}

func alnum(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, s)
}

// Operator is the AWS configuration of the administrator: everything allowed.
func (e *Env) Operator() aws.Config { return e.operator.Copy() }

// Config is the AWS configuration a function of a stack runs with: its role's credentials,
// so every call it makes is checked against the role's policies.
func (e *Env) Config(stackName, function string) (aws.Config, error) {
	e.mu.Lock()
	st := e.stacks[stackName]
	secrets := e.secrets
	e.mu.Unlock()
	if st == nil {
		return aws.Config{}, fmt.Errorf("stack %s is not provisioned", stackName)
	}
	fn := st.Functions[function]
	if fn == nil {
		return aws.Config{}, fmt.Errorf("stack %s has no function %s (functions: %v)", stackName, function, slices.Sorted(maps.Keys(st.Functions)))
	}
	cfg := e.operator.Copy()
	key := RoleKey(stackName, fn.Role.Name)
	e.mu.Lock()
	secret := secrets[key]
	e.mu.Unlock()
	cfg.Credentials = credentials.NewStaticCredentialsProvider(key, secret, "")
	return cfg, nil
}

// Outputs returns a provisioned stack's outputs as the functions read them.
func Outputs(st *provision.Stack) (stack.Outputs, error) {
	out, err := stack.FromValues(st.Outputs, st.Params)
	if err != nil {
		return stack.Outputs{}, fmt.Errorf("stack %s %w", st.Name, err)
	}
	return out, nil
}

// Engines names the engines' endpoints (behind the gateway), for reports: the first
// DynamoDB engine's when there are several (DynamoDBPartitions).
func (e *Env) Engines() (dynamoDB, sqs string) { return e.engines.DynamoDB, e.engines.SQS }

// DynamoDBPartitions are the DynamoDB engines' endpoints, one per partition (one when the
// local DynamoDB is not partitioned).
func (e *Env) DynamoDBPartitions() []string {
	if len(e.engines.DynamoDBPartitions) > 0 {
		return slices.Clone(e.engines.DynamoDBPartitions)
	}
	return []string{e.engines.DynamoDB}
}

// Colocated are the partition-key prefixes the gateway keeps on one engine: the audit chain's
// record and head are written in one transaction (internal/dynamo.AuditLog.Add), which
// DynamoDB runs across partitions and one DynamoDB Local engine cannot.
var Colocated = []string{"AUDIT#"}

// EngineSecret is the secret the engines require (emulator.SecretHeader): for a test or a
// measurement that goes to them straight (emulator.WithSecret), not through Endpoint.
func (e *Env) EngineSecret() string { return e.engines.Secret }

// Running are engines started by StartEngines.
type Running struct {
	Endpoints
	dynamo []*emulator.Server
	queues *emulator.Server
}

// StartEngines installs (when missing) and starts the DynamoDB Local engines (Partitions of
// them: on disk in dbPath, or in memory) and fauxqs, in parallel, all requiring a new secret
// (Endpoints.Secret).
func StartEngines(ctx context.Context, dbPath string, logw io.Writer) (*Running, error) {
	n, err := Partitions(dbPath, 0)
	if err != nil {
		return nil, err
	}
	eng, err := emulator.Install(ctx, logw)
	if err != nil {
		return nil, err
	}
	r := &Running{dynamo: make([]*emulator.Server, n)}
	secret := emulator.NewSecret()
	errs := make([]error, n+1)
	var wg sync.WaitGroup
	wg.Go(func() { r.queues, errs[n] = emulator.StartSQS(ctx, eng, secret, logw) })
	for i := range n {
		wg.Go(func() {
			r.dynamo[i], errs[i] = emulator.StartDynamoDB(ctx, eng, emulator.DynamoDBOptions{DBPath: partitionDir(dbPath, i), Secret: secret, Log: logw})
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		_ = r.Stop()
		return nil, err
	}
	if err := recordPartitions(dbPath, n); err != nil {
		_ = r.Stop()
		return nil, err
	}
	r.Endpoints = Endpoints{DynamoDB: r.dynamo[0].Endpoint, SQS: r.queues.Endpoint, Secret: secret}
	if n > 1 {
		for _, d := range r.dynamo {
			r.DynamoDBPartitions = append(r.DynamoDBPartitions, d.Endpoint)
		}
	}
	return r, nil
}

// Stop stops the engines.
func (r *Running) Stop() error {
	var errs []error
	for _, s := range append(slices.Clone(r.dynamo), r.queues) {
		if s != nil {
			errs = append(errs, s.Stop())
		}
	}
	return errors.Join(errs...)
}

// Stop stops the gateway and the engines.
func (e *Env) Stop() error {
	if e.stopSupervision != nil {
		e.stopSupervision() // the engines' exits below are no deaths to restart
	}
	var errs []error
	if e.Gateway != nil {
		errs = append(errs, e.Gateway.Close())
	}
	for _, s := range append(slices.Clone(e.dynamo), e.queues) {
		if s != nil {
			errs = append(errs, s.Stop())
		}
	}
	e.supervising.Wait()
	return errors.Join(errs...)
}

// EnginePids are the supervised engines' current process ids (the first DynamoDB Local's,
// fauxqs's); zero for engines Start did not start.
func (e *Env) EnginePids() (dynamoDB, sqs int) {
	if len(e.dynamo) == 0 || e.queues == nil {
		return 0, 0
	}
	return e.dynamo[0].Pid(), e.queues.Pid()
}

// FetchIAMReport reads the IAM report of a local AWS (a `sundial up` process's) at endpoint,
// signed with its administrator's credentials (admin; a `sundial up` records them in its
// state file).
func FetchIAMReport(ctx context.Context, endpoint string, admin aws.Credentials) (iam.Report, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(endpoint, "/")+gateway.IAMReportPath, nil)
	if err != nil {
		return iam.Report{}, err
	}
	empty := sha256.Sum256(nil)
	if err := v4.NewSigner().SignHTTP(ctx, admin, req, hex.EncodeToString(empty[:]), gateway.ReportService, Region, time.Now()); err != nil {
		return iam.Report{}, fmt.Errorf("IAM report: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return iam.Report{}, fmt.Errorf("IAM report: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return iam.Report{}, fmt.Errorf("IAM report: %s answered %s (is it the local platform's endpoint?)", endpoint, resp.Status)
	}
	var rep iam.Report
	if err := json.NewDecoder(resp.Body).Decode(&rep); err != nil {
		return iam.Report{}, fmt.Errorf("IAM report: %w", err)
	}
	return rep, nil
}

// Stack returns a provisioned stack by name (nil if none).
func (e *Env) Stack(name string) *provision.Stack {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.stacks[name]
}
