package manifest

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/itemsize"
)

// aliased is a manifest of n timers whose property p is one value of size bytes, written
// once (&big) and aliased (*big) by every other timer.
func aliased(n, size int) string {
	var b strings.Builder
	b.WriteString("timers:\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  - name: T%d\n    schedule: \"every 1h\"\n    action: {http: {url: \"http://h/\"}}\n", i)
		if i == 0 {
			fmt.Fprintf(&b, "    properties: {p: &big %s}\n", strings.Repeat("x", size))
		} else {
			b.WriteString("    properties: {p: *big}\n")
		}
	}
	return b.String()
}

// The attack: one 500 KB value aliased 600 times is a 540 KB file that yaml.v3's node-count
// guard lets through, and that a sync expanded into 2.27 GB. Check refuses it by its expanded
// size, without decoding it into 600 copies.
func TestParseRefusesAliasExpansion(t *testing.T) {
	t.Parallel()
	doc := aliased(600, 500<<10)
	require.Less(t, len(doc), MaxFileBytes)
	_, err := Parse(strings.NewReader(doc))
	require.ErrorIs(t, err, errkind.Invalid)
	require.ErrorContains(t, err, fmt.Sprintf("expands (its aliases *name replaced by their anchors' values) to more than %d bytes", MaxExpandedBytes))

	// Values small enough for an item, aliased past the bound: refused for the expansion alone.
	_, err = Parse(strings.NewReader(aliased(20, 300<<10)))
	require.ErrorContains(t, err, "expands")

	// Aliases within the bound are fine.
	m, err := Parse(strings.NewReader(aliased(10, 300<<10)))
	require.NoError(t, err)
	require.Len(t, m.Timers, 10)
	require.Len(t, m.Timers[9].Properties["p"], 300<<10)

	// Nested aliases (a billion laughs) are counted through each level.
	var b strings.Builder
	b.WriteString("a0: &a0 [" + strings.Repeat("x", 1000) + "]\n")
	for i := 1; i <= 12; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [*a%d, *a%d, *a%d, *a%d]\n", i, i, i-1, i-1, i-1, i-1)
	}
	b.WriteString("timers: []\n")
	_, err = Parse(strings.NewReader(b.String()))
	require.ErrorContains(t, err, "expands")
}

func propertyOf(size int, char string) string {
	return "timers:\n  - name: Big\n    schedule: \"every 1h\"\n    action: {http: {url: \"http://h/\"}}\n" +
		"    properties: {p: \"" + strings.Repeat(char, size) + "\"}\n"
}

// The attack: a property over DynamoDB's 400 KB item limit passed check and failed in sync.
// Check now counts the instance item as DynamoDB does and refuses it, naming timer and field;
// the largest property that fits is accepted, one byte more is not.
func TestParseRefusesItemsOverDynamoDBLimit(t *testing.T) {
	t.Parallel()
	_, err := Parse(strings.NewReader(propertyOf(410<<10, "x")))
	require.ErrorIs(t, err, errkind.Invalid)
	require.ErrorContains(t, err, `timers[0] "Big": properties/action: an instance would be a`)
	require.ErrorContains(t, err, fmt.Sprintf("over DynamoDB's %d-byte item limit", itemsize.MaxItemBytes))

	m, err := Parse(strings.NewReader(propertyOf(1, "x")))
	require.NoError(t, err)
	small, err := m.Timers[0].InstanceItemBytes()
	require.NoError(t, err)
	def, err := m.Timers[0].DefinitionItemBytes()
	require.NoError(t, err)
	fits := itemsize.MaxItemBytes - max(small, def) + 1 // the property's one byte is in both
	m, err = Parse(strings.NewReader(propertyOf(fits, "x")))
	require.NoError(t, err)
	n, err := m.Timers[0].InstanceItemBytes()
	require.NoError(t, err)
	d, err := m.Timers[0].DefinitionItemBytes()
	require.NoError(t, err)
	require.Equal(t, itemsize.MaxItemBytes, max(n, d))
	_, err = Parse(strings.NewReader(propertyOf(fits+1, "x")))
	require.ErrorContains(t, err, "over DynamoDB's")

	// UTF-8 counts in bytes, as DynamoDB does.
	_, err = Parse(strings.NewReader(propertyOf(fits/2+1, "é")))
	require.ErrorContains(t, err, "over DynamoDB's")
	_, err = Parse(strings.NewReader(propertyOf(fits/2-1, "é")))
	require.NoError(t, err)

	// The definition a sync stores is the entry's JSON, where < is 6 bytes (\u003c).
	_, err = Parse(strings.NewReader(propertyOf(100<<10, "<")))
	require.ErrorContains(t, err, "stored definition (its JSON) would be a")
}

// Check's walk of the aliases is linear: the attack manifest is refused quickly and without
// the memory its expansion would take.
func TestParseAliasCheckIsCheap(t *testing.T) {
	doc := aliased(600, 500<<10)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := Parse(strings.NewReader(doc))
	require.Error(t, err)
	runtime.ReadMemStats(&after)
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64<<20), "check allocated more than 64 MB for a 540 KB manifest")
}
