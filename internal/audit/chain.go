package audit

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"time"
)

// The trail is one hash chain. Each record carries its sequence number (1, 2, … in the order
// the records were appended), the hash of the record before it (Prev; "" for the first) and
// its own hash, over its sequence number, Prev, where it is stored and its content. The
// chain's head (the last sequence number and hash, kept apart from the records) moves
// forward only from the value its writer read: appends serialise on it, and a record that is
// deleted, changed, inserted or moved breaks a link that Check names. As CloudTrail's digest
// files do for its logs, this detects tampering; it cannot prevent it, and whoever can
// rewrite every record from the tampered one on and the head (the table's administrator)
// can rewrite the chain itself. See docs/console.md, "Audit".

// Link is a record's place in the chain.
type Link struct {
	Seq  int64  // 1 for the chain's first record; 0: a record written before the chain
	Prev string // the previous record's Hash; "" for Seq 1
	Hash string // HashRecord(Seq, Prev, Key, Body)
}

// Head is the chain's last link as its writer left it.
type Head struct {
	Present bool
	Seq     int64
	Hash    string
	At      time.Time // the last record's time
	Start   time.Time // the first chained record's time (records before it are unchained)
}

// HashRecord is a record's hash: SHA-256 over its sequence number, the previous hash, its
// storage key (so that a record moved to another key no longer matches) and its content as
// stored.
func HashRecord(seq int64, prev, key, body string) string {
	h := sha256.New()
	for _, s := range []string{"sundial-audit-chain-v1", strconv.FormatInt(seq, 10), prev, key, body} {
		h.Write([]byte(s))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Next is the link that follows head for a record stored at key with body.
func Next(head Head, key, body string) Link {
	l := Link{Seq: head.Seq + 1, Prev: head.Hash}
	if !head.Present {
		l = Link{Seq: 1}
	}
	l.Hash = HashRecord(l.Seq, l.Prev, key, body)
	return l
}

// Entry is a stored audit item as Verify reads it.
type Entry struct {
	Key    string // partition/sort key, where it is stored
	Body   string // the record as stored (JSON)
	Record Record // decoded from Body (zero when it does not decode)
	Link
}

// Finding kinds.
const (
	Deleted  = "deleted"  // records of the chain are missing
	Changed  = "changed"  // a record is not what was appended
	Inserted = "inserted" // a record that was never appended
	HeadGone = "head"     // the chain's head is missing or disagrees with the records
)

// Finding is one break of the chain.
type Finding struct {
	Kind   string    `json:"kind"`
	Seq    int64     `json:"seq,omitempty"`    // the record's (the first missing one's for Deleted)
	Last   int64     `json:"last,omitempty"`   // Deleted: the last missing sequence number
	Key    string    `json:"key,omitempty"`    // where the record is (was) stored
	At     time.Time `json:"at,omitzero"`      // the record's time (Deleted: the time after which)
	Detail string    `json:"detail"`           // in words, naming the record
	Record *Record   `json:"record,omitempty"` // the record as it is now, when there is one
}

// Report is what Verify found between From and To.
type Report struct {
	From     time.Time `json:"from"`
	To       time.Time `json:"to"`
	Checked  int       `json:"checked"`  // chained records read
	First    int64     `json:"first"`    // their lowest sequence number (0: none)
	Last     int64     `json:"last"`     // their highest
	Head     Head      `json:"head"`     // the chain's head
	Legacy   int       `json:"legacy"`   // records from before the chain began (not checked)
	Findings []Finding `json:"findings"` // empty: the trail is intact
}

// OK reports whether nothing was found.
func (r Report) OK() bool { return len(r.Findings) == 0 }

// inFlight: a record beyond the head read at the start of Verify, but younger than this
// before it, was appended while Verify read; an older one was never appended by the writer.
const inFlight = time.Minute

// Check verifies the entries read from the window [from, to] against the head read before
// them (began: when the head was read). Records before the window are not read, so a
// deletion just before the window's first record shows only in a check that starts earlier.
func Check(entries []Entry, head Head, from, to, began time.Time) Report {
	rep := Report{From: from, To: to, Head: head, Findings: []Finding{}}
	var chained []Entry
	for _, e := range entries {
		if e.Seq > 0 {
			chained = append(chained, e)
			continue
		}
		if head.Present && !e.Record.At.Before(head.Start) {
			rep.add(Finding{Kind: Inserted, Key: e.Key, At: e.Record.At,
				Detail: "a record without a chain link, dated after the chain began: " + describe(e)}, &e)
		} else {
			rep.Legacy++
		}
	}
	slices.SortStableFunc(chained, func(a, b Entry) int { return cmp.Or(cmp.Compare(a.Seq, b.Seq), cmp.Compare(a.Key, b.Key)) })
	var prev *Entry
	for i := range chained {
		e := &chained[i]
		if head.Present && e.Seq > head.Seq {
			if !e.Record.At.IsZero() && e.Record.At.After(began.Add(-inFlight)) {
				continue // appended while this check read
			}
			rep.add(Finding{Kind: Inserted, Seq: e.Seq, Key: e.Key, At: e.Record.At,
				Detail: fmt.Sprintf("record #%d is beyond the chain's head (#%d): %s", e.Seq, head.Seq, describe(*e))}, e)
			continue
		}
		rep.Checked++
		if rep.First == 0 {
			rep.First = e.Seq
		}
		rep.Last = e.Seq
		selfOK := HashRecord(e.Seq, e.Prev, e.Key, e.Body) == e.Hash
		if !selfOK {
			rep.add(Finding{Kind: Changed, Seq: e.Seq, Key: e.Key, At: e.Record.At,
				Detail: fmt.Sprintf("record #%d does not match its hash: %s", e.Seq, describe(*e))}, e)
		}
		switch {
		case prev != nil && e.Seq == prev.Seq:
			rep.add(Finding{Kind: Inserted, Seq: e.Seq, Key: e.Key, At: e.Record.At,
				Detail: fmt.Sprintf("a second record #%d: %s (the first is at %s)", e.Seq, describe(*e), prev.Key)}, e)
			continue // keep prev: the first of the two is compared with what follows
		case prev != nil && e.Seq > prev.Seq+1:
			rep.add(Finding{Kind: Deleted, Seq: prev.Seq + 1, Last: e.Seq - 1, At: prev.Record.At,
				Detail: fmt.Sprintf("%s missing, between %s and %s", span(prev.Seq+1, e.Seq-1), describe(*prev), describe(*e))}, nil)
		case prev != nil && e.Prev != prev.Hash && selfOK:
			rep.add(Finding{Kind: Changed, Seq: prev.Seq, Key: prev.Key, At: prev.Record.At,
				Detail: fmt.Sprintf("record #%d is not the one #%d was appended after: %s", prev.Seq, e.Seq, describe(*prev))}, prev)
		case prev == nil && e.Seq == 1 && e.Prev != "" && selfOK:
			rep.add(Finding{Kind: Changed, Seq: 1, Key: e.Key, At: e.Record.At, Detail: "the chain's first record links to a record before it: " + describe(*e)}, e)
		}
		prev = e
	}
	switch {
	case !head.Present && len(chained) > 0:
		rep.add(Finding{Kind: HeadGone, Detail: "the chain's head is missing, though chained records exist (deleted?)"}, nil)
	case !head.Present:
	case prev == nil && head.Seq > 0 && !head.At.Before(from):
		rep.add(Finding{Kind: Deleted, Seq: 1, Last: head.Seq, At: from,
			Detail: fmt.Sprintf("no record of the window is left, though the head's last record #%d is dated %s", head.Seq, head.At.Format(time.RFC3339))}, nil)
	case prev == nil:
	case prev.Seq < head.Seq:
		rep.add(Finding{Kind: Deleted, Seq: prev.Seq + 1, Last: head.Seq, At: prev.Record.At,
			Detail: fmt.Sprintf("%s missing, after %s (the head is #%d)", span(prev.Seq+1, head.Seq), describe(*prev), head.Seq)}, nil)
	case prev.Hash != head.Hash && HashRecord(prev.Seq, prev.Prev, prev.Key, prev.Body) == prev.Hash:
		rep.add(Finding{Kind: Changed, Seq: prev.Seq, Key: prev.Key, At: prev.Record.At,
			Detail: fmt.Sprintf("the last record #%d is not the one the head names: %s", prev.Seq, describe(*prev))}, prev)
	}
	return rep
}

func (r *Report) add(f Finding, e *Entry) {
	for _, g := range r.Findings {
		if g.Kind == f.Kind && g.Seq == f.Seq && g.Key == f.Key && f.Key != "" {
			return // one finding per record and kind
		}
	}
	if e != nil && e.Record.Action != "" {
		rec := e.Record
		f.Record = &rec
	}
	r.Findings = append(r.Findings, f)
}

func span(a, b int64) string {
	if a == b {
		return fmt.Sprintf("record #%d is", a)
	}
	return fmt.Sprintf("records #%d..#%d (%d) are", a, b, b-a+1)
}

// describe names a record for a finding: its number, time, action, who and where.
func describe(e Entry) string {
	r := e.Record
	if r.Action == "" {
		return fmt.Sprintf("#%d at %s (not a readable record)", e.Seq, e.Key)
	}
	s := fmt.Sprintf("#%d %s %s by %s", e.Seq, r.At.Format(time.RFC3339), r.Action, r.Who)
	if r.App != "" || r.Timer != "" {
		s += " on " + r.App
		if r.Timer != "" {
			s += ":" + r.Timer
		}
	}
	return s + " (" + e.Key + ")"
}
