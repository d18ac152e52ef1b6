package emf_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/emf"
)

var t0 = time.Date(2026, 11, 23, 18, 0, 0, 0, time.UTC)

func clock() time.Time { return t0 }

// directive is a metric directive as CloudWatch reads it.
type directive struct {
	Namespace  string
	Dimensions [][]string
	Metrics    []struct{ Name, Unit string }
}

// parse checks one line against the EMF specification and returns its root members and
// directives: one JSON object, "_aws" with an integer Timestamp in ms and a non-empty
// CloudWatchMetrics array, directives with exactly Namespace, Dimensions and Metrics, every
// dimension a string member of the root and every metric a number member of the root, or an
// array of 1..100 numbers.
func parse(t *testing.T, line string) (map[string]any, []directive) {
	t.Helper()
	require.True(t, strings.HasPrefix(line, "{") && strings.HasSuffix(line, "}"), "one JSON object, nothing around it: %q", line)
	var root map[string]any
	dec := json.NewDecoder(strings.NewReader(line))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&root))
	require.False(t, dec.More())

	aws, ok := root["_aws"].(map[string]any)
	require.True(t, ok, "_aws is an object")
	require.ElementsMatch(t, []string{"Timestamp", "CloudWatchMetrics"}, keysOf(aws))
	ts, ok := aws["Timestamp"].(json.Number)
	require.True(t, ok, "Timestamp is a number")
	_, err := ts.Int64()
	require.NoError(t, err, "Timestamp is whole milliseconds")

	raw, err := json.Marshal(aws["CloudWatchMetrics"])
	require.NoError(t, err)
	var rawDirs []map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(raw, &rawDirs))
	require.NotEmpty(t, rawDirs)
	var dirs []directive
	for _, rd := range rawDirs {
		require.ElementsMatch(t, []string{"Namespace", "Dimensions", "Metrics"}, keysOf(rd))
		var d directive
		b, _ := json.Marshal(rd)
		require.NoError(t, json.Unmarshal(b, &d))
		require.NotEmpty(t, d.Namespace)
		require.NotEmpty(t, d.Dimensions, "Dimensions is an array of dimension sets")
		for _, set := range d.Dimensions {
			require.LessOrEqual(t, len(set), 30)
			for _, dim := range set {
				v, ok := root[dim].(string)
				require.True(t, ok && v != "", "dimension %s is a non-empty string member of the root", dim)
			}
		}
		require.NotEmpty(t, d.Metrics)
		require.LessOrEqual(t, len(d.Metrics), 100)
		for _, m := range d.Metrics {
			_, ok := root[m.Name].(json.Number)
			if arr, isArr := root[m.Name].([]any); isArr {
				require.NotEmpty(t, arr, m.Name)
				require.LessOrEqual(t, len(arr), 100, m.Name)
				for _, v := range arr {
					_, num := v.(json.Number)
					require.True(t, num, "metric %s: every element is a number", m.Name)
				}
				ok = true
			}
			require.True(t, ok, "metric %s is a number member of the root, or an array of numbers", m.Name)
			require.Contains(t, []string{"", "Count", "Milliseconds"}, m.Unit)
		}
		dirs = append(dirs, d)
	}
	return root, dirs
}

func keysOf[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

func lines(t *testing.T, b *bytes.Buffer) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(b)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}

