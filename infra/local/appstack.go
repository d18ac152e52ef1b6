package local

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/cfn"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/sundialhq/sundial/infra/lambdarun"
	"github.com/sundialhq/sundial/infra/localaws"
	"github.com/sundialhq/sundial/infra/provision"
	"github.com/sundialhq/sundial/infra/sam"
)

// An app's own stack (Options.AppStacks) is deployed onto the running platform as
// CloudFormation would deploy it after Sundial's: its template translated by the SAM
// translator, its Fn::ImportValue read from the exports of Sundial's stack, its tables and
// roles provisioned on the same engines (infra/provision, every call checked against the
// caller's role), its Go functions built and run as processes behind the emulated Lambda
// Invoke API under their FunctionName (the processor invokes them there, through the gateway's
// IAM check), and each custom resource sent a Create request by invoking its ServiceToken's
// function asynchronously, as CloudFormation does (with the retries its EventInvokeConfig
// allows) — Sundial's publish function, built from functions/publish and run as Lambda runs
// it — whose answer comes back at the request's ResponseURL. What the platform cannot run is
// reported in AppStackReport.Skipped.

// AppStackTemplate is the template file an app stack's directory holds.
const AppStackTemplate = "template.yaml"

// AppStackReport is what deploying an app's stack did.
type AppStackReport struct {
	Name, Dir string
	Tables    []string          // the tables created (or kept), by physical name
	Functions []string          // the functions served on the Lambda Invoke API, by name
	Published []CustomResource  // the custom resources, answered SUCCESS
	Outputs   map[string]string // the stack's outputs
	Skipped   []string          // what does not run locally, and why
}

// CustomResource is a custom resource of an app stack as CloudFormation keeps it: what its
// Delete request will carry.
type CustomResource struct {
	LogicalID    string         `json:"logicalId"`
	Type         string         `json:"type"`
	ServiceToken string         `json:"serviceToken"`
	PhysicalID   string         `json:"physicalId"`
	Properties   map[string]any `json:"properties"`
	// Data is the function's answer (for Custom::SundialTimers: App, Created, Updated, …).
	Data map[string]any `json:"data,omitempty"`
}

// AppStackState is an app stack in the state file, for `sundial app-stack delete`.
type AppStackState struct {
	Name            string           `json:"name"`
	Dir             string           `json:"dir"`
	StackID         string           `json:"stackId"`
	CustomResources []CustomResource `json:"customResources"`
}

// isCustomResource reports whether CloudFormation sends the resource type to a function.
func isCustomResource(typ string) bool {
	return strings.HasPrefix(typ, "Custom::") || typ == "AWS::CloudFormation::CustomResource"
}

// AppStackName is the stack name an app stack directory gets: the directory's name.
func AppStackName(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	return filepath.Base(abs)
}

// deployAppStacks deploys o.AppStacks in order, once the platform runs.
func (p *Platform) deployAppStacks(ctx context.Context, o Options) error {
	if len(o.AppStacks) == 0 {
		return nil
	}
	pub := p.Stack.Functions[publishFunction]
	if pub == nil {
		return errors.New("app stacks: Sundial's stack has no publish function (parameter PublishOnDeploy?): nothing serves their Custom::SundialTimers")
	}
	src := o.SourceDir
	if src == "" {
		var err error
		// The working directory's Sundial source tree, else the one an app stack is in
		// (examples/billing).
		if src, err = moduleRoot(); err != nil {
			for _, d := range o.AppStacks {
				if abs, aerr := filepath.Abs(d); aerr == nil {
					if root, rerr := moduleRootFrom(abs); rerr == nil {
						src, err = root, nil
						break
					}
				}
			}
		}
		if err != nil {
			return fmt.Errorf("app stacks: the publish function is built from Sundial's source: %w", err)
		}
	}
	dir, err := ownedTempDir(appStacksPrefix)
	if err != nil {
		return err
	}
	p.appTemp = dir
	// The publish function, built from functions/publish and run as Lambda runs it, with its
	// role and its environment from Sundial's template.
	bins, err := BuildBootstraps(ctx, src, filepath.Join(dir, "sundial"), "publish")
	if err != nil {
		return err
	}
	if err := p.serveProcess(ctx, o, p.Stack.Name, pub, bins["publish"], withLocalSettings(pub.Env, o, nil)); err != nil {
		return err
	}
	p.appMu.Lock()
	defer p.appMu.Unlock()
	p.appTemplates, p.appFunctions, p.appHashes = map[string]*sam.Template{}, map[string]map[string]bool{}, map[string][32]byte{}
	for _, d := range o.AppStacks {
		if o.StateFile != "" {
			// Deployed again: a delete by an earlier run's `sundial app-stack delete` is over.
			if err := os.Remove(appStackDeletedFile(filepath.Dir(o.StateFile), AppStackName(d))); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
		}
		rep, state, err := p.deployAppStack(ctx, o, d, filepath.Join(dir, AppStackName(d)))
		if err != nil {
			return fmt.Errorf("app stack %s: %w", d, err)
		}
		p.AppStacks = append(p.AppStacks, rep)
		p.appStates = append(p.appStates, state)
	}
	if o.StateFile != "" {
		return WriteState(o.StateFile, p.stateRecord(o))
	}
	return nil
}

