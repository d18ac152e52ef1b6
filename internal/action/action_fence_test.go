package action

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// stalled is a context whose deadline has passed (or will) while its Done channel stays open:
// what a process sees for a moment after it wakes from a stall, before the runtime's timers
// cancel the context.
type stalled struct {
	context.Context
	deadline time.Time
}

func (s stalled) Deadline() (time.Time, bool) { return s.deadline, true }

// slowBody yields its bytes after a pause: the request's body is written after the deadline.
type slowBody struct {
	pause time.Duration
	done  bool
}

func (b *slowBody) Read(p []byte) (int, error) {
	if b.done {
		return 0, io.EOF
	}
	time.Sleep(b.pause)
	b.done = true
	return copy(p, `{"x":1}`), nil
}

func TestFence(t *testing.T) {
	var calls, bodies atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if _, err := io.ReadAll(r.Body); err == nil {
			bodies.Add(1)
		}
	}))
	defer srv.Close()
	spec := Spec{HTTP: &HTTPSpec{URL: srv.URL}}
	h := &HTTPInvoker{}

	t.Run("NotSentAfterItsDeadline", func(t *testing.T) {
		// What was tried: an action called with a deadline already past on the wall clock, its
		// context not yet cancelled (a processor waking from a freeze). The Lambda invoker's
		// case: lambdainvoke's TestInvokeNotSentAfterItsDeadline.
		ctx := stalled{Context: context.Background(), deadline: time.Now().Add(-time.Millisecond)}
		_, err := h.Invoke(ctx, spec, Payload{Timer: "T", ExecutionID: "x"})
		var f *Failure
		require.ErrorAs(t, err, &f)
		require.True(t, f.Timeout, "reported as the timeout it is")
		require.Zero(t, calls.Load(), "the action never saw the call")
	})

	t.Run("NoWriteAfterTheDeadline", func(t *testing.T) {
		// What was tried: a request whose body is still being written when the deadline
		// passes; the connection's write deadline refuses it, whatever the context says.
		ctx, err := Fence(stalled{Context: context.Background(), deadline: time.Now().Add(100 * time.Millisecond)})
		require.NoError(t, err)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL, &slowBody{pause: 300 * time.Millisecond})
		require.NoError(t, err)
		req.ContentLength = -1
		before := bodies.Load()
		resp, err := srv.Client().Do(req)
		if err == nil {
			resp.Body.Close()
		}
		require.Error(t, err)
		require.Equal(t, before, bodies.Load(), "no whole request reached the server")
	})

	t.Run("APooledConnectionKeepsNoDeadline", func(t *testing.T) {
		// A fenced request, then a plain one on the same connection after the first one's
		// deadline: the second is written normally.
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		fenced, err := Fence(ctx)
		require.NoError(t, err)
		req, _ := http.NewRequestWithContext(fenced, http.MethodPost, srv.URL, nil)
		resp, err := client.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		time.Sleep(100 * time.Millisecond)
		reused := false
		req, _ = http.NewRequest(http.MethodPost, srv.URL, nil)
		resp, err = client.Do(req.WithContext(withReuse(&reused)))
		require.NoError(t, err)
		resp.Body.Close()
		require.True(t, reused, "the test needs the pooled connection")
	})
}

func withReuse(reused *bool) context.Context {
	return httptraceWith(func(r bool) { *reused = r })
}

// httptraceWith reports whether the request reused a pooled connection.
func httptraceWith(report func(reused bool)) context.Context {
	return httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) { report(info.Reused) },
	})
}
