package gateway

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sundialhq/sundial/infra/iam"
)

// How request bodies are read, so that slow or oversized unauthenticated bodies cannot
// starve the platform. A body cannot be authenticated before it
// has all arrived (its SHA-256 is part of the signature), and an access key ID is no secret,
// so what an unauthenticated body may hold must not depend on what it announces:
//
//   - A body holds, against the endpoint's budget (MaxInFlight), what it has sent, not its
//     Content-Length: room is reserved as bytes arrive, doubling from 16 KiB, so a body holds
//     at most twice what it sent (plus 16 KiB). A thousand connections that announce 16 MB
//     and trickle hold 16 KiB each.
//   - A body must keep arriving: every bodyWindow of reading brings bodyWindowBytes, or the
//     rest of the body, or it is cut (400 RequestTimeout, as S3 answers a body that stops arriving); and it must all arrive within
//     bodyTimeout. Time spent waiting for the budget does not count against the sender.
//   - While a body waits for the budget, a body that has sent nothing for bodyIdle is cut:
//     budget is held only while it is being sent.
//   - Room is granted only when every body being read could still be completed (the
//     banker's rule on what each announced), so bodies that each hold part of what they need
//     never wait on each other forever.
const (
	bodyWindow      = 5 * time.Second
	bodyWindowBytes = 64 << 10
	bodyTimeout     = time.Minute
	bodyIdle        = time.Second
)

// readBody reads the request's body once it fits the service's limit, holding budget for
// what has arrived (above); release gives it back. A body too large is answered in the
// service's error format, unread; one too slow is cut.
func (g *Gateway) readBody(w http.ResponseWriter, r *http.Request, svc iam.Service, report bool) (body []byte, release func(), ok bool) {
	limit := maxRequest(svc, r)
	if report || svc == "" {
		limit = 0
	}
	if r.ContentLength > limit {
		tooLarge(w, svc, r.ContentLength, limit)
		return nil, nil, false
	}
	want := limit + 1 // without a Content-Length, one byte more than the limit shows a body too large
	if r.ContentLength >= 0 {
		want = r.ContentLength
	}
	claim := max(want, minWeight)
	if claim > g.budget.total {
		refuse(w, svc, http.StatusServiceUnavailable, "ServiceUnavailable",
			fmt.Sprintf("the request's body may be %d bytes, more than the endpoint holds at once (%d)", claim, g.budget.total))
		return nil, nil, false
	}
	rc := http.NewResponseController(w)
	rd := g.budget.join(claim)
	rd.mu.Lock()
	rd.evict = func() { _ = rc.SetReadDeadline(time.Now()) }
	rd.mu.Unlock()
	release = func() { g.budget.leave(rd) }
	fail := func(status int, code, msg string) ([]byte, func(), bool) {
		rd.finish()
		_ = rc.SetReadDeadline(time.Time{})
		release()
		refuse(w, svc, status, code, msg)
		return nil, nil, false
	}

	now := time.Now()
	window, inWindow, deadline := now, int64(0), now.Add(bodyTimeout)
	var buf []byte
	for int64(len(buf)) < want {
		if len(buf) == cap(buf) {
			step := min(max(int64(cap(buf)), minWeight), claim-rd.granted())
			waitFrom := time.Now()
			if err := g.budget.grow(r.Context(), rd, step); err != nil {
				return fail(http.StatusServiceUnavailable, "ServiceUnavailable", "the request was cancelled while the endpoint was busy")
			}
			waited := time.Since(waitFrom) // the sender is not slow while the endpoint does not read
			window, deadline = window.Add(waited), deadline.Add(waited)
			grown := make([]byte, len(buf), int64(cap(buf))+step)
			copy(grown, buf)
			buf = grown
		}
		until := window.Add(bodyWindow)
		if deadline.Before(until) {
			until = deadline
		}
		_ = rc.SetReadDeadline(until)
		rd.reading.Store(true)
		n, err := r.Body.Read(buf[len(buf):min(int64(cap(buf)), want)])
		rd.reading.Store(false)
		buf = buf[:len(buf)+n]
		if n > 0 {
			rd.lastRead.Store(time.Now().UnixNano())
			if inWindow += int64(n); inWindow >= bodyWindowBytes {
				window, inWindow = time.Now(), 0
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if timeout(err) {
				why := fmt.Sprintf("it brought less than %d bytes in %s", bodyWindowBytes, bodyWindow)
				switch {
				case rd.evicted.Load():
					why = fmt.Sprintf("it sent nothing for %s while other requests waited for the endpoint", bodyIdle)
				case !time.Now().Before(deadline):
					why = fmt.Sprintf("it was not all sent within %s", bodyTimeout)
				}
				// S3's answer to a body that stops arriving (400 RequestTimeout), which the SDKs retry.
				return fail(http.StatusBadRequest, "RequestTimeout", fmt.Sprintf("Your socket connection to the server was not read from "+
					"or written to within the timeout period. Idle connections will be closed. (The request body arrived too slowly "+
					"after %d bytes: %s.)", len(buf), why))
			}
			return fail(http.StatusBadRequest, "IncompleteBody", "the request body could not be read: "+err.Error())
		}
	}
	rd.finish() // no eviction after this: the deadline cleared stays cleared
	_ = rc.SetReadDeadline(time.Time{})
	if int64(len(buf)) > limit {
		release()
		tooLarge(w, svc, int64(len(buf)), limit)
		return nil, nil, false
	}
	return buf, release, true
}

func timeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// budget bounds the bytes of request bodies held at once (total). Each body being read is a
// reader that announced at most claim bytes and holds what it was granted; peak is the most
// held at once, for tests.
type budget struct {
	total int64

	mu      sync.Mutex
	held    int64
	peak    int64
	readers map[*reader]struct{}
	changed chan struct{} // closed and replaced whenever held shrinks or a reader leaves
}

type reader struct {
	claim, held int64        // guarded by the budget's mu
	reading     atomic.Bool  // blocked in a read of the body (not waiting for the budget)
	lastRead    atomic.Int64 // unix nanoseconds of its last byte, or of its start
	evicted     atomic.Bool

	mu    sync.Mutex
	evict func() // ends the read in progress (sets the connection's read deadline to now)
	done  bool   // the body is read or refused: evict no more
}

// cut evicts the reader unless its body is done.
func (r *reader) cut() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done || r.evict == nil || !r.evicted.CompareAndSwap(false, true) {
		return
	}
	r.evict()
}

