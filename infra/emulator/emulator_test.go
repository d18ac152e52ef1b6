package emulator

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/require"
)

func TestEngines(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: installs and starts the engines; -short (make test-unit) skips it")
	}
	ctx := context.Background()
	e, err := Install(ctx, nil)
	require.NoError(t, err)

	var logs syncBuffer
	secret := NewSecret()
	// A database directory an older version left open to everyone, with a file: it must be
	// made the user's only.
	dbDir := filepath.Join(t.TempDir(), "db")
	require.NoError(t, os.MkdirAll(dbDir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dbDir, "old.txt"), []byte("x"), 0o644))
	ddb, err := StartDynamoDB(ctx, e, DynamoDBOptions{Log: &logs, Secret: secret, DBPath: dbDir})
	require.NoError(t, err)
	t.Cleanup(func() { _ = ddb.Stop() })
	q, err := StartSQS(ctx, e, secret, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = q.Stop() })

	t.Run("AnswerAWSCalls", func(t *testing.T) {
		cfg, err := AWSConfig(ctx, ddb.Endpoint, "")
		require.NoError(t, err)
		WithSecret(&cfg, secret)
		_, err = dynamodb.NewFromConfig(cfg).CreateTable(ctx, &dynamodb.CreateTableInput{TableName: aws.String("tbl"),
			AttributeDefinitions: []dtypes.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: dtypes.ScalarAttributeTypeS}},
			KeySchema:            []dtypes.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: dtypes.KeyTypeHash}},
			BillingMode:          dtypes.BillingModePayPerRequest})
		require.NoError(t, err)
		require.NotEmpty(t, logs.String(), "DynamoDB Local's output should reach the log")
		cfg, err = AWSConfig(ctx, q.Endpoint, "")
		require.NoError(t, err)
		WithSecret(&cfg, secret)
		_, err = sqs.NewFromConfig(cfg).ListQueues(ctx, &sqs.ListQueuesInput{})
		require.NoError(t, err)
	})

	// DynamoDB Local and fauxqs accept any credentials, so anyone on the machine
	// could write the tables (delete an audit record) straight on their loopback ports. They
	// answer only requests that carry the run's secret, which the local endpoint adds.
	t.Run("DirectRequestsWithoutTheSecretAreRefused", func(t *testing.T) {
		for _, wrong := range []string{"", "X", secret + "x"} {
			cfg, err := AWSConfig(ctx, ddb.Endpoint, "")
			require.NoError(t, err)
			if wrong != "" {
				WithSecret(&cfg, wrong)
			}
			_, err = dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 }).
				DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String("tbl"), Key: map[string]dtypes.AttributeValue{"pk": &dtypes.AttributeValueMemberS{Value: "a"}}})
			require.ErrorContains(t, err, "StatusCode: 403", "DynamoDB Local with secret %q", wrong)
			require.ErrorContains(t, err, "answers only the local endpoint")
			cfg, err = AWSConfig(ctx, q.Endpoint, "")
			require.NoError(t, err)
			if wrong != "" {
				WithSecret(&cfg, wrong)
			}
			_, err = sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.RetryMaxAttempts = 1 }).ListQueues(ctx, &sqs.ListQueuesInput{})
			require.ErrorContains(t, err, "StatusCode: 403", "fauxqs with secret %q", wrong)
		}
		// Any path, any method: refused before the engine reads it.
		for _, ep := range []string{ddb.Endpoint + "/shell/", q.Endpoint + "/health", q.Endpoint + "/"} {
			resp, err := http.Get(ep)
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, http.StatusForbidden, resp.StatusCode, ep)
		}
	})

	t.Run("DatabaseFilesAreTheUsersOnly", func(t *testing.T) {
		fi, err := os.Stat(dbDir)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o700), fi.Mode().Perm(), "the database directory")
		entries, err := os.ReadDir(dbDir)
		require.NoError(t, err)
		require.GreaterOrEqual(t, len(entries), 2, "the database file beside old.txt")
		for _, en := range entries {
			fi, err := en.Info()
			require.NoError(t, err)
			require.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), en.Name())
		}
	})

	t.Run("NoSecretNoEngine", func(t *testing.T) {
		_, err := StartDynamoDB(ctx, e, DynamoDBOptions{})
		require.ErrorContains(t, err, "no engine secret")
		_, err = StartSQS(ctx, e, "", nil)
		require.ErrorContains(t, err, "no engine secret")
	})

	// On every interface (*:PORT), DynamoDB Local would be reachable from other machines with
	// no check at all. Both engines answer only on loopback.
	t.Run("EnginesListenOnLoopbackOnly", func(t *testing.T) {
		addrs, err := net.InterfaceAddrs()
		require.NoError(t, err)
		for name, endpoint := range map[string]string{"DynamoDB Local": ddb.Endpoint, "fauxqs": q.Endpoint} {
			u, err := url.Parse(endpoint)
			require.NoError(t, err)
			port, err := strconv.Atoi(u.Port())
			require.NoError(t, err)
			if runtime.GOOS == "linux" {
				local := listeningAddresses(t, port)
				require.NotEmpty(t, local, "%s listens on its port", name)
				for _, a := range local {
					require.NotRegexp(t, `^0+$`, a, "%s listens on every interface (%v): it must listen on 127.0.0.1 only", name, local)
				}
			}
			for _, a := range addrs {
				ip, _, _ := net.ParseCIDR(a.String())
				if ip == nil || ip.IsLoopback() || ip.To4() == nil {
					continue
				}
				c, err := net.DialTimeout("tcp", net.JoinHostPort(ip.String(), u.Port()), time.Second)
				if err == nil {
					c.Close()
					t.Fatalf("%s answers on %s: it must listen on 127.0.0.1 only", name, ip)
				}
			}
		}
	})

	t.Run("InstallIsIdempotent", func(t *testing.T) {
		again, err := Install(ctx, nil)
		require.NoError(t, err)
		require.Equal(t, e, again)
	})

	// A dead engine stops every timer: a killed engine is started again on its port (what forwards to it stays
	// right), and only once it has died.
	t.Run("RestartAfterAKillServesOnTheSamePort", func(t *testing.T) {
		require.Error(t, q.Restart(ctx), "a running engine is not started twice")
		pid := q.Pid()
		victim, err := os.FindProcess(pid)
		require.NoError(t, err)
		require.NoError(t, victim.Kill()) // SIGKILL
		select {
		case <-q.Exited():
		case <-time.After(10 * time.Second):
			t.Fatal("Exited did not report the kill")
		}
		require.Contains(t, q.Exit(), "killed")
		require.NoError(t, q.Restart(ctx))
		require.NotEqual(t, pid, q.Pid())
		require.Empty(t, q.Exit(), "the new process runs")
		cfg, err := AWSConfig(ctx, q.Endpoint, "")
		require.NoError(t, err)
		WithSecret(&cfg, secret) // the run's: the endpoint forwarding to it keeps working
		_, err = sqs.NewFromConfig(cfg).ListQueues(ctx, &sqs.ListQueuesInput{})
		require.NoError(t, err, "the restarted engine answers at the same endpoint")
		require.NoError(t, q.Stop())
		require.ErrorIs(t, q.Restart(ctx), ErrStopped)
	})

	t.Run("StopEndsTheProcessAndIsIdempotent", func(t *testing.T) {
		require.NoError(t, ddb.Stop())
		select {
		case <-ddb.Exited():
		default:
			t.Fatal("process still running after Stop")
		}
		require.NoError(t, ddb.Stop())
		require.Error(t, Reachable(ctx, ddb.Endpoint))
	})
}

