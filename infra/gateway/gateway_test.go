package gateway

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/iam"
)

const (
	account = "000000000000"
	region  = "us-east-1"
)

// engine stands for DynamoDB Local, fauxqs and the Invoke API: it answers {} and records
// what reached it.
type engine struct {
	mu   sync.Mutex
	seen []string // method path target body
}

func (e *engine) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	e.mu.Lock()
	e.seen = append(e.seen, r.Method+" "+r.URL.RequestURI()+" "+r.Header.Get("X-Amz-Target")+" "+string(b))
	e.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	_, _ = w.Write([]byte(`{}`))
}

func (e *engine) requests() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.seen...)
}

type fixture struct {
	g      *Gateway
	url    string
	engine *engine
	role   aws.Credentials // may use the log table, send to P1, invoke sundial-action-*
	admin  aws.Credentials
}

func start(t *testing.T, maxInFlight int64) *fixture {
	t.Helper()
	eng := &engine{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: eng}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	upstream := "http://" + ln.Addr().String()

	auth := iam.NewAuthorizer(iam.Env{Region: region, Account: account})
	arn := func(s string) string { return "arn:aws:" + s }
	auth.AddRole("ROLEKEY", "role-secret", &iam.Role{Name: "LogWriterRole", Policies: []iam.Policy{{Name: "P", Statements: []iam.Statement{
		{Effect: "Allow", Actions: []string{"dynamodb:GetItem", "dynamodb:PutItem"}, Resources: []string{arn("dynamodb:us-east-1:000000000000:table/sundial-LogTable")}},
		{Effect: "Allow", Actions: []string{"sqs:SendMessage"}, Resources: []string{arn("sqs:us-east-1:000000000000:sundial-P1")}},
		{Effect: "Allow", Actions: []string{"lambda:InvokeFunction"}, Resources: []string{arn("lambda:us-east-1:000000000000:function:sundial-action-*")}},
	}}}})
	auth.AddAdmin("ADMINKEY", "admin-secret", "admin")
	g := &Gateway{DynamoDB: upstream, SQS: upstream, Auth: auth, MaxInFlight: maxInFlight}
	url, err := g.Start("127.0.0.1:0")
	require.NoError(t, err)
	g.SetLambda(upstream)
	t.Cleanup(func() { _ = g.Close() })
	return &fixture{g: g, url: url, engine: eng,
		role:  aws.Credentials{AccessKeyID: "ROLEKEY", SecretAccessKey: "role-secret"},
		admin: aws.Credentials{AccessKeyID: "ADMINKEY", SecretAccessKey: "admin-secret"}}
}

func (f *fixture) config(c aws.Credentials) aws.Config {
	return aws.Config{Region: region, BaseEndpoint: aws.String(f.url), Credentials: credentials.StaticCredentialsProvider{Value: c},
		RetryMaxAttempts: 1}
}

func (f *fixture) ddb(c aws.Credentials) *dynamodb.Client { return dynamodb.NewFromConfig(f.config(c)) }

func requireCode(t *testing.T, err error, code string) {
	t.Helper()
	require.Error(t, err)
	var apiErr smithy.APIError
	require.True(t, errors.As(err, &apiErr), "the SDK reads the answer as an AWS error: %v", err)
	require.Equal(t, code, apiErr.ErrorCode(), err.Error())
}

// signed builds a request signed with c as the SDK signs (service, body, time).
func signed(t *testing.T, c aws.Credentials, method, url, service string, body []byte, hdr map[string]string, at time.Time) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	require.NoError(t, err)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	sum := sha256.Sum256(body)
	require.NoError(t, v4.NewSigner().SignHTTP(context.Background(), c, req, hex.EncodeToString(sum[:]), service, region, at))
	return req
}