func (r *reader) finish() {
	r.mu.Lock()
	r.done = true
	r.mu.Unlock()
}

func newBudget(total int64) *budget {
	return &budget{total: total, readers: map[*reader]struct{}{}, changed: make(chan struct{})}
}

// join registers a body that will need at most claim bytes (at most total).
func (b *budget) join(claim int64) *reader {
	r := &reader{claim: claim}
	r.lastRead.Store(time.Now().UnixNano())
	b.mu.Lock()
	b.readers[r] = struct{}{}
	b.mu.Unlock()
	return r
}

func (r *reader) granted() int64 {
	// Only the reader's own goroutine grows it; leave is its last use.
	return r.held
}

// grow grants r n bytes more, waiting while that is not safe. While it waits, readers idle
// for bodyIdle in the middle of their body are cut, so that their bytes come back.
func (b *budget) grow(ctx context.Context, r *reader, n int64) error {
	b.mu.Lock()
	if r.held+n > r.claim {
		b.mu.Unlock()
		return fmt.Errorf("a body announced %d bytes and asks for %d", r.claim, r.held+n)
	}
	var tick *time.Ticker
	defer func() {
		if tick != nil {
			tick.Stop()
		}
	}()
	for {
		r.held += n
		b.held += n
		if b.safe() {
			b.peak = max(b.peak, b.held)
			b.mu.Unlock()
			return nil
		}
		r.held -= n
		b.held -= n
		b.evictIdle(r)
		changed := b.changed
		b.mu.Unlock()
		if tick == nil {
			tick = time.NewTicker(bodyIdle / 4)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		case <-tick.C:
		}
		b.mu.Lock()
	}
}

// safe: some order lets every reader finish, each taking the rest of its claim from what is
// free and giving back all it holds when done. With one resource, finishing the readers in
// the order of what they still need is such an order when any is. b.mu is held.
func (b *budget) safe() bool {
	free := b.total - b.held
	if free < 0 {
		return false
	}
	type need struct{ rest, held int64 }
	needs := make([]need, 0, len(b.readers))
	for r := range b.readers {
		needs = append(needs, need{r.claim - r.held, r.held})
	}
	slices.SortFunc(needs, func(x, y need) int { return cmp.Compare(x.rest, y.rest) })
	for _, n := range needs {
		if n.rest > free {
			return false
		}
		free += n.held
	}
	return true
}

// evictIdle cuts the readers other than except that hold budget and have been blocked in a
// read, receiving nothing, for bodyIdle. b.mu is held.
func (b *budget) evictIdle(except *reader) {
	idleSince := time.Now().Add(-bodyIdle).UnixNano()
	for r := range b.readers {
		if r == except || r.held == 0 || !r.reading.Load() || r.lastRead.Load() > idleSince {
			continue
		}
		r.cut()
	}
}

// leave gives back all r holds.
func (b *budget) leave(r *reader) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.readers[r]; !ok {
		return
	}
	delete(b.readers, r)
	b.held -= r.held
	r.held = 0
	close(b.changed)
	b.changed = make(chan struct{})
}