func (p *Platform) deployAppStack(ctx context.Context, o Options, dir, buildDir string) (AppStackReport, AppStackState, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return AppStackReport{}, AppStackState{}, err
	}
	name := AppStackName(abs)
	rep := AppStackReport{Name: name, Dir: abs}
	if p.appHashes[abs], err = AppStackTemplateHash(abs); err != nil {
		return rep, AppStackState{}, err
	}
	t, err := sam.TranslateFile(ctx, filepath.Join(abs, AppStackTemplate))
	if err != nil {
		return rep, AppStackState{}, err
	}
	if name == p.Stack.Name {
		return rep, AppStackState{}, fmt.Errorf("the app stack's name %q is Sundial's stack's", name)
	}
	st, err := p.Local.ProvisionTemplate(ctx, t, name, nil, p.Stack.Exports)
	if err != nil {
		return rep, AppStackState{}, err
	}
	rep.Outputs = st.Outputs
	p.appTemplates[name] = t
	p.appFunctions[name] = map[string]bool{}
	state := AppStackState{Name: name, Dir: abs, StackID: stackID(name)}
	order, err := t.Order()
	if err != nil {
		return rep, state, err
	}
	for _, id := range order {
		res := st.Resources[id]
		if res == nil {
			continue // its condition is false
		}
		if res.Type == "AWS::DynamoDB::Table" {
			rep.Tables = append(rep.Tables, res.Ref)
		}
	}
	// The functions first, as CloudFormation creates them before the custom resources that
	// refer to them.
	for _, id := range slices.Sorted(maps.Keys(st.Functions)) {
		fn := st.Functions[id]
		bin, why, err := buildFunction(ctx, abs, id, t.Resources[id].Metadata, fn, filepath.Join(buildDir, id))
		if err != nil {
			return rep, state, err
		}
		if why != "" {
			rep.Skipped = append(rep.Skipped, fmt.Sprintf("%s (AWS::Lambda::Function %s): %s", id, fn.Name, why))
			continue
		}
		if err := p.serveProcess(ctx, o, name, fn, bin, fn.Env); err != nil {
			return rep, state, err
		}
		rep.Functions = append(rep.Functions, fn.Name)
		p.appFunctions[name][id] = true
		if len(fn.Schedules)+len(fn.EventSources)+len(fn.StreamSources) > 0 {
			rep.Skipped = append(rep.Skipped, fmt.Sprintf("%s's schedules and event sources: an app stack's functions are only invoked locally, not triggered", id))
		}
	}
	sent := map[string]bool{}
	for _, cr := range customResources(st, order) {
		id := cr.LogicalID
		ans, err := SendCustomResource(ctx, p.AWS, cfn.RequestCreate, state.StackID, cr, nil)
		if err != nil {
			return rep, state, fmt.Errorf("%s (%s): %w", id, cr.Type, err)
		}
		cr.PhysicalID, cr.Data = ans.PhysicalResourceID, ans.Data
		rep.Published = append(rep.Published, cr)
		state.CustomResources = append(state.CustomResources, cr)
		sent[id+" ("+cr.Type+")"] = true
	}
	for _, s := range st.NotEmulated {
		if !sent[s] {
			rep.Skipped = append(rep.Skipped, s+": not run locally (it has a name and an ARN only)")
		}
	}
	return rep, state, nil
}