func TestReachable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("RejectsNonHTTPEndpoints", func(t *testing.T) {
		t.Parallel()
		for _, ep := range []string{"", "localhost:4566", "ftp://localhost:4566", "http://"} {
			require.ErrorContains(t, Reachable(ctx, ep), "not an http(s) URL", ep)
		}
	})

	t.Run("FailsWhenNothingListens", func(t *testing.T) {
		t.Parallel()
		port, err := freePort()
		require.NoError(t, err)
		err = Reachable(ctx, "http://127.0.0.1:"+strconv.Itoa(port))
		require.ErrorContains(t, err, "nothing answers at")
	})
}

func TestAWSConfig(t *testing.T) {
	// Not parallel: it sets process environment variables.
	dir := t.TempDir()
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "credentials"))
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_REGION", "")
	t.Setenv("AWS_DEFAULT_REGION", "")
	t.Setenv("AWS_ENDPOINT_URL", "")
	ctx := context.Background()

	t.Run("EndpointGetsTestCredentialsAndDefaultRegion", func(t *testing.T) {
		cfg, err := AWSConfig(ctx, "http://127.0.0.1:4566", "")
		require.NoError(t, err)
		require.Equal(t, "us-east-1", cfg.Region)
		require.Equal(t, "http://127.0.0.1:4566", aws.ToString(cfg.BaseEndpoint))
		creds, err := cfg.Credentials.Retrieve(ctx)
		require.NoError(t, err)
		require.Equal(t, "test", creds.AccessKeyID)
		require.Equal(t, "test", creds.SecretAccessKey)
	})

	t.Run("EnvironmentCredentialsWin", func(t *testing.T) {
		t.Setenv("AWS_ACCESS_KEY_ID", "AKIDEXAMPLE")
		t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
		cfg, err := AWSConfig(ctx, "http://127.0.0.1:4566", "eu-west-1")
		require.NoError(t, err)
		require.Equal(t, "eu-west-1", cfg.Region)
		creds, err := cfg.Credentials.Retrieve(ctx)
		require.NoError(t, err)
		require.Equal(t, "AKIDEXAMPLE", creds.AccessKeyID)
	})

	t.Run("EndpointFromEnvironment", func(t *testing.T) {
		t.Setenv("AWS_ENDPOINT_URL", "http://localhost:4566")
		cfg, err := AWSConfig(ctx, "", "")
		require.NoError(t, err)
		require.Equal(t, "http://localhost:4566", aws.ToString(cfg.BaseEndpoint))
		creds, err := cfg.Credentials.Retrieve(ctx)
		require.NoError(t, err)
		require.Equal(t, "test", creds.AccessKeyID)
	})

	t.Run("NoEndpointLeavesTheSDKDefaults", func(t *testing.T) {
		cfg, err := AWSConfig(ctx, "", "")
		require.NoError(t, err)
		require.Nil(t, cfg.BaseEndpoint)
		require.Equal(t, "us-east-1", cfg.Region)
	})
}

