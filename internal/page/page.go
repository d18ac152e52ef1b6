// Package page is the shape every list of the API answers: a page of items and the opaque
// cursor of the next one ({items, next}), a page size a caller chooses within bounds, and a
// byte bound that keeps a page under 1 MB whatever the items' size.
package page

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/sundialhq/sundial/internal/errkind"
)

// Page is a page of a listing: Items, and Next, the cursor of the next page ("" after the
// last). A page may hold fewer items than asked (a filter, the byte bound) and still have a
// Next.
type Page[T any] struct {
	Items []T    `json:"items"`
	Next  string `json:"next,omitempty"`
}

// MaxBytes is where a page ends: once its items' JSON passes it, no item is added. With one
// item of at most MaxItemBytes after it, a page stays under 1 MB (1,048,576 bytes), the
// bound every list keeps (the Lambda response limit is 6 MB; a console page is rendered from
// it).
const (
	MaxBytes     = 768 << 10
	MaxItemBytes = 256 << 10
	Limit1MB     = 1 << 20
)

// Size is a page size: def when limit is 0, an error outside 1..max.
func Size(limit, def, max int) (int, error) {
	switch {
	case limit == 0:
		return def, nil
	case limit < 0 || limit > max:
		return 0, fmt.Errorf("%w: limit must be a number in 1..%d, not %d", errkind.Invalid, max, limit)
	}
	return limit, nil
}

// ParseSize is the query parameter limit: def when absent, else a number in 1..max.
func ParseSize(v string, def, max int) (int, error) {
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > max {
		return 0, fmt.Errorf("%w: limit must be a number in 1..%d, not %q", errkind.Invalid, max, v)
	}
	return n, nil
}

// Builder fills a page up to its size and the byte bound.
type Builder[T any] struct {
	size, bytes int
	page        Page[T]
}

// NewBuilder starts a page of up to size items.
func NewBuilder[T any](size int) *Builder[T] {
	return &Builder[T]{size: size, page: Page[T]{Items: []T{}}}
}

// Full says the page takes no more items (its size reached or its bytes past MaxBytes).
func (b *Builder[T]) Full() bool { return len(b.page.Items) >= b.size || b.bytes >= MaxBytes }

// Add adds v; it errs only when v cannot be written as JSON.
func (b *Builder[T]) Add(v T) error {
	j, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b.bytes += len(j) + 1
	b.page.Items = append(b.page.Items, v)
	return nil
}

// Len is how many items the page holds.
func (b *Builder[T]) Len() int { return len(b.page.Items) }

// Page is the page with next as its cursor.
func (b *Builder[T]) Page(next string) Page[T] {
	p := b.page
	p.Next = next
	return p
}

// Keyed is a page of up to size items of a listing read in key order, from cursor (the
// previous page's Next, a cursor of scope; "": the first page). read answers up to n items
// after the position after ("": from the start) and whether more follow them; key is an
// item's position. Items past the byte bound are left for the next page, which starts after
// the last item kept; the last page (or an empty one) has no Next.
func Keyed[T any](size int, scope, cursor string, read func(after string, n int) ([]T, bool, error), key func(T) string) (Page[T], error) {
	none := Page[T]{Items: []T{}}
	after := ""
	if cursor != "" {
		if err := Decode(cursor, scope, &after); err != nil {
			return none, err
		}
	}
	items, more, err := read(after, size)
	if err != nil {
		return none, err
	}
	b := NewBuilder[T](size)
	for _, v := range items {
		if b.Full() {
			more = true
			break
		}
		if err := b.Add(v); err != nil {
			return none, err
		}
		after = key(v)
	}
	if !more || b.Len() == 0 {
		return b.Page(""), nil
	}
	return b.Page(Cursor(scope, after)), nil
}

// Cursor encodes a listing's position v as an opaque cursor, valid for scope only (a
// cursor of one listing, or of the same listing with other filters, is refused).
func Cursor(scope string, v any) string {
	b, err := json.Marshal(struct {
		S string `json:"s"`
		V any    `json:"v"`
	}{scope, v})
	if err != nil {
		panic("page: cursor of " + scope + ": " + err.Error()) // our own positions are plain values
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// Decode reads into v the position a cursor of scope holds; a cursor that is not one (made
// up, cut, or another listing's) is an errkind.Invalid error that says so.
func Decode(cursor, scope string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(cursor)
	var c struct {
		S string          `json:"s"`
		V json.RawMessage `json:"v"`
	}
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	if err == nil && c.S != scope {
		err = fmt.Errorf("it is another listing's")
	}
	if err == nil {
		err = json.Unmarshal(c.V, v)
	}
	if err != nil {
		return fmt.Errorf("%w: cursor %q is not a cursor of this listing (pass the next of the previous page, with the same filters)", errkind.Invalid, clip(cursor))
	}
	return nil
}

func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