// customResources are the provisioned stack's custom resources in the template's order, their
// properties as CloudFormation sends them.
func customResources(st *provision.Stack, order []string) []CustomResource {
	var out []CustomResource
	for _, id := range order {
		res := st.Resources[id]
		if res == nil || !isCustomResource(res.Type) {
			continue // its condition is false, or not a custom resource
		}
		cr := CustomResource{LogicalID: id, Type: res.Type, Properties: cfnProperties(res.Properties).(map[string]any)}
		cr.ServiceToken, _ = cr.Properties["ServiceToken"].(string)
		out = append(out, cr)
	}
	return out
}

func stackID(name string) string {
	return fmt.Sprintf("arn:%s:cloudformation:%s:%s:stack/%s/local", sam.Partition, localaws.Region, sam.Account, name)
}

// cfnProperties renders every scalar as a string, as CloudFormation passes a custom
// resource's properties to its function.
func cfnProperties(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = cfnProperties(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = cfnProperties(e)
		}
		return out
	case nil:
		return ""
	case string:
		return x
	case float64:
		b, _ := json.Marshal(x)
		return string(b)
	default:
		return fmt.Sprint(x)
	}
}

// buildFunction builds an app stack's Go function for this machine as `sam build` would for
// Lambda: BuildMethod makefile runs the Makefile's build-<LogicalID> target in the CodeUri
// directory with ARTIFACTS_DIR (its LAMBDA_ENV set to this machine's GOOS and GOARCH);
// BuildMethod go1.x (or a go1.x runtime) builds the CodeUri package. Other functions are not
// built: why says so.
func buildFunction(ctx context.Context, dir, id string, meta map[string]any, fn *provision.Function, out string) (bin, why string, err error) {
	uri, _ := meta["LocalCodeUri"].(string)
	method, _ := meta["BuildMethod"].(string)
	if uri == "" {
		return "", "its code is not a local directory (CodeUri)", nil
	}
	code := filepath.Join(dir, uri)
	goEnv := []string{"CGO_ENABLED=0", "GOOS=" + runtime.GOOS, "GOARCH=" + runtime.GOARCH}
	var cmd *exec.Cmd
	switch {
	case method == "makefile":
		cmd = exec.CommandContext(ctx, "make", "--no-print-directory", "build-"+id, "ARTIFACTS_DIR="+out,
			"LAMBDA_ENV="+strings.Join(goEnv, " "))
	case method == "go1.x" || fn.Runtime == "go1.x":
		cmd = exec.CommandContext(ctx, "go", "build", "-tags", "lambda.norpc", "-o", filepath.Join(out, "bootstrap"), ".")
	default:
		return "", fmt.Sprintf("runtime %s, build method %q: the local platform builds and runs Go functions only (BuildMethod makefile or go1.x)", fn.Runtime, method), nil
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return "", "", err
	}
	cmd.Dir = code
	cmd.Env = append(os.Environ(), goEnv...)
	var msg bytes.Buffer
	cmd.Stdout, cmd.Stderr = &msg, &msg
	if err := cmd.Run(); err != nil {
		return "", "", fmt.Errorf("build function %s (%s in %s): %w\n%s", id, strings.Join(cmd.Args, " "), code, err, msg.String())
	}
	bin = filepath.Join(out, "bootstrap")
	if _, err := os.Stat(bin); err != nil {
		return "", "", fmt.Errorf("build function %s: no bootstrap in %s after %s", id, out, strings.Join(cmd.Args, " "))
	}
	return bin, "", nil
}

