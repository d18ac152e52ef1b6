package emulator

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
)

// DynamoDB makes every conditional write atomic on its item: a ConditionExpression is
// checked and the update applied as one step, whatever else is in flight. moto does not:
// its update_item reads the item, evaluates the condition, then validates and applies the
// update with no lock held (moto_server serves requests on threads), so two concurrent
// claims can both pass the condition; the second then fails with a ValidationException
// ("The provided expression refers to an attribute that does not exist in the item") or,
// with worse timing, succeeds too. That is the emulator's gap, not a property of Sundial,
// so SerializeDynamoDB restores DynamoDB's guarantee the simplest way: one DynamoDB
// operation at a time against the emulator, in whatever order the callers race for it. Each
// request is then applied atomically, as DynamoDB applies it; the callers' code still runs
// concurrently. moto serves one request at a time anyway (the GIL), so little is lost.
//
// The order is kept by a Proxy (proxy.go) in front of the emulator, shared by every client
// of this process and by any process given its URL, so that separate processes (the
// function bootstraps infra/local starts) are ordered too; the proxy also makes moto's
// transactions cheap. Should the proxy fail to start, a lock inside this process serializes
// its own clients instead.

var (
	proxiesMu sync.Mutex
	proxies   = map[string]*Proxy{} // by upstream endpoint; they live as long as the process
	dynamoMu  sync.Mutex            // the fallback's process-wide lock
)

type serialKey struct{}

// SerializeDynamoDB points the clients built from cfg at this process's serializing proxy for
// cfg's endpoint (started on first use). Use it only against moto (IsMoto); DynamoDB and
// DynamoDB Local need nothing. cfg without a BaseEndpoint is left alone.
func SerializeDynamoDB(cfg *aws.Config) {
	if cfg.BaseEndpoint == nil {
		return
	}
	p, err := sharedProxy(*cfg.BaseEndpoint)
	if err != nil {
		cfg.APIOptions = append(cfg.APIOptions, serializeDynamoDB)
		return
	}
	cfg.BaseEndpoint = aws.String(p.URL)
}

// sharedProxy returns this process's proxy for the upstream endpoint, starting it once; it
// serves until the process exits.
func sharedProxy(upstream string) (*Proxy, error) {
	proxiesMu.Lock()
	defer proxiesMu.Unlock()
	if p, ok := proxies[upstream]; ok {
		return p, nil
	}
	p, err := StartProxy(upstream, nil)
	if err != nil {
		return nil, err
	}
	proxies[upstream] = p
	return p, nil
}

// IsMoto reports whether the endpoint is a moto server (it answers /moto-api/).
func IsMoto(ctx context.Context, endpoint string) bool {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(endpoint, "/")+"/moto-api/", nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

func serializeDynamoDB(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("SundialTestSerializeDynamoDB",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			if middleware.GetServiceID(ctx) != dynamodb.ServiceID || ctx.Value(serialKey{}) != nil {
				return next.HandleInitialize(ctx, in)
			}
			dynamoMu.Lock()
			defer dynamoMu.Unlock()
			return next.HandleInitialize(context.WithValue(ctx, serialKey{}, true), in)
		}), middleware.After)
}
