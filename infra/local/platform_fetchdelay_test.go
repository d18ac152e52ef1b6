package local_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/iam"
	"github.com/sundialhq/sundial/infra/local"
	"github.com/sundialhq/sundial/internal/message"
	"github.com/sundialhq/sundial/internal/testenv"
)

// SQS counts a message's DelaySeconds from the call that sends it
// (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-message-timers.html).
// Through the local platform, with every SendMessageBatch of the fetch held 250 ms on its way
// to the queue (a slow network or a throttled SQS), a window of 240 firings due at one instant
// is 24 calls: sent one after another with delays computed when the tick began, the last
// arrived seconds late. Each message must reach the queue, plus its delay, within a second after
// its due instant (and at most 2 s before it: the fetch's crowd lead and whole-second delays).
func TestFetchDelayCountsFromEachSend(t *testing.T) {
	testenv.Integration(t)
	t.Parallel()
	const timers = 240
	dir := t.TempDir()
	manifest := filepath.Join(dir, "timers.yaml")
	var b strings.Builder
	b.WriteString("timers:\n")
	for i := range timers {
		fmt.Fprintf(&b, "  - {name: T%03d, schedule: \"every 30s\", priority: %d, timeout: 5s, action: {http: {url: \"http://127.0.0.1:9/x\"}}}\n", i, 1+i%4)
	}
	require.NoError(t, os.WriteFile(manifest, []byte(b.String()), 0o644))
	inv := &testenv.Invoker{}
	var logs testenv.SyncBuffer
	p, err := local.Up(context.Background(), local.Options{Template: "../../template.yaml", Manifest: manifest, Log: &logs, FunctionOptions: local.FunctionOptions{Invoker: inv, Tick: 2 * time.Second}})
	require.NoError(t, err, "log:\n%s", logs.String())
	t.Cleanup(func() { _ = p.Stop() })

	const hold = 250 * time.Millisecond
	var mu sync.Mutex
	type arrival struct {
		timer      string
		off        time.Duration // reaches the queue plus its delay, minus its due instant
		sentAfter  time.Duration // since the first call of its window
		delay, due string
	}
	var arrivals []arrival
	first := map[time.Time]time.Time{}     // due instant -> first call that carried it
	firstOff := map[string]time.Duration{} // due instant -> that call's arrival minus the instant
	p.Local.Gateway.SetStall(func(principal string, req iam.Request) time.Duration {
		if principal != "FetchFunctionRole" || req.Service != iam.SQS || req.Operation != "SendMessageBatch" {
			return 0
		}
		reaches := time.Now().Add(hold)
		var in struct {
			Entries []struct {
				MessageBody  string
				DelaySeconds int
			}
		}
		if json.Unmarshal(req.Body, &in) != nil {
			return hold
		}
		mu.Lock()
		defer mu.Unlock()
		for _, e := range in.Entries {
			f, err := message.Decode(e.MessageBody)
			if err != nil || f.Reason != message.ReasonSchedule {
				continue
			}
			if _, ok := first[f.DueAt]; !ok {
				first[f.DueAt] = reaches
				firstOff[f.DueAt.Format(time.TimeOnly)] = reaches.Sub(f.DueAt)
			}
			arrivals = append(arrivals, arrival{timer: f.Timer, off: reaches.Add(time.Duration(e.DelaySeconds) * time.Second).Sub(f.DueAt),
				sentAfter: reaches.Sub(first[f.DueAt]), delay: fmt.Sprint(e.DelaySeconds), due: f.DueAt.Format(time.TimeOnly)})
		}
		return hold
	})

	// The first window after the start may hold firings already due (the publish of 240
	// timers takes a while on a loaded machine): those go at once, late by nature. A window the
	// fetch looked at ahead of its instant, as it does in steady state, is the one measured.
	ahead := func() []arrival {
		byDue := map[string][]arrival{}
		for _, a := range arrivals {
			byDue[a.due] = append(byDue[a.due], a)
		}
		for due, as := range byDue {
			if len(as) >= timers && firstOff[due] < -time.Second {
				return as[:timers]
			}
		}
		return nil
	}
	var measured []arrival
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		measured = ahead()
		return measured != nil
	}, 100*time.Second, 200*time.Millisecond, "the fetch sends a whole window ahead of its instant")
	var latest, earliest, spread time.Duration
	var worst arrival
	for _, a := range measured {
		if a.off > latest {
			worst = a
		}
		latest, earliest, spread = max(latest, a.off), min(earliest, a.off), max(spread, a.sentAfter)
	}
	t.Logf("%d firings in %s of calls held %s each: from %s early to %s late", timers, spread.Round(time.Millisecond), hold,
		(-earliest).Round(time.Millisecond), latest.Round(time.Millisecond))
	require.LessOrEqual(t, latest, time.Second, "%s (due %s, delay %ss), sent %s after its window's first call, reaches the queue %s late",
		worst.timer, worst.due, worst.delay, worst.sentAfter.Round(time.Millisecond), latest.Round(time.Millisecond))
	require.GreaterOrEqual(t, earliest, -2*time.Second, "a firing reaches the queue %s early", (-earliest).Round(time.Millisecond))
}
