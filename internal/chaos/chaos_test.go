package chaos_test

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"hash/crc32"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/chaos"
)

func TestParse(t *testing.T) {
	t.Parallel()
	c, err := chaos.Parse("ddb_throttle=0.05, ddb_5xx=0.02,ddb_5xx_after=0.01,sqs_5xx=0.02,sqs_dup=0.1,clock_skew=2s,seed=42")
	require.NoError(t, err)
	require.Equal(t, chaos.Config{
		DynamoDB: chaos.Faults{Throttle: 0.05, Server: 0.02, ServerAfter: 0.01},
		SQS:      chaos.Faults{Server: 0.02}, Dup: 0.1, ClockSkew: 2 * time.Second, Seed: 42,
	}, c)
	again, err := chaos.Parse(c.String())
	require.NoError(t, err)
	require.Equal(t, c, again, "String is what Parse reads")
	require.True(t, c.Enabled())
	require.False(t, chaos.Config{Seed: 1}.Enabled())

	for spec, msg := range map[string]string{
		"ddb_throttle=2":                  "probability in 0..1",
		"ddb_throttle":                    "want key=value",
		"sqs_dup=x":                       "probability",
		"clock_skew=-1s":                  "duration in 0..1h",
		"seed=-3":                         "unsigned integer",
		"disk_full=0.1":                   `unknown setting "disk_full"`,
		"sqs_throttle=0.6,sqs_5xx=0.6":    "add up to more than 1",
		"ddb_5xx=0.5,ddb_5xx_after=0.6,x": "want key=value",
	} {
		_, err := chaos.Parse(spec)
		require.ErrorContains(t, err, msg, spec)
		require.ErrorContains(t, err, chaos.EnvVar, spec)
	}
}

func TestSkew(t *testing.T) {
	t.Parallel()
	seen := map[time.Duration]bool{}
	for i := range 200 {
		node := "processor/" + strconv.Itoa(i)
		d := chaos.Skew(7, node, 2*time.Second)
		require.LessOrEqual(t, d.Abs(), 2*time.Second)
		require.Zero(t, d%time.Millisecond, "whole milliseconds: the engine's instants are")
		require.Equal(t, d, chaos.Skew(7, node, 2*time.Second), "a checker can compute it again")
		seen[d] = true
	}
	require.Greater(t, len(seen), 150, "processes get different offsets")
	require.Zero(t, chaos.Skew(7, "x", 0))
	base := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	c := chaos.Clock{Base: fixed(base), Offset: -1500 * time.Millisecond}
	require.Equal(t, base.Add(-1500*time.Millisecond), c.Now())
}

type fixed time.Time

func (f fixed) Now() time.Time { return time.Time(f) }

// fakeAWS answers DynamoDB GetItem with an empty item and SQS SendMessageBatch with success
// for every entry, recording what it received.
type fakeAWS struct {
	mu      sync.Mutex
	targets []string
	entries []string // SendMessageBatch entry bodies
}

func (f *fakeAWS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	target := r.Header.Get("X-Amz-Target")
	f.mu.Lock()
	f.targets = append(f.targets, target)
	f.mu.Unlock()
	out := []byte("{}")
	if strings.HasSuffix(target, "SendMessageBatch") {
		var in struct {
			Entries []struct{ Id, MessageBody string }
		}
		_ = json.Unmarshal(body, &in)
		var ok []map[string]string
		for _, e := range in.Entries {
			sum := md5.Sum([]byte(e.MessageBody))
			ok = append(ok, map[string]string{"Id": e.Id, "MessageId": "m-" + e.Id, "MD5OfMessageBody": hex.EncodeToString(sum[:])})
			f.mu.Lock()
			f.entries = append(f.entries, e.MessageBody)
			f.mu.Unlock()
		}
		out, _ = json.Marshal(map[string]any{"Successful": ok, "Failed": []any{}})
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.Header().Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE(out)), 10))
	_, _ = w.Write(out)
}

func (f *fakeAWS) count(suffix string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, t := range f.targets {
		if strings.HasSuffix(t, suffix) {
			n++
		}
	}
	return n
}

// clients returns SDK clients on a fake service, retrying up to 3 attempts without delay.
func clients(t *testing.T) (*fakeAWS, *dynamodb.Client, *sqs.Client) {
	t.Helper()
	fake := &fakeAWS{}
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	cfg := aws.Config{
		Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "test", SecretAccessKey: "test"}, nil
		}),
		Retryer: func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) {
				o.MaxAttempts = 3
				o.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil })
				o.RateLimiter = ratelimit.None
			})
		},
	}
	return fake, dynamodb.NewFromConfig(cfg), sqs.NewFromConfig(cfg)
}

func getItem(ctx context.Context, d *chaos.DynamoDB) error {
	_, err := d.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("t"), Key: map[string]ddbtypes.AttributeValue{"pk": &ddbtypes.AttributeValueMemberS{Value: "k"}}})
	return err
}

