package jobkinds_test

import (
	"strings"
	"testing"
	"time"

	"github.com/sundialhq/sundial/internal/actionspec"
	"github.com/sundialhq/sundial/internal/testenv"
	"github.com/sundialhq/sundial/internal/timer"
)

// appOf is an app of the test's own: first, then the end of the test's unique name (an app
// name is at most 21 characters here, for the keys' sake).
func appOf(t *testing.T, first string) string {
	name := strings.ToLower(testenv.Unique(t))
	return first + name[max(0, len(name)-20):]
}

// idleInstance is an active instance of key, due next, on schedule under cal (nil: none):
// UTC, priority 3, a 20 s timeout, one retry after 1 s, a misfire runs once, and an action
// nothing answers (the jobs' tests never run it).
func idleInstance(key timer.Key, shards int, next time.Time, schedule string, cal *timer.Calendar) timer.Instance {
	return timer.Instance{Key: key, Active: true, Shard: timer.ShardOf(key, shards), NextRun: next,
		Settings: timer.Settings{Schedule: schedule, Timezone: "UTC", Priority: 3, Timeout: 20 * time.Second, MaxRetries: 1,
			RetryDelay: time.Second, Misfire: timer.MisfireRunOnce, Calendar: cal,
			Action: actionspec.Spec{HTTP: &actionspec.HTTPSpec{URL: "http://127.0.0.1:9/unused"}}}}
}
