package plot_test

import (
	"bytes"
	"encoding/xml"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/bench/plot"
)

// wellFormed parses the whole document as XML.
func wellFormed(t *testing.T, svg []byte) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(svg))
	for {
		_, err := d.Token()
		if err == io.EOF {
			return
		}
		require.NoError(t, err)
	}
}

func TestXY(t *testing.T) {
	t.Parallel()

	t.Run("DrawsSeriesReferencesAndSpans", func(t *testing.T) {
		t.Parallel()
		c := plot.NewXY("Lateness <p99>", "time (s)", "lateness (s)")
		c.Line("sustained & offered", []float64{0, 1, 2}, []float64{1, 3, 2})
		c.Points("samples", []float64{0.5, 1.5}, []float64{2, 2.5})
		c.HLine("ceiling", 2.8)
		c.Span("window", 0.5, 1.5)
		svg := c.SVG()
		wellFormed(t, svg)
		s := string(svg)
		require.Contains(t, s, "Lateness &lt;p99&gt;", "text is escaped")
		require.Contains(t, s, "sustained &amp; offered")
		require.Contains(t, s, "<polyline")
		require.Equal(t, 2+1, strings.Count(s, "<circle"), "two points and one legend mark")
		require.Contains(t, s, "stroke-dasharray")
	})

	t.Run("LogAxesSkipValuesTheyCannotShow", func(t *testing.T) {
		t.Parallel()
		c := plot.NewXY("CDF", "lateness (s)", "fraction")
		c.XLog = true
		c.Line("run", []float64{0, 0.001, 0.1, 10, math.NaN()}, []float64{0, 0.1, 0.5, 1, 1})
		svg := c.SVG()
		wellFormed(t, svg)
		require.NotContains(t, string(svg), "NaN")
		require.NotContains(t, string(svg), "Inf")
	})

	t.Run("ThinsLargeScatters", func(t *testing.T) {
		t.Parallel()
		x := make([]float64, 50_000)
		for i := range x {
			x[i] = float64(i)
		}
		c := plot.NewXY("many", "x", "y")
		c.Points("p", x, x)
		require.LessOrEqual(t, strings.Count(string(c.SVG()), "<circle"), 4001+1)
	})

	t.Run("EmptyChartStillRenders", func(t *testing.T) {
		t.Parallel()
		wellFormed(t, plot.NewXY("empty", "x", "y").SVG())
	})
}

func TestBars(t *testing.T) {
	t.Parallel()
	for _, log := range []bool{false, true} {
		c := plot.NewBars("Cost per million firings", "USD")
		c.YLog = log
		c.Bar("Sundial", "DynamoDB", 5.0, "SQS", 0.14, "Lambda", 0.02)
		c.Note("$5.16")
		c.Bar("EventBridge\nScheduler", "Scheduler", 1.0)
		c.Bar("naive", "DynamoDB", 5.0, "SQS", 1.2, "Lambda", 2)
		svg := c.SVG()
		wellFormed(t, svg)
		s := string(svg)
		require.Equal(t, 3+1+3+4, strings.Count(s, "<rect")-1, "besides the background: 7 bar parts, 4 legend marks")
		require.Contains(t, s, "$5.16")
		require.Contains(t, s, ">Scheduler</text>", "two-line labels")
	}
}