func TestWriter(t *testing.T) {
	t.Parallel()

	t.Run("WritesOneDocumentPerLineWithTheSpecifiedStructure", func(t *testing.T) {
		t.Parallel()
		var buf bytes.Buffer
		w := emf.NewWriter(&buf, "Test", clock)
		require.NoError(t, w.Emit(emf.Record{
			Dimensions: map[string]string{"Outcome": "error", "Priority": "2"},
			Groups: []emf.Group{
				{DimensionSets: [][]string{{"Outcome"}, {"Outcome", "Priority"}}, Metrics: []emf.Metric{{Name: "Firings", Unit: emf.Count, Value: 1}}},
				{Metrics: []emf.Metric{{Name: "Lateness", Unit: emf.Milliseconds, Value: 12.5}}},
			},
			Properties: map[string]any{"function": "processor"},
		}))
		ls := lines(t, &buf)
		require.Len(t, ls, 1)
		root, dirs := parse(t, ls[0])
		require.Equal(t, json.Number(fmt.Sprint(t0.UnixMilli())), root["_aws"].(map[string]any)["Timestamp"])
		require.Equal(t, "processor", root["function"])
		require.Equal(t, json.Number("12.5"), root["Lateness"])
		require.Len(t, dirs, 2)
		require.Equal(t, "Test", dirs[0].Namespace)
		require.Equal(t, [][]string{{"Outcome"}, {"Outcome", "Priority"}}, dirs[0].Dimensions)
		require.Equal(t, [][]string{{}}, dirs[1].Dimensions, "no dimension sets: published without dimensions")
		require.Equal(t, "Milliseconds", dirs[1].Metrics[0].Unit)
	})

	t.Run("RefusesRecordsCloudWatchWouldDrop", func(t *testing.T) {
		t.Parallel()
		w := emf.NewWriter(&bytes.Buffer{}, "Test", clock)
		one := []emf.Metric{{Name: "M", Value: 1}}
		many := make([]emf.Metric, 101)
		for i := range many {
			many[i] = emf.Metric{Name: fmt.Sprint("M", i)}
		}
		wide := make([]string, 31)
		dims := map[string]string{}
		for i := range wide {
			wide[i] = fmt.Sprint("D", i)
			dims[wide[i]] = "x"
		}
		for name, r := range map[string]emf.Record{
			"NoMetric":                  {},
			"DimensionWithoutValue":     {Groups: []emf.Group{{DimensionSets: [][]string{{"Outcome"}}, Metrics: one}}},
			"MetricNamedLikeADimension": {Dimensions: map[string]string{"M": "x"}, Groups: []emf.Group{{Metrics: one}}},
			"MetricTwice":               {Groups: []emf.Group{{Metrics: one}, {Metrics: one}}},
			"MetricNamedAws":            {Groups: []emf.Group{{Metrics: []emf.Metric{{Name: "_aws"}}}}},
			"MoreThan100Metrics":        {Groups: []emf.Group{{Metrics: many}}},
			"MoreThan30Dimensions":      {Dimensions: dims, Groups: []emf.Group{{DimensionSets: [][]string{wide}, Metrics: one}}},
		} {
			_, err := w.Encode(r)
			require.Error(t, err, name)
		}
	})

	t.Run("ConcurrentEmitsStayWholeLines", func(t *testing.T) {
		t.Parallel()
		var buf bytes.Buffer
		r := emf.NewRecorder(&buf, clock)
		var wg sync.WaitGroup
		for range 50 {
			wg.Go(func() { r.ClaimLost() })
		}
		wg.Wait()
		ls := lines(t, &buf)
		require.Len(t, ls, 50)
		for _, l := range ls {
			parse(t, l)
		}
	})

	t.Run("ValuesAreAnArrayOfAtMostMaxValues", func(t *testing.T) {
		t.Parallel()
		w := emf.NewWriter(io.Discard, "NS", clock)
		vals := func(n int) []float64 { return make([]float64, n) }
		b, err := w.Encode(emf.Record{Groups: []emf.Group{{Metrics: []emf.Metric{{Name: "Lateness", Unit: emf.Milliseconds, Values: []float64{1.5, 2}}}}}})
		require.NoError(t, err)
		root, _ := parse(t, strings.TrimSuffix(string(b), "\n"))
		require.Equal(t, []any{json.Number("1.5"), json.Number("2")}, root["Lateness"])
		_, err = w.Encode(emf.Record{Groups: []emf.Group{{Metrics: []emf.Metric{{Name: "Lateness", Values: vals(emf.MaxValues + 1)}}}}})
		require.ErrorContains(t, err, "101 values")
	})
}

