package gateway

import (
	"context"
	"time"

	"github.com/sundialhq/sundial/infra/iam"
)

// Stall holds requests before they are served, as a slow store or network would (tests: a
// publish that runs past its function's timeout). It is called once a request is
// authorized, with the caller's principal (its role's name; "" without an IAM check), and
// returns how long to hold it; a caller that gives up meanwhile is not served.
type Stall func(principal string, req iam.Request) time.Duration

// SetStall installs f (nil: none).
func (g *Gateway) SetStall(f Stall) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.stall = f
}

// hold waits as the stall says; false if the caller went away meanwhile.
func (g *Gateway) hold(ctx context.Context, principal string, req iam.Request) bool {
	g.mu.RLock()
	f := g.stall
	g.mu.RUnlock()
	if f == nil {
		return true
	}
	d := f(principal, req)
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
