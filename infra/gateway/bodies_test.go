package gateway

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"
)

// slowBody opens a connection to the endpoint and sends a PutItem's headers signed (wrongly)
// with keyID, announcing length bytes, then first bytes at once; each tick after that it
// sends one more byte until stop. The endpoint's answer (status line) or the connection's end
// is sent on answered, with when it came.
type slowBody struct {
	conn     net.Conn
	answered chan string
	at       chan time.Time
}

func openSlowBody(t *testing.T, url, keyID string, length, first int, tick time.Duration, stop <-chan struct{}) *slowBody {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(url, "http://"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	date := time.Now().UTC()
	head := fmt.Sprintf("POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/x-amz-json-1.0\r\nX-Amz-Target: DynamoDB_20120810.PutItem\r\n"+
		"X-Amz-Date: %s\r\nAuthorization: AWS4-HMAC-SHA256 Credential=%s/%s/us-east-1/dynamodb/aws4_request, SignedHeaders=host;x-amz-date;x-amz-target, Signature=%s\r\n"+
		"Content-Length: %d\r\n\r\n",
		strings.TrimPrefix(url, "http://"), date.Format("20060102T150405Z"), keyID, date.Format("20060102"), strings.Repeat("0", 64), length)
	_, err = conn.Write([]byte(head))
	require.NoError(t, err)
	if first > 0 {
		_, err = conn.Write([]byte(strings.Repeat("x", first)))
		require.NoError(t, err)
	}
	s := &slowBody{conn: conn, answered: make(chan string, 1), at: make(chan time.Time, 1)}
	go func() {
		line, err := bufio.NewReader(conn).ReadString('\n')
		if err != nil {
			line = "connection ended: " + err.Error()
		}
		s.at <- time.Now()
		s.answered <- strings.TrimSpace(line)
	}()
	if tick > 0 {
		go func() {
			tk := time.NewTicker(tick)
			defer tk.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tk.C:
					if _, err := conn.Write([]byte("x")); err != nil {
						return
					}
				}
			}
		}()
	}
	return s
}

// getLatencies makes GetItem calls signed with c every interval for d, each with a timeout
// of limit, and returns their latencies (limit for one that failed or timed out) and errors.
func getLatencies(f *fixture, c aws.Credentials, d, interval, limit time.Duration) ([]time.Duration, []error) {
	client := f.ddb(c)
	in := &dynamodb.GetItemInput{TableName: aws.String("sundial-LogTable"), Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "x"}}}
	var mu sync.Mutex
	var lat []time.Duration
	var errs []error
	var wg sync.WaitGroup
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), limit)
			defer cancel()
			start := time.Now()
			_, err := client.GetItem(ctx, in)
			took := time.Since(start)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				took = limit
			}
			lat = append(lat, took)
		}()
		time.Sleep(interval)
	}
	wg.Wait()
	slices.Sort(lat)
	return lat, errs
}

// Unauthenticated bodies must not starve the platform: six connections with the
// administrator's key ID (not a secret), a wrong signature and Content-Length 16000000, then
// one byte a second, froze every timer for 58 s when the endpoint reserved the announced length against its 64 MiB budget before it could check
// the signature, and held it until the read deadline. A body now holds only what it has sent,
// and one that arrives slower than the minimum rate is cut; authenticated requests through
// the same endpoint are served promptly all along.
//
// Not parallel: the latencies are measured with the package's other tests paused.
func TestTrickledBodiesDoNotStarveOthers(t *testing.T) {
	f := start(t, 0) // the default budget, 64 MiB
	stop := make(chan struct{})
	defer close(stop)
	began := time.Now()
	var slow []*slowBody
	for range 6 {
		slow = append(slow, openSlowBody(t, f.url, "ADMINKEY", 16000000, 0, time.Second, stop))
	}
	time.Sleep(300 * time.Millisecond) // the trickles are in

	lat, errs := getLatencies(f, f.role, 4*time.Second, 100*time.Millisecond, 3*time.Second)
	t.Logf("beside 6 trickles (16,000,000 announced, 1 byte/s): %d GetItem calls, p50 %s, max %s, %d failed",
		len(lat), lat[len(lat)/2], lat[len(lat)-1], len(errs))
	require.Empty(t, errs, "authenticated calls beside the trickle")
	require.Less(t, lat[len(lat)-1], time.Second, "the slowest authenticated call beside the trickle")

	// The trickles themselves are cut for their rate, well before the minute's deadline.
	for i, s := range slow {
		select {
		case got := <-s.answered:
			require.Contains(t, got, "400", "trickle %d", i)
			at := <-s.at
			require.Less(t, at.Sub(began), bodyWindow+3*time.Second, "trickle %d cut after %s", i, at.Sub(began))
		case <-time.After(bodyWindow + 5*time.Second):
			t.Fatalf("trickle %d was still being read %s after it began", i, time.Since(began))
		}
	}
	f.g.budget.mu.Lock()
	held := f.g.budget.held
	f.g.budget.mu.Unlock()
	require.Zero(t, held, "nothing is held once the trickles are cut")
}

