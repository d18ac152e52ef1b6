package page_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/page"
)

// A page of large items ends under 1 MB whatever the size asked: items up to MaxItemBytes
// each, a page of 1,000 asked.
func TestPageUnder1MB(t *testing.T) {
	t.Parallel()
	for _, size := range []int{1 << 10, 100 << 10, 200 << 10, page.MaxItemBytes - 16} {
		b := page.NewBuilder[string](1000)
		n := 0
		for !b.Full() {
			require.NoError(t, b.Add(strings.Repeat("x", size)))
			n++
		}
		body, err := json.Marshal(b.Page(page.Cursor("s", n)))
		require.NoError(t, err)
		require.LessOrEqual(t, len(body), page.Limit1MB, "items of %d bytes: %d items", size, n)
		require.Greater(t, len(body), page.MaxBytes, "the page is filled to the bound, not cut short")
	}
}

// The page size: the default for 0, refused outside 1..max, with the reason.
func TestSize(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in      string
		want    int
		invalid bool
	}{{"", 50, false}, {"1", 1, false}, {"500", 500, false}, {"0", 0, true}, {"501", 0, true}, {"-3", 0, true}, {"x", 0, true}} {
		n, err := page.ParseSize(c.in, 50, 500)
		if c.invalid {
			require.ErrorIs(t, err, errkind.Invalid, c.in)
			require.Contains(t, err.Error(), "limit must be a number in 1..500")
			continue
		}
		require.NoError(t, err)
		require.Equal(t, c.want, n)
	}
}

// A cursor decodes to its position for its own listing only; made-up, cut and other
// listings' cursors are refused as invalid.
func TestCursor(t *testing.T) {
	t.Parallel()
	c := page.Cursor("tenants", "acme")
	var after string
	require.NoError(t, page.Decode(c, "tenants", &after))
	require.Equal(t, "acme", after)
	for _, bad := range []string{"x", c[:len(c)-3], page.Cursor("jobs", "acme"), "%%%"} {
		err := page.Decode(bad, "tenants", &after)
		require.ErrorIs(t, err, errkind.Invalid, bad)
		require.Contains(t, err.Error(), "not a cursor of this listing")
	}
}

// A keyed listing read page after page holds every item once, in order: pages end at their
// size or at the byte bound (large items), the last has no Next, and a cursor of another
// listing is refused.
func TestKeyed(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name      string
		items     int
		itemBytes int
		size      int
		pages     int
	}{
		{"by size", 7, 10, 3, 3},
		{"exactly full pages", 6, 10, 3, 3}, // the last page is empty: the store said more might follow
		{"by bytes", 9, 200 << 10, 100, 3},
		{"empty", 0, 10, 5, 1},
	} {
		var all []string
		for i := range c.items {
			all = append(all, fmt.Sprintf("%03d", i)+strings.Repeat("x", c.itemBytes))
		}
		read := func(after string, n int) ([]string, bool, error) {
			i := 0
			for i < len(all) && all[i] <= after {
				i++
			}
			end := min(i+n, len(all))
			return all[i:end], end-i == n, nil
		}
		var got []string
		cursor, pages := "", 0
		for {
			p, err := page.Keyed(c.size, "s", cursor, read, func(s string) string { return s })
			require.NoError(t, err, c.name)
			pages++
			require.LessOrEqual(t, len(p.Items), c.size, c.name)
			got = append(got, p.Items...)
			if p.Next == "" {
				break
			}
			cursor = p.Next
		}
		require.Equal(t, all, got, c.name)
		require.Equal(t, c.pages, pages, c.name)
	}
	_, err := page.Keyed(3, "s", page.Cursor("other", "x"), func(string, int) ([]string, bool, error) { return nil, false, nil }, func(s string) string { return s })
	require.ErrorIs(t, err, errkind.Invalid)
}
