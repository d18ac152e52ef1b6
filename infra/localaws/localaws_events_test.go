package localaws

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/stretchr/testify/require"
)

// The emulated PutEvents: the log writer's role may put on the stack's bus (EventBusName) and
// nowhere else; entries are checked as EventBridge checks them; each event taken reaches the
// sink as EventBridge delivers it to a target.
func TestPutEventsEmulated(t *testing.T) {
	ctx, e := startEnv(t)
	_, err := e.Provision(ctx, "evtest", map[string]string{"EventBusName": "ops"})
	require.NoError(t, err)
	var mu sync.Mutex
	var got []string
	var buses []string
	e.Gateway.SetEvents(func(bus string, ev []byte) {
		mu.Lock()
		defer mu.Unlock()
		got, buses = append(got, string(ev)), append(buses, bus)
	})
	lw, err := e.Config("evtest", "LogWriterFunction")
	require.NoError(t, err)
	fetch, err := e.Config("evtest", "FetchFunction")
	require.NoError(t, err)
	entry := func(bus, detail string) types.PutEventsRequestEntry {
		return types.PutEventsRequestEntry{EventBusName: aws.String(bus), Source: aws.String("sundial"), DetailType: aws.String("Execution Failed"),
			Detail: aws.String(detail), Time: aws.Time(time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC))}
	}

	out, err := eventbridge.NewFromConfig(lw).PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []types.PutEventsRequestEntry{
		entry("ops", `{"timer":"T"}`), entry("ops", `not json`), {EventBusName: aws.String("ops"), Source: aws.String("sundial")}}})
	require.NoError(t, err)
	require.EqualValues(t, 2, out.FailedEntryCount)
	require.NotEmpty(t, aws.ToString(out.Entries[0].EventId))
	require.Equal(t, "MalformedDetail", aws.ToString(out.Entries[1].ErrorCode))
	require.Equal(t, "InvalidArgument", aws.ToString(out.Entries[2].ErrorCode))
	mu.Lock()
	require.Len(t, got, 1)
	require.Equal(t, "arn:aws:events:us-east-1:000000000000:event-bus/ops", buses[0])
	var ev map[string]any
	require.NoError(t, json.Unmarshal([]byte(got[0]), &ev))
	mu.Unlock()
	require.Equal(t, "0", ev["version"])
	require.Equal(t, "Execution Failed", ev["detail-type"])
	require.Equal(t, "sundial", ev["source"])
	require.Equal(t, "2026-11-25T10:00:00Z", ev["time"])
	require.Equal(t, "us-east-1", ev["region"])
	require.Equal(t, "000000000000", ev["account"])
	require.Equal(t, map[string]any{"timer": "T"}, ev["detail"])
	require.Equal(t, []any{}, ev["resources"])

	// More than 10 entries is refused whole.
	var eleven []types.PutEventsRequestEntry
	for range 11 {
		eleven = append(eleven, entry("ops", `{}`))
	}
	_, err = eventbridge.NewFromConfig(lw).PutEvents(ctx, &eventbridge.PutEventsInput{Entries: eleven})
	require.ErrorContains(t, err, "ValidationException")
	// So is a request over 256 KB.
	big := strings.Repeat("x", 200*1024)
	_, err = eventbridge.NewFromConfig(lw).PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []types.PutEventsRequestEntry{
		entry("ops", `{"a":"`+big+`"}`), entry("ops", `{"b":"`+big+`"}`)}})
	require.ErrorContains(t, err, "ValidationException")

	// Another bus, or another function's role: AccessDenied, as on AWS.
	_, err = eventbridge.NewFromConfig(lw).PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []types.PutEventsRequestEntry{entry("default", `{}`)}})
	require.ErrorContains(t, err, "events:PutEvents on resource: arn:aws:events:us-east-1:000000000000:event-bus/default")
	_, err = eventbridge.NewFromConfig(fetch).PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []types.PutEventsRequestEntry{entry("ops", `{}`)}})
	require.ErrorContains(t, err, "AccessDenied")
	mu.Lock()
	require.Len(t, got, 1, "nothing refused was delivered")
	mu.Unlock()
}
