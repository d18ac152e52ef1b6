package dynamo

import (
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/actionspec"
	"github.com/sundialhq/sundial/internal/itemsize"
	"github.com/sundialhq/sundial/internal/manifest"
	"github.com/sundialhq/sundial/internal/timer"
)

// TestInstanceItemWithinManifestBound pins manifest.ItemReserveBytes: an instance of an entry
// with the longest names, every run-state attribute set (a long last error, the eight finish
// tokens) is no larger, as DynamoDB counts it, than what `sundial check` counted for it — so an
// entry check accepts is one every write of its instances can store.
func TestInstanceItemWithinManifestBound(t *testing.T) {
	t.Parallel()
	name := strings.Repeat("N", 120)
	entry := manifest.Timer{
		Name: name, Schedule: "every 5m", Timezone: "America/Argentina/ComodRivadavia", DST: "skip",
		Misfire: timer.MisfireSkip, RetryBackoff: timer.BackoffExponential, MultiTenant: true, Shards: manifest.MaxShards,
		Action:     actionspec.Spec{HTTP: &actionspec.HTTPSpec{URL: "https://example.com/" + strings.Repeat("u", 1000), Headers: map[string]string{"x-api-key": strings.Repeat("k", 500)}}},
		Properties: map[string]string{"batch": strings.Repeat("é", 1000), "n": "1"},
	}
	bound, err := entry.InstanceItemBytes()
	require.NoError(t, err)
	ds := entry.ExpandFor(strings.Repeat("A", 128), []string{strings.Repeat("T", 128)}, manifest.Defaults{MaxRetries: 3, RetryDelay: time.Minute})
	d := ds[len(ds)-1] // the last shard: the longest tt_index
	at := time.Date(2999, 12, 31, 23, 59, 59, 999e6, time.UTC)
	in := timer.Instance{
		Key: d.Key, Settings: d.Settings, Active: true, ActiveBy: timer.ActiveByTenantRemoved, Shard: 1 << 20,
		LastRun: at, LastDuration: 24 * time.Hour, NumberOfTries: 101, IsRunningSince: at, IsRunningBy: strings.Repeat("p", 256),
		ExecutionID: strings.Repeat("e", 64), LeaseExpiresAt: at, LeaseDeadline: at, ClaimedNextRun: at,
		RunScheduledAt: at, RunAttempt: 101, Version: 1 << 62, PendingScheduledAt: at, PendingAttempt: 101, RequeuedAt: at,
		LastOutcome: timer.Outcome("timed-out"), LastError: strings.Repeat("x", 4096),
		LastOutput: strings.Repeat("o", 1024), LastSuccessAt: at, LastSuccessFor: at, State: `"` + strings.Repeat("s", timer.StateMaxBytes-2) + `"`,
	}
	item, err := attributevalue.MarshalMap(toItem(in))
	require.NoError(t, err)
	for v := int64(0); v < 2*finishSlots; v += 2 {
		tok, err := attributevalue.Marshal(strings.Repeat("t", 16))
		require.NoError(t, err)
		item[finishSlot(v)] = tok
	}
	item["lastExecId"], _ = attributevalue.Marshal(strings.Repeat("e", 64))
	item["lastGaveUp"], _ = attributevalue.Marshal(true)
	got := itemsize.Item(item)
	require.LessOrEqual(t, got, bound, "an instance item is larger than check's bound: raise manifest.ItemReserveBytes")
	t.Logf("item %d bytes, check's bound %d (reserve %d)", got, bound, manifest.ItemReserveBytes)
}
