// Package termsafe makes text safe to print on a terminal. Text that reaches the CLI's
// output from outside — an action's error body, a timer's properties, a DLQ message — may
// carry control sequences (ESC, BEL, CR, C1 controls) that a terminal would obey: rewrite
// the window title, move the cursor, overwrite a line with a fake "success". Every control
// character is shown as a visible \u00XX escape instead (the JSON spelling, so JSON output
// stays valid), as are invalid UTF-8 bytes (\xHH) and the Unicode bidirectional overrides
// that reorder what is displayed.
package termsafe

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode/utf8"
)

// String escapes every control character, newline and tab included: for one-line fields
// (a table cell, a log line's error).
func String(s string) string { return escape(s, false) }

// Text escapes control characters but keeps newlines and tabs: for multi-line output.
func Text(s string) string { return escape(s, true) }

func escape(s string, keepLayout bool) string {
	if safe(s, keepLayout) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case keepLayout && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func safe(s string, keepLayout bool) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size <= 1) || (unsafeRune(r) && !(keepLayout && (r == '\n' || r == '\t'))) {
			return false
		}
		i += size
	}
	return true
}

// unsafeRune: C0 controls, DEL, C1 controls, and the bidirectional embeddings, overrides
// and isolates.
func unsafeRune(r rune) bool {
	return r < 0x20 || (r >= 0x7f && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

// Writer escapes everything written through it with Text. A UTF-8 sequence split across
// writes is held back until it is complete. Safe for concurrent use.
type Writer struct {
	mu      sync.Mutex
	w       io.Writer
	pending []byte
}

// NewWriter wraps w (a terminal, or anything that may be one).
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	data := append(w.pending, p...)
	w.pending = nil
	// Hold back an incomplete trailing sequence: at most 3 bytes that start a rune.
	for k := 1; k <= 3 && k <= len(data); k++ {
		tail := data[len(data)-k:]
		if utf8.RuneStart(tail[0]) {
			if !utf8.FullRune(tail) {
				w.pending = append([]byte(nil), tail...)
				data = data[:len(data)-k]
			}
			break
		}
	}
	if _, err := io.WriteString(w.w, Text(string(data))); err != nil {
		return 0, err
	}
	return len(p), nil
}