func do(t *testing.T, req *http.Request) (int, http.Header, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// A key ID is no secret: without verifying signatures, any process knowing a role's key ID —
// or making one up, taken for the operator and allowed everything — would be that identity (a
// made-up key could run CreateTable and DeleteTable).
func TestSignaturesVerified(t *testing.T) {
	t.Parallel()
	f := start(t, 0)
	ctx := context.Background()
	getLog := &dynamodb.GetItemInput{TableName: aws.String("sundial-LogTable"), Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "x"}}}

	_, err := f.ddb(aws.Credentials{AccessKeyID: "MADEUP", SecretAccessKey: "x"}).DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String("sundial-TimersTable")})
	requireCode(t, err, "UnrecognizedClientException")
	_, err = f.ddb(aws.Credentials{AccessKeyID: "ROLEKEY", SecretAccessKey: "guessed"}).GetItem(ctx, getLog)
	requireCode(t, err, "InvalidSignatureException")
	_, err = f.ddb(aws.Credentials{AccessKeyID: "ADMINKEY", SecretAccessKey: "guessed"}).CreateTable(ctx, &dynamodb.CreateTableInput{TableName: aws.String("x")})
	requireCode(t, err, "InvalidSignatureException")
	_, err = dynamodb.NewFromConfig(aws.Config{Region: region, BaseEndpoint: aws.String(f.url), RetryMaxAttempts: 1}).ListTables(ctx, &dynamodb.ListTablesInput{})
	requireCode(t, err, "MissingAuthenticationTokenException")
	_, err = sqs.NewFromConfig(f.config(aws.Credentials{AccessKeyID: "MADEUP", SecretAccessKey: "x"})).SendMessage(ctx,
		&sqs.SendMessageInput{QueueUrl: aws.String("http://h/000000000000/sundial-P1"), MessageBody: aws.String("m")})
	requireCode(t, err, "InvalidClientTokenId") // SQS's JSON protocol names the Query code (x-amzn-query-error)
	_, err = sqs.NewFromConfig(f.config(aws.Credentials{AccessKeyID: "ROLEKEY", SecretAccessKey: "guessed"})).SendMessage(ctx,
		&sqs.SendMessageInput{QueueUrl: aws.String("http://h/000000000000/sundial-P1"), MessageBody: aws.String("m")})
	requireCode(t, err, "SignatureDoesNotMatch")
	_, err = lambda.NewFromConfig(f.config(aws.Credentials{AccessKeyID: "MADEUP", SecretAccessKey: "x"})).Invoke(ctx,
		&lambda.InvokeInput{FunctionName: aws.String("sundial-action-x"), Payload: []byte(`{}`)})
	requireCode(t, err, "UnrecognizedClientException")
	require.Empty(t, f.engine.requests(), "nothing reached an engine")

	// The right secrets pass, through every SDK client.
	_, err = f.ddb(f.role).GetItem(ctx, getLog)
	require.NoError(t, err)
	_, err = f.ddb(f.admin).CreateTable(ctx, &dynamodb.CreateTableInput{TableName: aws.String("x")})
	require.NoError(t, err)
	_, err = sqs.NewFromConfig(f.config(f.role)).SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String("http://h/000000000000/sundial-P1"), MessageBody: aws.String("m")})
	require.NoError(t, err)
	_, err = lambda.NewFromConfig(f.config(f.role)).Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String("sundial-action-x"), Payload: []byte(`{}`)})
	require.NoError(t, err)
	_, err = lambda.NewFromConfig(f.config(f.role)).Invoke(ctx, &lambda.InvokeInput{
		FunctionName: aws.String("arn:aws:lambda:us-east-1:000000000000:function:sundial-action-x"), Payload: []byte(`{}`)})
	require.NoError(t, err, "a function's ARN in the path (escaped) verifies too")
	require.Len(t, f.engine.requests(), 5)

	// A signed request whose body was changed, or too old to be fresh, is refused.
	body := []byte(`{"TableName":"sundial-LogTable","Key":{"pk":{"S":"x"}}}`)
	hdr := map[string]string{"X-Amz-Target": "DynamoDB_20120810.GetItem", "Content-Type": "application/x-amz-json-1.0"}
	req := signed(t, f.role, http.MethodPost, f.url, "dynamodb", body, hdr, time.Now())
	req.Body = io.NopCloser(strings.NewReader(strings.Replace(string(body), `"x"`, `"y"`, 1)))
	code, h, text := do(t, req)
	require.Equal(t, http.StatusBadRequest, code)
	require.Equal(t, "com.amazon.coral.service#InvalidSignatureException", h.Get("X-Amzn-ErrorType"), text)
	req = signed(t, f.role, http.MethodPost, f.url, "dynamodb", body, hdr, time.Now().Add(-20*time.Minute))
	_, _, text = do(t, req)
	require.Contains(t, text, "Signature expired")
	req = signed(t, f.role, http.MethodPost, f.url, "sqs", body, hdr, time.Now())
	_, _, text = do(t, req)
	require.Contains(t, text, "scoped to correct service", "a signature for another service")
	require.Len(t, f.engine.requests(), 5, "none of them reached the engine")
}

