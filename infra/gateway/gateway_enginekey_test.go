package gateway

import (
	"context"
	"net"
	"net/http"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/emulator"
	"github.com/sundialhq/sundial/infra/iam"
)

// The engines accept any credentials, so they answer only requests that carry the run's secret; the endpoint adds
// it to every request it forwards to them, replacing whatever value a caller sent.
func TestForwardedRequestsCarryTheEngineSecret(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []string
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Get(emulator.SecretHeader))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		_, _ = w.Write([]byte(`{}`))
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	upstream := "http://" + ln.Addr().String()
	auth := iam.NewAuthorizer(iam.Env{Region: region, Account: account})
	auth.AddAdmin("ADMINKEY", "admin-secret", "admin")
	g := &Gateway{DynamoDB: upstream, SQS: upstream, Auth: auth, EngineSecret: "the-run-secret"}
	url, err := g.Start("127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = g.Close() })

	cfg := aws.Config{Region: region, BaseEndpoint: aws.String(url), RetryMaxAttempts: 1,
		Credentials: credentials.StaticCredentialsProvider{Value: aws.Credentials{AccessKeyID: "ADMINKEY", SecretAccessKey: "admin-secret"}}}
	ctx := context.Background()
	_, err = dynamodb.NewFromConfig(cfg).ListTables(ctx, &dynamodb.ListTablesInput{})
	require.NoError(t, err)
	// A caller's own value is not passed on.
	forged := cfg.Copy()
	forged.APIOptions = append(forged.APIOptions, smithyhttp.AddHeaderValue(emulator.SecretHeader, "forged"))
	_, err = sqs.NewFromConfig(forged).ListQueues(ctx, &sqs.ListQueuesInput{})
	require.NoError(t, err)
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []string{"the-run-secret", "the-run-secret"}, got)
}
