package metrics_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go/middleware"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/metrics"
)

// fakeAWS answers the JSON protocols of DynamoDB and SQS. answer decides each response from
// the X-Amz-Target header ("DynamoDB_20120810.UpdateItem", "AmazonSQS.SendMessageBatch") and
// how many requests for that target came before; nil answers 200 with an empty object.
type fakeAWS struct {
	answer func(target string, n int) (status int, body string)

	mu   sync.Mutex
	seen map[string]int
}

func (f *fakeAWS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	target := r.Header.Get("X-Amz-Target")
	f.mu.Lock()
	n := f.seen[target]
	f.seen[target]++
	f.mu.Unlock()
	status, body := http.StatusOK, "{}"
	if f.answer != nil {
		status, body = f.answer(target, n)
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

// setup returns a counter attached to a config that talks to a fake AWS endpoint, with
// immediate retries so that retry tests take no time.
func setup(t *testing.T, answer func(target string, n int) (int, string)) (*metrics.Counter, aws.Config) {
	t.Helper()
	srv := httptest.NewServer(&fakeAWS{answer: answer, seen: map[string]int{}})
	t.Cleanup(srv.Close)
	cfg := aws.Config{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(srv.URL),
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "test", SecretAccessKey: "test"}, nil
		}),
		Retryer: func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) {
				o.MaxAttempts = 3
				o.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil })
				o.RateLimiter = noRateLimit{}
			})
		},
	}
	c := metrics.New()
	c.Attach(&cfg)
	return c, cfg
}

type noRateLimit struct{}

func (noRateLimit) GetToken(context.Context, uint) (func() error, error) {
	return func() error { return nil }, nil
}
func (noRateLimit) AddTokens(uint) error { return nil }

var key = map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "I#a"}}