// The check must read a request as the engine does: reading JSON as encoding/json does (keys
// ignoring case, the last duplicate wins) while the engines read exact keys, or authorizing a
// Lambda path with a dot segment for its first function and forwarding it cleaned, would let
// a role allowed only the log table, queue P1 and sundial-action-* reach the timers table,
// the DLQ and another function. Signed correctly, each is refused and reaches no engine.
func TestRequestsReadAsTheEngineReadsThem(t *testing.T) {
	t.Parallel()
	f := start(t, 0)
	for _, c := range []struct{ target, service, body string }{
		{"DynamoDB_20120810.GetItem", "dynamodb", `{"TableName":"sundial-LogTable","Key":{"pk":{"S":"x"}},"tablename":"sundial-TimersTable"}`},
		{"DynamoDB_20120810.GetItem", "dynamodb", `{"TableName":"sundial-TimersTable","Key":{"pk":{"S":"x"}},"TableName":"sundial-LogTable"}`},
		{"AmazonSQS.SendMessage", "sqs", `{"QueueUrl":"http://h/000000000000/sundial-P1","MessageBody":"m","queueurl":"http://h/000000000000/sundial-DLQ"}`},
	} {
		req := signed(t, f.role, http.MethodPost, f.url, c.service, []byte(c.body),
			map[string]string{"X-Amz-Target": c.target, "Content-Type": "application/x-amz-json-1.0"}, time.Now())
		code, _, text := do(t, req)
		require.Equal(t, http.StatusBadRequest, code, text)
		require.Contains(t, text, "ValidationException")
	}
	twoTargets := signed(t, f.role, http.MethodPost, f.url, "dynamodb", []byte(`{"TableName":"sundial-LogTable","Key":{"pk":{"S":"x"}}}`),
		map[string]string{"X-Amz-Target": "DynamoDB_20120810.GetItem"}, time.Now())
	twoTargets.Header.Add("X-Amz-Target", "DynamoDB_20120810.DeleteTable")
	code, _, text := do(t, twoTargets)
	require.Equal(t, http.StatusBadRequest, code, text)
	require.Contains(t, text, "more than one X-Amz-Target")
	req := signed(t, f.role, http.MethodPost, f.url+"/2015-03-31/functions/sundial-action-x/../sundial-example-orderpush/invocations", "lambda", []byte(`{}`), nil, time.Now())
	req.URL.Opaque = "//" + req.URL.Host + "/2015-03-31/functions/sundial-action-x/../sundial-example-orderpush/invocations" // as sent, not cleaned
	code, _, text = do(t, req)
	require.Equal(t, http.StatusBadRequest, code, text)
	require.Contains(t, text, "is not /2015-03-31/functions/FUNCTION[/invocations]", "refused for its path, not its signature")
	require.Empty(t, f.engine.requests(), "nothing reached an engine")
}

// A web page must not drive the endpoint: a Lambda invoke is a CORS simple request (POST,
// text/plain), and without a Host allowlist DNS rebinding reaches it.
func TestWebPagesAndOtherHostsRefused(t *testing.T) {
	t.Parallel()
	f := start(t, 0)
	invoke := f.url + "/2015-03-31/functions/sundial-action-x/invocations"
	for name, hdr := range map[string]map[string]string{
		"Origin":                   {"Origin": "http://evil.example", "Content-Type": "text/plain"},
		"Sec-Fetch-Site":           {"Sec-Fetch-Site": "cross-site"},
		"Sec-Fetch-Site same-site": {"Sec-Fetch-Site": "same-site"},
	} {
		// Even signed with the role's own key: a page must not be able to use it.
		code, h, text := do(t, signed(t, f.role, http.MethodPost, invoke, "lambda", []byte(`{}`), hdr, time.Now()))
		require.Equal(t, http.StatusForbidden, code, name)
		require.Equal(t, "AccessDeniedException", h.Get("X-Amzn-ErrorType"), text)
	}
	req := signed(t, f.role, http.MethodPost, invoke, "lambda", []byte(`{}`), nil, time.Now())
	_, port, _ := net.SplitHostPort(req.URL.Host)
	req.Host = "evil.example:" + port // a DNS-rebound name resolving to 127.0.0.1
	code, _, text := do(t, req)
	require.Equal(t, http.StatusMisdirectedRequest, code, text)
	require.Empty(t, f.engine.requests())

	for _, host := range []string{"127.0.0.1:" + port, "localhost:" + port, "LOCALHOST:" + port} {
		req, err := http.NewRequest(http.MethodPost, invoke, strings.NewReader(`{}`))
		require.NoError(t, err)
		req.Host = host
		sum := sha256.Sum256([]byte(`{}`))
		require.NoError(t, v4.NewSigner().SignHTTP(context.Background(), f.role, req, hex.EncodeToString(sum[:]), "lambda", region, time.Now()))
		code, _, text := do(t, req)
		require.Equal(t, http.StatusOK, code, "%s: %s", host, text)
	}
}

