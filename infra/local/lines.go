package local

import (
	"context"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/sundialhq/sundial/internal/timer"
)

// lineHandler passes every record the JSON handler enables (Info and up, as a function on
// Lambda logs by default) to it and prints a human line for each execution (and each recovery
// or rejected message) to out, successful executions included, which the engine logs at Debug.
type lineHandler struct {
	out   io.Writer
	mu    *sync.Mutex
	width *int // of the timer column: the longest name printed yet, at least minNameWidth
	next  slog.Handler
	attrs []slog.Attr
}

// minNameWidth fits the example timers' names (TenantReport@globex, billing:Invoices), so
// their columns line up from the first line; a longer name widens the column from then on.
const minNameWidth = 20

// maxNameWidth bounds the timer column: a longer name (names, apps and tenants go up to
// 128 characters each) is shortened by shortName, so that no line grows past a terminal's
// width because of one timer.
const maxNameWidth = 40

// shortName keeps a name of up to maxNameWidth characters; a longer one keeps its head
// (the app and the name's start) and its tail (the name's end, the shard, the tenant) with
// the middle replaced by "…XXXX…", XXXX four hex digits of a hash of the whole name, so that
// two long names that differ only in the middle still print differently. up.log has the
// names whole.
func shortName(name string) string {
	r := []rune(name)
	if len(r) <= maxNameWidth {
		return name
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(name))
	mid := fmt.Sprintf("…%04x…", h.Sum32()&0xffff)
	keep := maxNameWidth - utf8.RuneCountInString(mid)
	head := keep / 2
	return string(r[:head]) + mid + string(r[len(r)-(keep-head):])
}

func newLineHandler(out io.Writer, next slog.Handler) *lineHandler {
	w := minNameWidth
	return &lineHandler{out: out, mu: &sync.Mutex{}, width: &w, next: next}
}

func (h *lineHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelDebug || h.next.Enabled(ctx, l)
}

func (h *lineHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append(append([]slog.Attr{}, h.attrs...), as...)
	c.next = h.next.WithAttrs(as)
	return &c
}

func (h *lineHandler) WithGroup(name string) slog.Handler {
	c := *h
	c.next = h.next.WithGroup(name)
	return &c
}

func (h *lineHandler) Handle(ctx context.Context, r slog.Record) error {
	h.print(r)
	if !h.next.Enabled(ctx, r.Level) {
		return nil
	}
	return h.next.Handle(ctx, r)
}

// print writes r's human line, if it has one.
func (h *lineHandler) print(r slog.Record) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if line := h.line(r); line != "" {
		fmt.Fprintln(h.out, line)
	}
}

// line is r's human line ("" for none); h.mu is held.
func (h *lineHandler) line(r slog.Record) string {
	a := map[string]slog.Value{}
	for _, at := range h.attrs {
		a[at.Key] = at.Value
	}
	r.Attrs(func(at slog.Attr) bool { a[at.Key] = at.Value; return true })
	name := a["timer"].String()
	if app := a["app"].String(); app != "" && app != timer.DefaultApp {
		name = app + ":" + name // the instance's key, as timer.Key.String writes it
	}
	if t := a["tenant"].String(); t != "" {
		name += "@" + t
	}
	name = shortName(name)
	ts := r.Time.UTC().Format("15:04:05.000")
	*h.width = max(*h.width, utf8.RuneCountInString(name))
	switch r.Message {
	case "execution":
		// A time on another day than the line's carries its date (or a next run tomorrow reads as
		// today's); a backfill run's lateness is none (it is late by design).
		late := fmt.Sprintf("late %+dms", a["lateness_ms"].Int64())
		if b := a["backfill"]; b.Kind() == slog.KindBool && b.Bool() {
			late = "backfill"
		}
		s := fmt.Sprintf("%s %-*s %-9s scheduled %s attempt %s %s took %dms next %s",
			ts, *h.width, name, a["outcome"].String(), clockOn(a["scheduled_at"], r.Time), a["attempt"].String(),
			late, a["duration_ms"].Int64(), clockOn(a["next_run"], r.Time))
		if e := a["error"].String(); e != "" {
			s += "  error: " + oneLine(e)
		}
		if a["gave_up"].Bool() {
			s += "  (gave up: back on schedule)"
		}
		return s
	case "recovered execution":
		return fmt.Sprintf("%s %-*s recovered execution %s by %s (lease expired)", ts, *h.width, name, a["execution_id"].String(), a["running_by"].String())
	case "processor: rejected message", "processor: unknown timer; message will go to the dead-letter queue":
		return fmt.Sprintf("%s %s: %s", ts, r.Message, oneLine(a["error"].String()))
	}
	return ""
}

// clockOn is clock with the date when the time is on another (UTC) day than ref.
func clockOn(v slog.Value, ref time.Time) string {
	var t time.Time
	switch {
	case v.Kind() == slog.KindTime:
		t = v.Time()
	case v.Kind() == slog.KindAny:
		t, _ = v.Any().(time.Time)
	}
	if !t.IsZero() && !ref.IsZero() {
		if y, m, d := t.UTC().Date(); ref.UTC().Year() != y || ref.UTC().Month() != m || ref.UTC().Day() != d {
			return t.UTC().Format("2006-01-02 15:04:05.000")
		}
	}
	return clock(v)
}

func clock(v slog.Value) string {
	if v.Kind() == slog.KindTime {
		if t := v.Time(); !t.IsZero() {
			return t.UTC().Format("15:04:05.000")
		}
		return "none"
	}
	if v.Kind() == slog.KindAny {
		if t, ok := v.Any().(time.Time); ok {
			if t.IsZero() {
				return "none"
			}
			return t.UTC().Format("15:04:05.000")
		}
	}
	return v.String()
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}