// A stalled body must not hold the budget others wait for: a body sent fast and then stalled
// holds what it sent; while others wait
// for the budget, a body that stopped sending gives it back (it is cut) within about a
// second, not at the end of its rate window or the minute's deadline.
//
// The PutItem's time is compared with the same PutItem's alone in the same run, so that a
// loaded machine (signing and sending 600 KB slowly) does not fail it: given way to, it waits
// about bodyIdle more; held back, it would wait until the stalled bodies' rate window cut them
// (after bodyWindow).
func TestStalledBodiesGiveWayToOthers(t *testing.T) { // not parallel, as the one above
	f := start(t, 3<<20)
	stop := make(chan struct{})
	defer close(stop)
	put := func() (time.Duration, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 3*bodyWindow)
		defer cancel()
		began := time.Now()
		_, err := f.ddb(f.role).PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("sundial-LogTable"),
			Item: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: strings.Repeat("p", 600<<10)}}})
		return time.Since(began), err
	}
	alone, err := put()
	require.NoError(t, err)
	t.Logf("a 600 KB PutItem alone: %s", alone)
	// Three bodies of 1,000,000 announced send 700,000 bytes and stop: 3,000,000 of 3 MiB held.
	var stalled []*slowBody
	for range 3 {
		stalled = append(stalled, openSlowBody(t, f.url, "ADMINKEY", 1000000, 700000, 0, stop))
	}
	require.Eventually(t, func() bool {
		f.g.budget.mu.Lock()
		defer f.g.budget.mu.Unlock()
		return f.g.budget.held >= 3000000
	}, 5*time.Second, 10*time.Millisecond, "the stalled bodies' bytes are held")

	// An authenticated PutItem of 600 KB needs more than is left.
	took, err := put()
	t.Logf("a 600 KB PutItem beside three stalled bodies (700,000 of 1,000,000 sent) in a 3 MiB budget: %s (alone: %s)", took, alone)
	require.NoError(t, err)
	// Given way to, it waits about bodyIdle more than alone; held back, it ends only when the
	// stalled bodies' rate window cuts them, at least bodyWindow after they began.
	require.Less(t, took-alone, bodyWindow-bodyIdle, "the stalled bodies gave way (cut after bodyIdle), not held it until their rate window cut them")
	for _, s := range stalled {
		select {
		case got := <-s.answered:
			require.Contains(t, got, "400")
		case <-time.After(bodyWindow + 2*time.Second):
			t.Fatal("a stalled body was not cut")
		}
	}
}

// The budget grants a body more only while every body being read can still be completed
// (the banker's rule): bodies that each hold part of what they need never wait on each other
// forever.
func TestBudgetGrantsOnlySafely(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := newBudget(3 << 20)
	x, y := b.join(2<<20), b.join(2<<20)
	require.NoError(t, b.grow(ctx, x, 1<<20))
	require.NoError(t, b.grow(ctx, y, 1<<20))
	// x may take its last MiB: then x can finish, and y after it.
	require.NoError(t, b.grow(ctx, x, 512<<10))
	// y taking 512 KiB more would leave 0 free: neither could finish. It waits until x is done.
	got := make(chan error, 1)
	go func() { got <- b.grow(ctx, y, 512<<10) }()
	select {
	case err := <-got:
		t.Fatalf("y was granted an unsafe share (err %v)", err)
	case <-time.After(200 * time.Millisecond):
	}
	require.NoError(t, b.grow(ctx, x, 512<<10)) // x has all it needs
	b.leave(x)
	select {
	case err := <-got:
		require.NoError(t, err)
	case <-time.After(2 * time.Second):
		t.Fatal("y still waits after x left")
	}
	b.leave(y)
	require.Zero(t, b.held)

	// No body is granted more than it announced; a waiting body is abandoned with its context.
	z := b.join(1 << 20)
	require.Error(t, b.grow(ctx, z, 2<<20))
	b.leave(z)
	z = b.join(3<<20 - minWeight)
	require.NoError(t, b.grow(ctx, z, 3<<20-minWeight))
	v := b.join(minWeight)
	cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	require.NoError(t, b.grow(cctx, v, minWeight), "the last bytes of the budget")
	w := b.join(minWeight)
	require.ErrorIs(t, b.grow(cctx, w, minWeight), context.DeadlineExceeded)
	b.leave(z)
	b.leave(v)
	b.leave(w)
	require.Zero(t, b.held)
}