// Memory must stay bounded: reading up to 16 MB of every request before any check, with no
// bound on requests at once, took `up` from 35 MB to 1.4 GB with 40 parallel requests; an
// oversized body is answered as the service answers it (the SDK reads it), not in plain text.
func TestBodiesBounded(t *testing.T) {
	t.Parallel()
	f := start(t, 3<<20)
	ctx := context.Background()

	// An unknown key is answered from the headers: the 16 MB it announces are never read.
	pr, pw := io.Pipe()
	defer pw.Close()
	req, err := http.NewRequest(http.MethodPost, f.url, pr)
	require.NoError(t, err)
	req.ContentLength = 16 << 20
	req.Header.Set("X-Amz-Target", "DynamoDB_20120810.PutItem")
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=MADEUP/20261125/us-east-1/dynamodb/aws4_request, SignedHeaders=host;x-amz-date, Signature=00")
	answered := make(chan string, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			answered <- err.Error()
			return
		}
		defer resp.Body.Close()
		answered <- resp.Header.Get("X-Amzn-ErrorType")
	}()
	select {
	case got := <-answered:
		require.Equal(t, "com.amazon.coral.service#UnrecognizedClientException", got)
	case <-time.After(10 * time.Second):
		t.Fatal("the endpoint waited for the body of a request from an unknown key")
	}

	// A body over the service's limit is refused as the service refuses it: the SDK reads it.
	big := strings.Repeat("x", dynamoMaxRequest)
	_, err = f.ddb(f.admin).PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("sundial-LogTable"),
		Item: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: big}}})
	requireCode(t, err, "ValidationException")
	_, err = lambda.NewFromConfig(f.config(f.role)).Invoke(ctx, &lambda.InvokeInput{FunctionName: aws.String("sundial-action-x"),
		Payload: []byte(`"` + strings.Repeat("x", lambdaMaxSync) + `"`)})
	requireCode(t, err, "RequestTooLargeException")

	// Many large requests at once hold no more than the budget (3 MiB here) between them.
	var wg sync.WaitGroup
	errs := make(chan error, 12)
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := f.ddb(f.admin).PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("sundial-LogTable"),
				Item: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: strconv.Itoa(i) + strings.Repeat("x", 1<<20)}}})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	f.g.budget.mu.Lock()
	peak := f.g.budget.peak
	f.g.budget.mu.Unlock()
	require.LessOrEqual(t, peak, int64(3<<20), "bytes held at once")
	require.Greater(t, peak, int64(1<<20), "the requests were held")
}

// /_sundial/iam (roles, grants, denials) maps what each role may do: only the administrator reads it.
func TestIAMReportNeedsTheAdministrator(t *testing.T) {
	t.Parallel()
	f := start(t, 0)
	get := func(c *aws.Credentials) (int, string) {
		req, err := http.NewRequest(http.MethodGet, f.url+IAMReportPath, nil)
		require.NoError(t, err)
		if c != nil {
			req = signed(t, *c, http.MethodGet, f.url+IAMReportPath, ReportService, nil, nil, time.Now())
		}
		code, _, text := do(t, req)
		return code, text
	}
	code, text := get(nil)
	require.NotEqual(t, http.StatusOK, code, text)
	code, text = get(&aws.Credentials{AccessKeyID: "MADEUP", SecretAccessKey: "x"})
	require.NotEqual(t, http.StatusOK, code, text)
	code, text = get(&f.role)
	require.Equal(t, http.StatusForbidden, code, text)
	code, text = get(&f.admin)
	require.Equal(t, http.StatusOK, code, text)
	require.Contains(t, text, "LogWriterRole")
}

