package dynamo

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/timer"
)

func TestLogPages(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 23, 59, 30, 0, time.UTC)
	ex := func(name, id string, at time.Time) timer.Execution {
		return timer.Execution{Key: timer.Key{Timer: name, Tenant: "acme"}, ExecutionID: id, StartedAt: at}
	}
	a := ex("A", "a", t0)
	b := ex("B", "b", t0.Add(20*time.Second))
	c := ex("C", "c", t0.Add(40*time.Second)) // the next minute, and the next day
	d := ex("D", "d", t0.Add(10*time.Second))

	t.Run("OnePagePerMinuteNewestFirst", func(t *testing.T) {
		// What was tried: a batch over two minutes (and two days), one execution delivered twice.
		pages := logPages([]timer.Execution{a, b, c, d, b}, time.Hour)
		require.Len(t, pages, 2)
		require.Equal(t, "D#default#2026-11-25", pages[0].PK)
		require.Equal(t, b.Ref()+"|"+a.Ref(), pages[0].SK, "the largest Ref, then the smallest")
		require.Equal(t, "B@acme\t"+b.Ref()+"\nD@acme\t"+d.Ref()+"\nA@acme\t"+a.Ref(), pages[0].Refs, "newest first, each once")
		require.Equal(t, t0.Truncate(time.Minute).Add(time.Hour).Unix(), pages[0].ExpiresAt)
		require.Equal(t, "D#default#2026-11-26", pages[1].PK)
		require.Equal(t, c.Ref()+"|"+c.Ref(), pages[1].SK)
		refs, err := pages[0].refs()
		require.NoError(t, err)
		require.Equal(t, []pageRef{{"B@acme", b.Ref()}, {"D@acme", d.Ref()}, {"A@acme", a.Ref()}}, refs)
		require.Equal(t, b.Ref(), pages[0].maxRef())
	})
	t.Run("SameBatchSamePages", func(t *testing.T) {
		// A batch delivered again (in any order) writes the same items: same keys, same content.
		require.Equal(t, logPages([]timer.Execution{a, b, d}, time.Hour), logPages([]timer.Execution{d, a, b}, time.Hour))
	})
	t.Run("OtherGroupingOtherKey", func(t *testing.T) {
		// Two batches sharing their newest execution must not overwrite each other's page.
		p1 := logPages([]timer.Execution{a, b}, time.Hour)
		p2 := logPages([]timer.Execution{d, b}, time.Hour)
		require.NotEqual(t, p1[0].SK, p2[0].SK)
	})
	t.Run("LargeBatchSplits", func(t *testing.T) {
		var es []timer.Execution
		for i := range maxPageRefs + 7 {
			es = append(es, ex(fmt.Sprintf("T%04d", i), "x", t0.Add(time.Duration(i)*time.Millisecond)))
		}
		pages := logPages(es, time.Hour)
		require.Len(t, pages, 2)
		n := 0
		for _, p := range pages {
			refs, err := p.refs()
			require.NoError(t, err)
			n += len(refs)
			require.Less(t, len(p.Refs), 400_000)
		}
		require.Equal(t, maxPageRefs+7, n)
	})
	t.Run("MalformedPageIsAnError", func(t *testing.T) {
		// What was tried: a line without a tab, and a reference too short to hold a time.
		for _, refs := range []string{"A@acme", "A@acme\tshort"} {
			_, err := pageItem{PK: "D#default#2026-11-25", SK: "x", Refs: refs}.refs()
			require.ErrorContains(t, err, "malformed reference", refs)
		}
	})
}

func FuzzPageRefs(f *testing.F) {
	f.Add("A@acme\t2026-11-25T23:59:30.000Z#a\nB\t2026-11-25T23:59:50.000Z#b")
	f.Add("")
	f.Add("\t\n\t")
	f.Fuzz(func(t *testing.T, s string) {
		refs, err := pageItem{Refs: s}.refs()
		if err != nil {
			return
		}
		var lines []string
		for _, r := range refs {
			require.NotEmpty(t, r.instance)
			require.GreaterOrEqual(t, len(r.ref), len(logSortLayout))
			lines = append(lines, r.instance+"\t"+r.ref)
		}
		require.Equal(t, s, strings.Join(lines, "\n"), "what was read is what was written")
	})
}

// One app's failures of a day spread evenly over errShards errorsByDay partitions (by
// execution id), so that a partition's 1,000 write units a second do not cap one app's
// failures at 1,000 a second; the readers' partitions are the shards and the unsharded key.
func TestErrorsByDayShards(t *testing.T) {
	t.Parallel()
	count := map[string]int{}
	for i := range 4000 {
		e := timer.Execution{Key: timer.Key{App: "billing", Timer: "Hot"}, ExecutionID: testExecID(i), Outcome: timer.OutcomeError,
			StartedAt: time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)}
		count[toLogItem(e, time.Hour).ErrDay]++
	}
	require.Len(t, count, errShards)
	for pk, n := range count {
		require.Contains(t, errPKs("billing", "2026-11-25"), pk)
		require.InDelta(t, 4000/errShards, n, 4000/errShards/5, "%s: even spread", pk)
	}
	require.Equal(t, "billing#2026-11-25", errPKs("billing", "2026-11-25")[errShards], "entries written before the shards are read too")
}

// testExecID is an execution id like the processor's (20 characters of base32).
func testExecID(i int) string { return fmt.Sprintf("%020X", uint64(i)*0x9E3779B97F4A7C15) }