func TestCounter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("CountsCallsByServiceAndOperation", func(t *testing.T) {
		t.Parallel()
		c, cfg := setup(t, nil)
		ddb := dynamodb.NewFromConfig(cfg)
		q := sqs.NewFromConfig(cfg)
		for range 3 {
			_, err := ddb.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String("t"), Key: key})
			require.NoError(t, err)
		}
		_, err := ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("t"), Item: key})
		require.NoError(t, err)
		_, err = q.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String("http://q/1"),
			Entries: []sqstypes.SendMessageBatchRequestEntry{{Id: aws.String("0"), MessageBody: aws.String(strings.Repeat("x", 100))}}})
		require.NoError(t, err)

		s := c.Snapshot()
		require.EqualValues(t, 3, s.Calls("DynamoDB", "UpdateItem"))
		require.EqualValues(t, 1, s.Calls("DynamoDB", "PutItem"))
		require.EqualValues(t, 1, s.Calls("SQS", "SendMessageBatch"))
		require.EqualValues(t, 4, s.Total("DynamoDB"))
		require.EqualValues(t, 5, s.Total(""))
		require.Equal(t, []metrics.Op{{"DynamoDB", "PutItem"}, {"DynamoDB", "UpdateItem"}, {"SQS", "SendMessageBatch"}}, s.Ops())
		send := s[metrics.Op{Service: "SQS", Operation: "SendMessageBatch"}]
		require.Greater(t, send.Bytes, int64(100), "the request body holds the message")
		require.Equal(t, send.Bytes, send.MaxBytes)
		require.Positive(t, send.Time)
		require.Zero(t, send.Errors)
	})

	t.Run("CountsEveryAttemptOfARetriedCall", func(t *testing.T) {
		t.Parallel()
		// Two throttled answers, then success: AWS receives (and bills) three requests.
		c, cfg := setup(t, func(target string, n int) (int, string) {
			if n < 2 {
				return http.StatusBadRequest, `{"__type":"com.amazonaws.dynamodb.v20120810#ThrottlingException","message":"slow down"}`
			}
			return http.StatusOK, "{}"
		})
		_, err := dynamodb.NewFromConfig(cfg).GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("t"), Key: key})
		require.NoError(t, err)
		st := c.Snapshot()[metrics.Op{Service: "DynamoDB", Operation: "GetItem"}]
		require.EqualValues(t, 3, st.Calls)
		require.EqualValues(t, 2, st.Errors)
	})

	t.Run("CountsAFailedConditionalWriteOnceAsAnError", func(t *testing.T) {
		t.Parallel()
		c, cfg := setup(t, func(string, int) (int, string) {
			return http.StatusBadRequest, `{"__type":"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException","message":"The conditional request failed"}`
		})
		_, err := dynamodb.NewFromConfig(cfg).UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String("t"), Key: key})
		var ccf *types.ConditionalCheckFailedException
		require.True(t, errors.As(err, &ccf), "got %v", err)
		st := c.Snapshot()[metrics.Op{Service: "DynamoDB", Operation: "UpdateItem"}]
		require.EqualValues(t, 1, st.Calls, "not retryable: one request")
		require.EqualValues(t, 1, st.Errors)
	})

	t.Run("SubtractsSnapshots", func(t *testing.T) {
		t.Parallel()
		c, cfg := setup(t, nil)
		ddb := dynamodb.NewFromConfig(cfg)
		_, err := ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("t"), Item: key})
		require.NoError(t, err)
		before := c.Snapshot()
		for range 2 {
			_, err := ddb.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String("t"), Key: key})
			require.NoError(t, err)
		}
		d := c.Snapshot().Sub(before)
		require.EqualValues(t, 2, d.Calls("DynamoDB", "UpdateItem"))
		require.Equal(t, []metrics.Op{{"DynamoDB", "UpdateItem"}}, d.Ops(), "operations without new calls are left out")
		require.EqualValues(t, 1, before.Calls("DynamoDB", "PutItem"), "a snapshot is a copy")
	})

	t.Run("ResetForgetsEverything", func(t *testing.T) {
		t.Parallel()
		c, cfg := setup(t, nil)
		_, err := dynamodb.NewFromConfig(cfg).PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("t"), Item: key})
		require.NoError(t, err)
		c.Reset()
		require.Empty(t, c.Snapshot())
	})

	t.Run("IsSafeForConcurrentClients", func(t *testing.T) {
		t.Parallel()
		c, cfg := setup(t, nil)
		ddb := dynamodb.NewFromConfig(cfg)
		var wg sync.WaitGroup
		var failed atomic.Int64
		for range 8 {
			wg.Go(func() {
				for range 25 {
					if _, err := ddb.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("t"), Key: key}); err != nil {
						failed.Add(1)
					}
				}
			})
		}
		wg.Wait()
		require.Zero(t, failed.Load())
		require.EqualValues(t, 200, c.Snapshot().Calls("DynamoDB", "GetItem"))
	})
}

func TestAPIOptionWithoutARetryStep(t *testing.T) {
	t.Parallel()
	// A stack without the SDK's retry middleware still gets the counter, at the end of finalize.
	stack := middleware.NewStack("test", func() interface{} { return nil })
	require.NoError(t, metrics.New().APIOption(stack))
	_, ok := stack.Finalize.Get("SundialMetricsCountRequests")
	require.True(t, ok)
}

func TestRecord(t *testing.T) {
	t.Parallel()
	c := metrics.New()
	op := metrics.Op{Service: "Lambda", Operation: "Invoke"}
	c.Record(op, metrics.Stat{Calls: 1, Bytes: 10, MaxBytes: 10})
	c.Record(op, metrics.Stat{Calls: 1, Errors: 1, Bytes: 30, MaxBytes: 30})
	require.Equal(t, metrics.Stat{Calls: 2, Errors: 1, Bytes: 40, MaxBytes: 30}, c.Snapshot()[op])
	require.Equal(t, "Lambda.Invoke", op.String())
}
