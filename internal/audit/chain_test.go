package audit

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)

// chain appends n records as the writer does and returns them with the head.
func chain(t *testing.T, n int) ([]Entry, Head) {
	t.Helper()
	var head Head
	var out []Entry
	for i := range n {
		r := Record{ID: fmt.Sprintf("id%02d", i), At: t0.Add(time.Duration(i) * time.Hour), Who: "ann", Action: RunNow, App: "billing", Timer: fmt.Sprintf("T%d", i)}
		out = append(out, entry(t, r, &head))
	}
	return out, head
}

func entry(t *testing.T, r Record, head *Head) Entry {
	t.Helper()
	b, err := json.Marshal(r)
	require.NoError(t, err)
	key := "AUDIT#" + r.At.Format(time.DateOnly) + "/" + r.At.Format(time.RFC3339) + "#" + r.ID
	l := Next(*head, key, string(b))
	if !head.Present {
		head.Start = r.At
	}
	head.Present, head.Seq, head.Hash, head.At = true, l.Seq, l.Hash, r.At
	return Entry{Key: key, Body: string(b), Record: r, Link: l}
}

func kinds(r Report) string {
	var s []string
	for _, f := range r.Findings {
		s = append(s, fmt.Sprintf("%s#%d", f.Kind, f.Seq))
		if f.Last > f.Seq {
			s[len(s)-1] += fmt.Sprintf("..%d", f.Last)
		}
	}
	return strings.Join(s, " ")
}

func TestCheck(t *testing.T) {
	t.Parallel()
	from, to, began := t0.Add(-time.Hour), t0.Add(24*time.Hour), t0.Add(24*time.Hour)
	alter := func(e *Entry) {
		e.Body = strings.Replace(e.Body, `"who":"ann"`, `"who":"bob"`, 1)
		e.Record.Who = "bob"
	}
	for name, tc := range map[string]struct {
		tamper func(es []Entry, h *Head) []Entry
		want   string
	}{
		"intact":               {func(es []Entry, h *Head) []Entry { return es }, ""},
		"a middle record gone": {func(es []Entry, h *Head) []Entry { return append(es[:2], es[3:]...) }, "deleted#3"},
		"two in a row gone":    {func(es []Entry, h *Head) []Entry { return append(es[:1], es[3:]...) }, "deleted#2..3"},
		"the last record gone": {func(es []Entry, h *Head) []Entry { return es[:4] }, "deleted#5"},
		"every record gone":    {func(es []Entry, h *Head) []Entry { return nil }, "deleted#1..5"},
		"content changed":      {func(es []Entry, h *Head) []Entry { alter(&es[1]); return es }, "changed#2"},
		"changed, hash redone": {func(es []Entry, h *Head) []Entry {
			alter(&es[1])
			es[1].Hash = HashRecord(2, es[1].Prev, es[1].Key, es[1].Body)
			return es
		}, "changed#2"},
		"last changed, redone": {func(es []Entry, h *Head) []Entry {
			alter(&es[4])
			es[4].Hash = HashRecord(5, es[4].Prev, es[4].Key, es[4].Body)
			return es
		}, "changed#5"},
		"moved to another key": {func(es []Entry, h *Head) []Entry { es[2].Key = "AUDIT#2026-11-24/x"; return es }, "changed#3"},
		"head deleted":         {func(es []Entry, h *Head) []Entry { *h = Head{}; return es }, "head#0"},
		"unchained one added": {func(es []Entry, h *Head) []Entry {
			return append(es, Entry{Key: "k", Body: "{}", Record: Record{At: t0.Add(time.Hour), Action: Edit}})
		}, "inserted#0"},
		"a second #3": {func(es []Entry, h *Head) []Entry {
			d := es[2]
			alter(&d)
			d.Key += "x"
			d.Hash = HashRecord(3, d.Prev, d.Key, d.Body)
			return append(es, d)
		}, "inserted#3"},
		"beyond the head, old": {func(es []Entry, h *Head) []Entry { h.Seq, h.Hash = 4, es[3].Hash; return es }, "inserted#5"},
		"first record relinked": {func(es []Entry, h *Head) []Entry {
			es[0].Prev = "x"
			es[0].Hash = HashRecord(1, "x", es[0].Key, es[0].Body)
			return es
		}, "changed#1"},
	} {
		t.Run(name, func(t *testing.T) {
			es, head := chain(t, 5)
			es = tc.tamper(es, &head)
			rep := Check(es, head, from, to, began)
			require.Equal(t, tc.want, kinds(rep), "%+v", rep.Findings)
			require.Equal(t, tc.want == "", rep.OK())
		})
	}

	t.Run("NamesTheRecord", func(t *testing.T) {
		es, head := chain(t, 3)
		alter(&es[1])
		rep := Check(es, head, from, to, began)
		require.Len(t, rep.Findings, 1)
		require.Contains(t, rep.Findings[0].Detail, "run-now by bob on billing:T1")
		require.Equal(t, es[1].Key, rep.Findings[0].Key)
		es, head = chain(t, 3)
		rep = Check(append(es[:1], es[2:]...), head, from, to, began)
		require.Contains(t, rep.Findings[0].Detail, "record #2 is missing, between #1 ")
	})

	t.Run("RecordsAppendedWhileCheckingAreNotFindings", func(t *testing.T) {
		es, head := chain(t, 3)
		old := head
		more := entry(t, Record{ID: "new", At: began.Add(-time.Second), Who: "ann", Action: Edit}, &head)
		rep := Check(append(es, more), old, from, to, began)
		require.True(t, rep.OK(), "%+v", rep.Findings)
		require.Equal(t, 3, rep.Checked)
	})

	t.Run("RecordsBeforeTheChainAreLegacy", func(t *testing.T) {
		es, head := chain(t, 2)
		legacy := Entry{Key: "old", Body: "{}", Record: Record{At: t0.Add(-30 * time.Minute), Action: Edit}}
		rep := Check(append([]Entry{legacy}, es...), head, from, to, began)
		require.True(t, rep.OK(), "%+v", rep.Findings)
		require.Equal(t, 1, rep.Legacy)
	})

	t.Run("AWindowAfterTheFirstRecords", func(t *testing.T) {
		es, head := chain(t, 5)
		rep := Check(es[2:], head, t0.Add(2*time.Hour), to, began)
		require.True(t, rep.OK(), "%+v", rep.Findings)
		require.Equal(t, int64(3), rep.First)
		rep = Check(nil, head, t0.Add(10*time.Hour), to, began) // nothing recorded since
		require.True(t, rep.OK(), "%+v", rep.Findings)
	})
}