// The endpoint answers as AWS does, or what passes locally fails deployed: a signature for
// another region (even `xx-nowhere-9`) or a garbage X-Amz-Security-Token is refused. AWS refuses
// a credential scoped to another region (InvalidSignatureException; SQS's Query code
// SignatureDoesNotMatch) and a token it did not issue (UnrecognizedClientException;
// InvalidClientTokenId): the platform issues none.
func TestSignatureScopeAndSessionTokens(t *testing.T) {
	t.Parallel()
	f := start(t, 0)
	ctx := context.Background()
	getLog := &dynamodb.GetItemInput{TableName: aws.String("sundial-LogTable"), Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "x"}}}
	send := &sqs.SendMessageInput{QueueUrl: aws.String("http://h/000000000000/sundial-P1"), MessageBody: aws.String("m")}
	invoke := &lambda.InvokeInput{FunctionName: aws.String("sundial-action-x"), Payload: []byte(`{}`)}
	inRegion := func(r string) aws.Config {
		c := f.config(f.role)
		c.Region = r
		return c
	}
	withToken := f.config(aws.Credentials{AccessKeyID: f.role.AccessKeyID, SecretAccessKey: f.role.SecretAccessKey, SessionToken: "garbage"})

	_, err := dynamodb.NewFromConfig(inRegion("xx-nowhere-9")).GetItem(ctx, getLog)
	requireCode(t, err, "InvalidSignatureException")
	require.Contains(t, err.Error(), "Credential should be scoped to a valid region, not 'xx-nowhere-9'.")
	_, err = sqs.NewFromConfig(inRegion("us-west-2")).SendMessage(ctx, send)
	requireCode(t, err, "SignatureDoesNotMatch")
	_, err = lambda.NewFromConfig(inRegion("eu-west-1")).Invoke(ctx, invoke)
	requireCode(t, err, "InvalidSignatureException")

	_, err = dynamodb.NewFromConfig(withToken).GetItem(ctx, getLog)
	requireCode(t, err, "UnrecognizedClientException")
	require.Contains(t, err.Error(), "The security token included in the request is invalid.")
	_, err = sqs.NewFromConfig(withToken).SendMessage(ctx, send)
	requireCode(t, err, "InvalidClientTokenId")
	_, err = lambda.NewFromConfig(withToken).Invoke(ctx, invoke)
	requireCode(t, err, "UnrecognizedClientException")
	// The administrator's key with a token is refused too, and a token added after signing
	// (not covered by the signature) as well.
	_, err = dynamodb.NewFromConfig(f.config(aws.Credentials{AccessKeyID: f.admin.AccessKeyID, SecretAccessKey: f.admin.SecretAccessKey, SessionToken: "t"})).
		ListTables(ctx, &dynamodb.ListTablesInput{})
	requireCode(t, err, "UnrecognizedClientException")
	body := []byte(`{"TableName":"sundial-LogTable","Key":{"pk":{"S":"x"}}}`)
	req := signed(t, f.role, http.MethodPost, f.url, "dynamodb", body,
		map[string]string{"X-Amz-Target": "DynamoDB_20120810.GetItem", "Content-Type": "application/x-amz-json-1.0"}, time.Now())
	req.Header.Set("X-Amz-Security-Token", "unsigned")
	code, h, text := do(t, req)
	require.Equal(t, http.StatusBadRequest, code, text)
	require.Equal(t, "com.amazon.coral.service#UnrecognizedClientException", h.Get("X-Amzn-ErrorType"), text)
	require.Empty(t, f.engine.requests(), "nothing reached an engine")

	// Requests in the platform's region without a token pass, through every client.
	_, err = f.ddb(f.role).GetItem(ctx, getLog)
	require.NoError(t, err)
	_, err = sqs.NewFromConfig(f.config(f.role)).SendMessage(ctx, send)
	require.NoError(t, err)
	_, err = lambda.NewFromConfig(f.config(f.role)).Invoke(ctx, invoke)
	require.NoError(t, err)
	_, err = f.ddb(f.admin).ListTables(ctx, &dynamodb.ListTablesInput{})
	require.NoError(t, err)
	require.Len(t, f.engine.requests(), 4)
}