// serveProcess runs a stack's function from its bootstrap as Lambda runs it (a process behind
// an emulated Runtime API), with the environment given, the platform's endpoint and its role's
// credentials, and serves it on the Lambda Invoke API under its name.
func (p *Platform) serveProcess(ctx context.Context, o Options, stackName string, fn *provision.Function, bin string, env map[string]string) error {
	cfg, err := p.Local.Config(stackName, fn.LogicalID)
	if err != nil {
		return err
	}
	creds, err := cfg.Credentials.Retrieve(ctx)
	if err != nil {
		return err
	}
	env = maps.Clone(env)
	if env == nil {
		env = map[string]string{}
	}
	env["AWS_ENDPOINT_URL"] = p.Endpoint
	env["AWS_ACCESS_KEY_ID"], env["AWS_SECRET_ACCESS_KEY"] = creds.AccessKeyID, creds.SecretAccessKey
	env["AWS_LAMBDA_LOG_LEVEL"] = "INFO"
	pf, err := lambdarun.NewProcessFunction(lambdarun.ProcessConfig{
		Name: fn.Name, Bootstrap: bin, Env: env, Region: p.AWS.Region, Timeout: fn.Timeout, MemoryMB: fn.MemoryMB,
		Concurrency: 2, Output: &processOutput{function: fn.Name, lines: p.lines, log: o.Log, logMu: &sync.Mutex{}},
	})
	if err != nil {
		return err
	}
	p.appFuncs = append(p.appFuncs, pf)
	if err := p.actions.Register(fn.Name, pf); err != nil {
		return err
	}
	// Its asynchronous invocations (a custom resource's requests) as its
	// AWS::Lambda::EventInvokeConfig says, Lambda's defaults without one.
	return p.actions.SetEventConfig(fn.Name, lambdarun.EventConfig{MaximumRetryAttempts: fn.Async.MaximumRetryAttempts,
		MaximumEventAge: fn.Async.MaximumEventAge})
}

// LambdaEvents counts what the emulated Lambda's asynchronous queue did (nil without the
// Invoke API: no actions and no app stacks).
func (p *Platform) LambdaEvents() *lambdarun.EventStats {
	if p.actions == nil {
		return nil
	}
	return p.actions.EventStats()
}

// SendCustomResource sends a custom resource request as CloudFormation does: the event is
// given to the ServiceToken's function asynchronously (InvocationType Event) through the Lambda
// Invoke API at cfg's endpoint — so Lambda's asynchronous queue handles it, with the retries
// the function's EventInvokeConfig allows — and the answer is read at the request's pre-signed
// ResponseURL (a server here). As CloudFormation: the first answer counts; one over 4,096
// bytes fails the resource ("Response object is too long"); no answer within the resource's
// ServiceTimeout (1..3600 s, default 3600) fails it. A FAILED answer is an error with its
// reason.
func SendCustomResource(ctx context.Context, cfg aws.Config, requestType cfn.RequestType, stackID string, cr CustomResource, oldProperties map[string]any) (cfn.Response, error) {
	name, ok := functionOfToken(cr.ServiceToken)
	if !ok {
		return cfn.Response{}, fmt.Errorf("ServiceToken %q: the local platform sends custom resources to Lambda functions only", cr.ServiceToken)
	}
	wait, err := serviceTimeout(cr.Properties)
	if err != nil {
		return cfn.Response{}, err
	}
	type answer struct {
		res cfn.Response
		err error
	}
	answers := make(chan answer, 1)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return cfn.Response{}, err
	}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		var res cfn.Response
		if r.Method != http.MethodPut || err != nil || json.Unmarshal(body, &res) != nil {
			http.Error(w, "want a PUT of a JSON response", http.StatusBadRequest)
			return
		}
		a := answer{res: res}
		if len(body) > maxCustomResourceResponse {
			// S3 takes the object; CloudFormation then refuses it.
			a.err = fmt.Errorf("%s answered %d bytes: Response object is too long (at most %d)", name, len(body), maxCustomResourceResponse)
		}
		select {
		case answers <- a:
		default: // not the first answer: CloudFormation has read one already
		}
	})}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	reqID := fmt.Sprintf("local-%s-%d", strings.ToLower(string(requestType)), time.Now().UnixNano())
	ev := cfn.Event{RequestType: requestType, RequestID: reqID, ResponseURL: "http://" + ln.Addr().String() + "/response?X-Amz-Signature=local",
		ResourceType: cr.Type, LogicalResourceID: cr.LogicalID, StackID: stackID, ResourceProperties: cr.Properties,
		OldResourceProperties: oldProperties}
	if requestType != cfn.RequestCreate {
		ev.PhysicalResourceID = cr.PhysicalID
	}
	payload, err := json.Marshal(ev)
	if err != nil {
		return cfn.Response{}, err
	}
	if _, err := lambda.NewFromConfig(cfg).Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String(name), Payload: payload,
		InvocationType: lambdatypes.InvocationTypeEvent}); err != nil {
		return cfn.Response{}, fmt.Errorf("invoke %s: %w", name, err)
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case a := <-answers:
		if a.err != nil {
			return a.res, a.err
		}
		if a.res.Status != cfn.StatusSuccess {
			return a.res, fmt.Errorf("%s answered %s: %s", name, a.res.Status, a.res.Reason)
		}
		return a.res, nil
	case <-timer.C:
		return cfn.Response{}, fmt.Errorf("%s sent no answer within the resource's ServiceTimeout (%s): CloudFormation fails the resource", name, wait)
	case <-ctx.Done():
		return cfn.Response{}, ctx.Err()
	}
}