func TestTailKeepsTheEnd(t *testing.T) {
	t.Parallel()
	tl := newTail(8)
	_, _ = tl.Write([]byte("0123456789"))
	_, _ = tl.Write([]byte("ab"))
	require.Equal(t, "456789ab", tl.String())
}

func TestStartFailsClearlyWhenTheServerDies(t *testing.T) {
	t.Parallel()
	// A "server" that prints and exits stands in for a broken engine install.
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	port, err := freePort()
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = startOn(ctx, spec{name: "fake", command: func(int) ([]string, []string) {
		return []string{sh, "-c", "echo boom: no module named flask >&2; exit 3", "fake"}, nil
	}}, port, io.Discard)
	require.ErrorContains(t, err, "exited before answering")
	require.ErrorContains(t, err, "no module named flask")
}

// Under load another process can take the port between freePort and the server's bind: the
// other process's answers are not taken for the server's, which exits (port taken) and is
// started on another port. Here this test's own HTTP server holds the port, and a Python
// HTTP server is started on it.
func TestStartNotFooledByAnotherServerOnThePort(t *testing.T) {
	t.Parallel()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	other := &http.Server{ReadHeaderTimeout: time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "not the engine")
	})}
	go func() { _ = other.Serve(ln) }()
	t.Cleanup(func() { _ = other.Close() })
	port := ln.Addr().(*net.TCPAddr).Port

	ours, err := listensOn(os.Getpid(), port)
	require.NoError(t, err)
	if runtime.GOOS == "linux" {
		require.True(t, ours, "this process listens on the port")
		ours, err = listensOn(1, port)
		require.NoError(t, err)
		require.False(t, ours, "pid 1's group does not")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sp := spec{name: "python http.server", portTaken: "Address already in use", command: func(port int) ([]string, []string) {
		return []string{py, "-m", "http.server", "--bind", "127.0.0.1", strconv.Itoa(port)}, nil
	}}
	srv, err := startOn(ctx, sp, port, io.Discard)
	if runtime.GOOS != "linux" {
		if err == nil {
			_ = srv.Stop()
		}
		t.Skip("who listens on a port is told from /proc (Linux)")
	}
	require.ErrorIs(t, err, errPortTaken, "the other server's answer was not taken for python's")

	srv, err = startServer(ctx, sp, io.Discard)
	require.NoError(t, err, "startServer moves on to a free port")
	require.NoError(t, srv.Stop())
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// listeningAddresses are the local addresses (hex, as /proc/net/tcp and tcp6 write them) of
// the sockets listening on port.
func listeningAddresses(t *testing.T, port int) []string {
	t.Helper()
	var out []string
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(f)
		if os.IsNotExist(err) {
			continue
		}
		require.NoError(t, err)
		for _, line := range strings.Split(string(b), "\n")[1:] {
			fields := strings.Fields(line)
			if len(fields) < 4 || fields[3] != "0A" {
				continue
			}
			addr, p, ok := strings.Cut(fields[1], ":")
			if ok && p == fmt.Sprintf("%04X", port) {
				out = append(out, addr)
			}
		}
	}
	return out
}
