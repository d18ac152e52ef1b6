package timer_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/sundialhq/sundial/internal/timer"
)

// BenchmarkSort measures the fetch's ordering of one tick's due instances (priority, then
// shorter previous duration, then longer wait) at sizes from one batch to a busy tick. Each
// iteration sorts a fresh copy of the same shuffled input; the copy is part of the timing.
func BenchmarkSort(b *testing.B) {
	now := time.Date(2026, 11, 21, 18, 15, 0, 0, time.UTC)
	for _, n := range []int{10, 1_000, 10_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			src := dueInstances(n, now)
			work := make([]timer.Instance, n)
			b.ReportAllocs()
			for b.Loop() {
				copy(work, src)
				timer.Sort(work, now)
			}
		})
	}
}

// dueInstances returns n instances due within the two minutes before now, with mixed
// priorities and previous durations (many ties on both, as real timers have).
func dueInstances(n int, now time.Time) []timer.Instance {
	r := rand.New(rand.NewPCG(1, 2))
	ins := make([]timer.Instance, n)
	for i := range ins {
		ins[i] = timer.Instance{
			Key:          timer.Key{Timer: fmt.Sprintf("T%05d", i)},
			Settings:     timer.Settings{Schedule: "every 5s", Priority: 1 + r.IntN(4), Timeout: time.Minute},
			Active:       true,
			NextRun:      now.Add(-time.Duration(r.IntN(120_000)) * time.Millisecond),
			LastDuration: time.Duration(r.IntN(20)) * 10 * time.Millisecond,
		}
	}
	return ins
}
