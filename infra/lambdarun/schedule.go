package lambdarun

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// Every invokes fn with an EventBridge "Scheduled Event" at start and then every interval,
// like a rate() schedule; invocations never overlap (a slow one delays the next).
func Every(ctx context.Context, fn Invoker, interval time.Duration, log *slog.Logger) {
	t := time.NewTicker(interval)
	defer t.Stop()
	name := functionName(fn)
	for n := 0; ; n++ {
		now := time.Now().UTC()
		payload, _ := json.Marshal(events.CloudWatchEvent{
			Version: "0", ID: fmt.Sprintf("%s-%d", name, n), DetailType: "Scheduled Event", Source: "aws.events",
			AccountID: "000000000000", Time: now, Region: "us-east-1",
			Resources: []string{"arn:aws:events:us-east-1:000000000000:rule/" + name},
			Detail:    json.RawMessage("{}"),
		})
		if _, err := fn.Invoke(ctx, fmt.Sprintf("%s-%d", name, n), payload); err != nil && ctx.Err() == nil {
			log.Error("scheduled invocation failed", "function", name, "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
