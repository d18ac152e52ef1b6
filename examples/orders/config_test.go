package orders

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestParseConfig(t *testing.T) {
	t.Parallel()
	const ep = "http://127.0.0.1:9100/orders"
	for _, tc := range []struct {
		name  string
		props map[string]string
		want  Config
		errs  []string // every one must be in the error
	}{
		{name: "Defaults", props: map[string]string{"endpoint": ep},
			want: Config{Endpoint: ep, Batch: 1, RetryDelay: 10 * time.Minute, PushTimeout: 10 * time.Second}},
		{name: "Scenario3", props: map[string]string{"endpoint": ep, "retryDelay": "2s", "maxAttempts": "3"},
			want: Config{Endpoint: ep, Batch: 1, RetryDelay: 2 * time.Second, MaxAttempts: 3, PushTimeout: 10 * time.Second}},
		{name: "Scenario5Shard", props: map[string]string{"endpoint": ep, "batch": "100", "tt_index": "4", "tt_total": "5", "table": "t1", "pushTimeout": "3s"},
			want: Config{Endpoint: ep, Table: "t1", Batch: 100, RetryDelay: 10 * time.Minute, PushTimeout: 3 * time.Second, Shard: Shard{Index: 4, Total: 5}}},
		{name: "ZeroDelayAllowed", props: map[string]string{"endpoint": ep, "retryDelay": "0s"},
			want: Config{Endpoint: ep, Batch: 1, PushTimeout: 10 * time.Second}},
		{name: "EndpointRequired", props: map[string]string{},
			errs: []string{"property endpoint is required"}},
		{name: "EndpointMustBeAbsolute", props: map[string]string{"endpoint": "127.0.0.1:9100/orders"},
			errs: []string{`property endpoint "127.0.0.1:9100/orders": want an absolute http:// or https:// URL`}},
		{name: "BadNumbers", props: map[string]string{"endpoint": ep, "batch": "0", "maxAttempts": "-1", "retryDelay": "10 minutes"},
			errs: []string{`property batch "0": want an integer 1..1000`, `property maxAttempts "-1": want an integer 0..1000`,
				`property retryDelay "10 minutes": want a duration 0s..720h0m0s`}},
		{name: "ShardIndexNotANumber", props: map[string]string{"endpoint": ep, "tt_index": "x", "tt_total": "5"},
			errs: []string{`property tt_index "x": want an integer 0..tt_total-1 (0..4)`}},
		{name: "ShardIndexTooHigh", props: map[string]string{"endpoint": ep, "tt_index": "5", "tt_total": "5"},
			errs: []string{`property tt_index "5": want an integer 0..tt_total-1 (0..4)`}},
		{name: "ShardTotalBad", props: map[string]string{"endpoint": ep, "tt_index": "0", "tt_total": "0"},
			errs: []string{`property tt_total "0": want an integer 1..1000`}},
		{name: "ShardIndexAlone", props: map[string]string{"endpoint": ep, "tt_index": "1"},
			errs: []string{`property tt_index "1" needs tt_total`}},
		{name: "ShardTotalAlone", props: map[string]string{"endpoint": ep, "tt_total": "5"},
			errs: []string{`property tt_total "5" needs tt_index`}},
		{name: "UnknownProperty", props: map[string]string{"endpoint": ep, "maxAttemps": "3"},
			errs: []string{`unknown property "maxAttemps"`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseConfig(tc.props)
			if len(tc.errs) == 0 {
				require.NoError(t, err)
				require.Equal(t, tc.want, got)
				return
			}
			require.Error(t, err)
			for _, e := range tc.errs {
				require.ErrorContains(t, err, e)
			}
			require.Equal(t, Config{}, got, "an invalid configuration is not half used")
		})
	}
}

func TestShard(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		shard   Shard
		buckets []int
		exact   bool
	}{
		{Shard{}, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, true},
		{Shard{0, 1}, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, true},
		{Shard{1, 2}, []int{1, 3, 5, 7, 9}, true},
		{Shard{3, 5}, []int{3, 8}, true},
		{Shard{7, 10}, []int{7}, true},
		{Shard{1, 3}, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, false}, // 3 does not divide 10: filtered in code
		{Shard{11, 20}, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, false},
	} {
		bs, exact := tc.shard.buckets()
		require.Equal(t, tc.buckets, bs, "%+v", tc.shard)
		require.Equal(t, tc.exact, exact, "%+v", tc.shard)
		// Every order of the shard is in one of its buckets; exact buckets hold only its orders.
		for id := int64(0); id < 1000; id++ {
			in := false
			for _, b := range bs {
				in = in || bucket(id) == b
			}
			if tc.shard.Has(id) {
				require.True(t, in, "order %d of shard %+v is in no bucket read", id, tc.shard)
			} else if exact {
				require.False(t, in, "order %d is not shard %+v's, yet in an exact bucket", id, tc.shard)
			}
		}
	}
	require.Equal(t, "2/5", Shard{2, 5}.String())
	require.Empty(t, Shard{}.String())
}