// maxCustomResourceResponse is CloudFormation's limit on a custom resource's answer.
const maxCustomResourceResponse = 4096

// serviceTimeout is how long CloudFormation waits for a custom resource's answer: its
// ServiceTimeout property, 1..3600 seconds, default 3600.
func serviceTimeout(props map[string]any) (time.Duration, error) {
	v, ok := props["ServiceTimeout"]
	if !ok || v == "" {
		return time.Hour, nil
	}
	n, err := strconv.Atoi(fmt.Sprint(v))
	if err != nil || n < 1 || n > 3600 {
		return 0, fmt.Errorf("ServiceTimeout %v: want an integer from 1 to 3600 (seconds)", v)
	}
	return time.Duration(n) * time.Second, nil
}

// functionOfToken is the function name of a Lambda ARN (qualifier dropped) or name.
func functionOfToken(token string) (string, bool) {
	if !strings.HasPrefix(token, "arn:") {
		return token, token != ""
	}
	parts := strings.Split(token, ":")
	if len(parts) < 7 || parts[2] != "lambda" || parts[5] != "function" {
		return "", false
	}
	return parts[6], true
}

// appStackDeletedPrefix, with the stack's name, is the file in the state directory that
// `sundial app-stack delete` leaves when it deleted the stack: the running platform reads it
// (UpdateAppStack), and local.json stays its owner's alone. A platform's start removes its
// stacks' files (it deploys them again).
const appStackDeletedPrefix = "app-stack-deleted."

func appStackDeletedFile(stateDir, name string) string {
	return filepath.Join(stateDir, appStackDeletedPrefix+name)
}

// AppStackDeleted reports whether `sundial app-stack delete` deleted the stack called name of
// the platform owning stateDir.
func AppStackDeleted(stateDir, name string) bool {
	_, err := os.Stat(appStackDeletedFile(stateDir, name))
	return err == nil
}

// DeleteAppStack sends the Delete request to each custom resource of the app stack (named by
// its directory or its name) that the platform owning the state directory stateDir recorded
// in its local.json, in the reverse of their creation, and marks the stack deleted for that
// platform (a file beside local.json, which it does not write: local.json is its owner's). Its
// tables and functions stay until the platform stops (they are not the timers').
func DeleteAppStack(ctx context.Context, stateDir, which string) ([]CustomResource, error) {
	statePath := filepath.Join(stateDir, StateFileName)
	s, ok := ReadState(statePath)
	if !ok {
		return nil, fmt.Errorf("no running sundial up recorded in %s: app stacks are deployed with sundial up --app-stack", statePath)
	}
	abs, _ := filepath.Abs(which)
	i := slices.IndexFunc(s.AppStacks, func(a AppStackState) bool { return a.Dir == abs || a.Name == which })
	if i < 0 {
		var have []string
		for _, a := range s.AppStacks {
			have = append(have, a.Name+" ("+a.Dir+")")
		}
		return nil, fmt.Errorf("app stack %s is not deployed on the running platform (deployed: %v)", which, have)
	}
	app := s.AppStacks[i]
	if AppStackDeleted(stateDir, app.Name) {
		return nil, fmt.Errorf("app stack %s is not deployed on the running platform: sundial app-stack delete deleted it (restart sundial up to deploy it again)", which)
	}
	cfg, err := s.Config(ctx)
	if err != nil {
		return nil, err
	}
	var done []CustomResource
	for j := len(app.CustomResources) - 1; j >= 0; j-- {
		cr := app.CustomResources[j]
		ans, err := SendCustomResource(ctx, cfg, cfn.RequestDelete, app.StackID, cr, nil)
		if err != nil {
			return done, fmt.Errorf("%s (%s): %w", cr.LogicalID, cr.Type, err)
		}
		cr.Data = ans.Data
		done = append(done, cr)
	}
	if err := os.WriteFile(appStackDeletedFile(stateDir, app.Name), []byte(app.StackID+"\n"), 0o600); err != nil {
		return done, fmt.Errorf("deleted, but not marked deleted for the running platform: %w", err)
	}
	return done, nil
}