// TestRecorderBatchesFirings: firings wait for Flush and go out as one line per outcome and
// priority, counts summed and samples as arrays; a group that reaches MaxValues samples goes out
// at once, and concurrent firings lose none.
func TestRecorderBatchesFirings(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	r := emf.NewRecorder(&buf, clock)
	var wg sync.WaitGroup
	for i := range 150 {
		wg.Go(func() { r.Firing("success", 3, true, time.Duration(i)*time.Millisecond, time.Second) })
	}
	for range 3 {
		wg.Go(func() { r.Firing("missed", 3, false, 0, 0) })
	}
	wg.Wait()
	ls := lines(t, &buf)
	require.Len(t, ls, 1, "the first 100 samples of a group are written without waiting for Flush")
	r.Flush()
	r.Flush() // nothing left: writes nothing
	ls = append(ls, lines(t, &buf)...)
	require.Len(t, ls, 3)
	counts, samples := map[string]int{}, 0
	for _, l := range ls {
		root, _ := parse(t, l)
		n, err := root[emf.Firings].(json.Number).Int64()
		require.NoError(t, err)
		counts[root[emf.DimOutcome].(string)] += int(n)
		if lat, ok := root[emf.Lateness].([]any); ok {
			require.Len(t, root[emf.Duration], len(lat))
			require.EqualValues(t, n, len(lat), "one sample per firing that ran")
			samples += len(lat)
		}
	}
	require.Equal(t, map[string]int{"success": 150, "missed": 3}, counts)
	require.Equal(t, 150, samples)
}

// TestRecorder checks that every line the recorder writes publishes only catalogued metrics,
// each under exactly its catalogued unit and dimension sets, and that every catalogued metric
// is written by some method: the catalogue is what the template's alarms are checked against.
func TestRecorder(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	r := emf.NewRecorder(&buf, clock)
	r.Firing("success", 3, true, 1500*time.Millisecond, 2*time.Second)
	r.Firing("missed", 1, false, 0, 0)
	r.Flush()
	r.ClaimLost()
	r.ZombieDiscarded()
	r.MessageRejected()
	r.FiringsResent(2)
	r.FetchTick(7)
	r.Published(false)
	r.APIRequest(429)

	seen := map[string]bool{}
	var roots []map[string]any
	for _, l := range lines(t, &buf) {
		root, dirs := parse(t, l)
		roots = append(roots, root)
		for _, d := range dirs {
			require.Equal(t, emf.Namespace, d.Namespace)
			for _, m := range d.Metrics {
				def, ok := emf.Lookup(m.Name)
				require.True(t, ok, "metric %s is catalogued", m.Name)
				require.Equal(t, string(def.Unit), m.Unit, m.Name)
				require.Equal(t, def.DimensionSets, d.Dimensions, m.Name)
				seen[m.Name] = true
			}
		}
	}
	for _, def := range emf.Catalogue {
		require.True(t, seen[def.Name], "catalogued metric %s is emitted", def.Name)
	}
	require.Len(t, roots, 9)
	require.Equal(t, "missed", roots[0][emf.DimOutcome], "flushed by priority, then outcome")
	require.NotContains(t, roots[0], emf.Lateness, "a missed firing did not run: no lateness or duration")
	require.Equal(t, "success", roots[1][emf.DimOutcome])
	require.Equal(t, "3", roots[1][emf.DimPriority])
	require.Equal(t, []any{json.Number("1500")}, roots[1][emf.Lateness])
	require.Equal(t, []any{json.Number("2000")}, roots[1][emf.Duration])
	require.Equal(t, json.Number("2"), roots[5][emf.FiringsResent])
	require.Equal(t, json.Number("7"), roots[6][emf.FiringsSent])
	require.Equal(t, "error", roots[7][emf.DimOutcome])
	require.Equal(t, "4xx", roots[8][emf.DimStatusClass])
}