func TestInjectedFaultsAreRetriedByTheSDK(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)

	t.Run("ThrottlingNeverReachesTheService", func(t *testing.T) {
		fake, ddb, _ := clients(t)
		in := chaos.NewInjector(chaos.Config{DynamoDB: chaos.Faults{Throttle: 1}}, "node", quiet)
		err := getItem(ctx, chaos.WrapDynamoDB(ddb, in))
		var pte *ddbtypes.ProvisionedThroughputExceededException
		require.True(t, errors.As(err, &pte), "%v", err)
		require.True(t, retry.IsErrorThrottles(retry.DefaultThrottles).IsErrorThrottle(err).Bool(), "the SDK sees throttling")
		require.Equal(t, 0, fake.count("GetItem"))
		require.Equal(t, map[string]int64{"DynamoDB GetItem throttle": 3}, in.Counts(), "every attempt drew a fault")
	})

	t.Run("A5xxAfterTheCallLeavesItApplied", func(t *testing.T) {
		fake, ddb, _ := clients(t)
		in := chaos.NewInjector(chaos.Config{DynamoDB: chaos.Faults{ServerAfter: 1}}, "node", quiet)
		err := getItem(ctx, chaos.WrapDynamoDB(ddb, in))
		var ise *ddbtypes.InternalServerError
		require.True(t, errors.As(err, &ise), "%v", err)
		var status interface{ HTTPStatusCode() int }
		require.True(t, errors.As(err, &status))
		require.Equal(t, 500, status.HTTPStatusCode())
		require.Equal(t, 3, fake.count("GetItem"), "each attempt reached the service, then its reply was lost")
	})

	t.Run("SomeFaultsAreHiddenByRetries", func(t *testing.T) {
		fake, ddb, sq := clients(t)
		in := chaos.NewInjector(chaos.Config{DynamoDB: chaos.Faults{Throttle: 0.2, Server: 0.2}, SQS: chaos.Faults{Server: 0.3}, Seed: 3}, "node", quiet)
		d, s := chaos.WrapDynamoDB(ddb, in), chaos.WrapSQS(sq, in)
		failed := 0
		for range 100 {
			if err := getItem(ctx, d); err != nil {
				failed++
			}
		}
		require.Less(t, failed, 20, "with p=0.4 per attempt and 3 attempts, about 6 in 100 calls fail")
		require.Equal(t, 100-failed, fake.count("GetItem"), "a fault injected before the call never reaches the service")
		_, err := s.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String("q"), ReceiptHandle: aws.String("r")})
		if err != nil {
			var api smithy.APIError
			require.True(t, errors.As(err, &api))
			require.Equal(t, "InternalFailure", api.ErrorCode())
		}
		var injected int64
		for k, n := range in.Counts() {
			require.Contains(t, []string{"DynamoDB GetItem throttle", "DynamoDB GetItem 5xx", "SQS ChangeMessageVisibility 5xx"}, k)
			injected += n
		}
		require.Greater(t, injected, int64(20))
	})

	t.Run("SQSThrottling", func(t *testing.T) {
		_, _, sq := clients(t)
		in := chaos.NewInjector(chaos.Config{SQS: chaos.Faults{Throttle: 1}}, "node", quiet)
		_, err := chaos.WrapSQS(sq, in).ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String("q")})
		var rt *sqstypes.RequestThrottled
		require.True(t, errors.As(err, &rt), "%v", err)
	})
}

func TestDuplicatedSends(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fake, _, sq := clients(t)
	in := chaos.NewInjector(chaos.Config{Dup: 1}, "node", slog.New(slog.DiscardHandler))
	entries := []sqstypes.SendMessageBatchRequestEntry{
		{Id: aws.String("0"), MessageBody: aws.String("a")}, {Id: aws.String("1"), MessageBody: aws.String("b")},
	}
	out, err := chaos.WrapSQS(sq, in).SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String("q"), Entries: entries})
	require.NoError(t, err)
	require.Len(t, out.Successful, 2, "the caller sees its own batch's answer")
	require.Equal(t, 2, fake.count("SendMessageBatch"), "duplicates go in a batch of their own")
	require.ElementsMatch(t, []string{"a", "b", "a", "b"}, fake.entries)
	require.Equal(t, "0", aws.ToString(entries[0].Id), "the caller's entries are not changed")
	require.Equal(t, map[string]int64{"SQS SendMessageBatch dup": 2}, in.Counts())
}

func TestSeededRunsRepeat(t *testing.T) {
	t.Parallel()
	draw := func(node string) []string {
		_, ddb, _ := clients(t)
		in := chaos.NewInjector(chaos.Config{DynamoDB: chaos.Faults{Throttle: 0.3, Server: 0.3}, Seed: 99}, node, slog.New(slog.DiscardHandler))
		d := chaos.WrapDynamoDB(ddb, in)
		var out []string
		for range 30 {
			out = append(out, strconv.FormatBool(getItem(context.Background(), d) == nil))
		}
		return out
	}
	require.Equal(t, draw("a"), draw("a"))
	require.NotEqual(t, draw("a"), draw("b"), "each process draws its own stream")
}
