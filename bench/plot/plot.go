// Package plot draws the benchmark's charts as SVG with the standard library: XY charts
// (lines, points, reference lines, shaded spans; linear or log axes) and stacked bar charts.
// It is deliberately small: what the report needs, legible, no dependency.
package plot

import (
	"bytes"
	"fmt"
	"html"
	"math"
	"strconv"
)

// Palette is used in order by series and bar parts.
var Palette = []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"}

// Geometry of every chart: size and margins in pixels.
const (
	width, height                    = 1000, 480
	left, right, top, bottom         = 80, 320, 50, 60
	plotWidth, plotHeight            = width - left - right, height - top - bottom
	fontFamily                       = "Helvetica, Arial, sans-serif"
	legendX                          = width - right + 20
	maxPointsPerSeries               = 4000
	pointRadius                      = 1.6
	tickCount                        = 6
	minLogValue              float64 = 1e-300
)

// XY is a chart of series against two numeric axes.
type XY struct {
	Title, XLabel, YLabel string
	XLog, YLog            bool
	// Bounds; NaN (the default from NewXY) means "fit the data".
	XMin, XMax, YMin, YMax float64
	series                 []series
	spans                  []span
	refs                   []ref
}

type series struct {
	name   string
	x, y   []float64
	points bool
	color  string
}

type span struct {
	x0, x1 float64
	label  string
}

type ref struct {
	y     float64
	label string
	color string
}

// NewXY returns an empty chart with bounds fitted to the data.
func NewXY(title, xLabel, yLabel string) *XY {
	nan := math.NaN()
	return &XY{Title: title, XLabel: xLabel, YLabel: yLabel, XMin: nan, XMax: nan, YMin: nan, YMax: nan}
}

// Line adds a polyline.
func (c *XY) Line(name string, x, y []float64) { c.add(name, x, y, false) }

// Points adds a scatter series (thinned to a few thousand points, evenly).
func (c *XY) Points(name string, x, y []float64) { c.add(name, x, y, true) }

func (c *XY) add(name string, x, y []float64, points bool) {
	n := min(len(x), len(y))
	x, y = x[:n], y[:n]
	if points && n > maxPointsPerSeries {
		step := float64(n) / maxPointsPerSeries
		var tx, ty []float64
		for f := 0.0; int(f) < n; f += step {
			tx, ty = append(tx, x[int(f)]), append(ty, y[int(f)])
		}
		x, y = tx, ty
	}
	c.series = append(c.series, series{name: name, x: x, y: y, points: points, color: Palette[len(c.series)%len(Palette)]})
}

// HLine adds a horizontal reference line.
func (c *XY) HLine(label string, y float64) {
	c.refs = append(c.refs, ref{y: y, label: label, color: Palette[(len(c.series)+len(c.refs))%len(Palette)]})
}

// Span shades [x0, x1] (e.g. the measured window).
func (c *XY) Span(label string, x0, x1 float64) { c.spans = append(c.spans, span{x0, x1, label}) }

// SVG renders the chart.
func (c *XY) SVG() []byte {
	xs, ys := []float64{}, []float64{}
	for _, s := range c.series {
		xs, ys = append(xs, s.x...), append(ys, s.y...)
	}
	for _, sp := range c.spans {
		xs = append(xs, sp.x0, sp.x1)
	}
	for _, r := range c.refs {
		ys = append(ys, r.y)
	}
	xa := newAxis(xs, c.XMin, c.XMax, c.XLog, 0, plotWidth)
	ya := newAxis(ys, c.YMin, c.YMax, c.YLog, plotHeight, 0)
	var b bytes.Buffer
	header(&b, c.Title)
	for _, sp := range c.spans {
		x0, x1 := xa.pos(sp.x0), xa.pos(sp.x1)
		fmt.Fprintf(&b, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="#000" fill-opacity="0.06"/>`+"\n", left+x0, top, x1-x0, plotHeight)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" font-size="11" fill="#555">%s</text>`+"\n", left+x0+4, top+14, esc(sp.label))
	}
	axes(&b, xa, ya, c.XLabel, c.YLabel)
	fmt.Fprintf(&b, `<svg x="%d" y="%d" width="%d" height="%d" overflow="hidden">`+"\n", left, top, plotWidth, plotHeight)
	for _, s := range c.series {
		if s.points {
			for i := range s.x {
				if ok(s.x[i], c.XLog) && ok(s.y[i], c.YLog) {
					fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="%.1f" fill="%s" fill-opacity="0.5"/>`+"\n", xa.pos(s.x[i]), ya.pos(s.y[i]), pointRadius, s.color)
				}
			}
			continue
		}
		var pts bytes.Buffer
		for i := range s.x {
			if ok(s.x[i], c.XLog) && ok(s.y[i], c.YLog) {
				fmt.Fprintf(&pts, "%.1f,%.1f ", xa.pos(s.x[i]), ya.pos(s.y[i]))
			}
		}
		fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="1.8"/>`+"\n", pts.String(), s.color)
	}
	for _, r := range c.refs {
		y := ya.pos(r.y)
		fmt.Fprintf(&b, `<line x1="0" x2="%d" y1="%.1f" y2="%.1f" stroke="%s" stroke-width="1.5" stroke-dasharray="6 4"/>`+"\n", plotWidth, y, y, r.color)
	}
	b.WriteString("</svg>\n")
	var legend []legendItem
	for _, s := range c.series {
		legend = append(legend, legendItem{s.name, s.color, s.points, false})
	}
	for _, r := range c.refs {
		legend = append(legend, legendItem{r.label, r.color, false, true})
	}
	legendBox(&b, legend)
	b.WriteString("</svg>\n")
	return b.Bytes()
}

func ok(v float64, log bool) bool {
	return !math.IsNaN(v) && !math.IsInf(v, 0) && (!log || v > 0)
}

// Bars is a chart of stacked bars, one per group.
type Bars struct {
	Title, YLabel string
	YLog          bool
	groups        []group
	parts         []string // part names in first-seen order: one color each
	notes         map[int]string
}

type group struct {
	label  string
	values map[string]float64
}

// NewBars returns an empty bar chart.
func NewBars(title, yLabel string) *Bars {
	return &Bars{Title: title, YLabel: yLabel, notes: map[int]string{}}
}

// Bar adds a bar made of parts stacked in the given order (name, value, name, value, …).
func (c *Bars) Bar(label string, parts ...any) {
	g := group{label: label, values: map[string]float64{}}
	for i := 0; i+1 < len(parts); i += 2 {
		name := parts[i].(string)
		g.values[name] += toFloat(parts[i+1])
		if !contains(c.parts, name) {
			c.parts = append(c.parts, name)
		}
	}
	c.groups = append(c.groups, g)
}

// Note writes text above the last bar added (e.g. its total).
func (c *Bars) Note(text string) { c.notes[len(c.groups)-1] = text }

// SVG renders the chart.
func (c *Bars) SVG() []byte {
	var totals []float64
	for _, g := range c.groups {
		t := 0.0
		for _, v := range g.values {
			t += v
		}
		totals = append(totals, t)
	}
	lo := 0.0
	if c.YLog {
		// A decade below the smallest part, so that the smallest bar still shows.
		lo = math.NaN()
		for _, g := range c.groups {
			for _, v := range g.values {
				if v > 0 && (math.IsNaN(lo) || v < lo) {
					lo = v
				}
			}
		}
		lo /= 10
	}
	ya := newAxis(append(totals, lo), math.NaN(), math.NaN(), c.YLog, plotHeight, 0)
	if !c.YLog {
		ya = newAxis(append(totals, 0), 0, math.NaN(), false, plotHeight, 0)
	}
	var b bytes.Buffer
	header(&b, c.Title)
	yAxis(&b, ya, c.YLabel)
	n := len(c.groups)
	slot := float64(plotWidth) / float64(max(n, 1))
	bw := math.Min(slot*0.6, 120)
	for i, g := range c.groups {
		x := float64(left) + slot*float64(i) + (slot-bw)/2
		base := 0.0
		for j, name := range c.parts {
			v := g.values[name]
			if v <= 0 {
				continue
			}
			from, to := base, base+v
			y0 := ya.pos(from)
			if c.YLog && from == 0 {
				y0 = float64(plotHeight)
			}
			y1 := ya.pos(to)
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s: %s</title></rect>`+"\n",
				x, float64(top)+y1, bw, math.Max(y0-y1, 0.5), Palette[j%len(Palette)], esc(name), fmtNum(v))
			base = to
		}
		if note := c.notes[i]; note != "" {
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle" font-size="12">%s</text>`+"\n", x+bw/2, float64(top)+ya.pos(base)-6, esc(note))
		}
		label(&b, x+bw/2, float64(top+plotHeight+18), g.label)
	}
	var legend []legendItem
	for j, name := range c.parts {
		legend = append(legend, legendItem{name, Palette[j%len(Palette)], false, false})
	}
	legendBox(&b, legend)
	b.WriteString("</svg>\n")
	return b.Bytes()
}

// label writes a centered x label, on two lines if it holds "\n".
func label(b *bytes.Buffer, x, y float64, s string) {
	for i, line := range splitLines(s) {
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle" font-size="12">%s</text>`+"\n", x, y+float64(i)*14, esc(line))
	}
}

func splitLines(s string) []string {
	var out []string
	start := 0
	for i := range len(s) {
		if s[i] == '\n' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

type legendItem struct {
	name   string
	color  string
	point  bool
	dashed bool
}

func legendBox(b *bytes.Buffer, items []legendItem) {
	for i, it := range items {
		y := top + 10 + i*20
		switch {
		case it.point:
			fmt.Fprintf(b, `<circle cx="%d" cy="%d" r="4" fill="%s"/>`+"\n", legendX+8, y, it.color)
		case it.dashed:
			fmt.Fprintf(b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="2" stroke-dasharray="6 4"/>`+"\n", legendX, legendX+16, y, y, it.color)
		default:
			fmt.Fprintf(b, `<rect x="%d" y="%d" width="16" height="10" fill="%s"/>`+"\n", legendX, y-5, it.color)
		}
		fmt.Fprintf(b, `<text x="%d" y="%d" font-size="12">%s</text>`+"\n", legendX+22, y+4, esc(it.name))
	}
}

func header(b *bytes.Buffer, title string) {
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="%s">`+"\n", width, height, width, height, fontFamily)
	fmt.Fprintf(b, `<rect width="%d" height="%d" fill="#fff"/>`+"\n", width, height)
	fmt.Fprintf(b, `<text x="%d" y="28" font-size="16" font-weight="bold">%s</text>`+"\n", left, esc(title))
}

func axes(b *bytes.Buffer, xa, ya axis, xLabel, yLabel string) {
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#333"/>`+"\n", left, top, plotWidth, plotHeight)
	for _, t := range xa.ticks() {
		x := float64(left) + xa.pos(t)
		fmt.Fprintf(b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#ddd"/>`+"\n", x, x, top, top+plotHeight)
		fmt.Fprintf(b, `<text x="%.1f" y="%d" text-anchor="middle" font-size="11">%s</text>`+"\n", x, top+plotHeight+16, fmtNum(t))
	}
	fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="middle" font-size="13">%s</text>`+"\n", left+plotWidth/2, height-18, esc(xLabel))
	yAxis(b, ya, yLabel)
}

func yAxis(b *bytes.Buffer, ya axis, yLabel string) {
	for _, t := range ya.ticks() {
		y := float64(top) + ya.pos(t)
		fmt.Fprintf(b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", left, left+plotWidth, y, y)
		fmt.Fprintf(b, `<text x="%d" y="%.1f" text-anchor="end" font-size="11">%s</text>`+"\n", left-6, y+4, fmtNum(t))
	}
	fmt.Fprintf(b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="#333"/>`+"\n", left, left, top, top+plotHeight)
	fmt.Fprintf(b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="#333"/>`+"\n", left, left+plotWidth, top+plotHeight, top+plotHeight)
	fmt.Fprintf(b, `<text transform="translate(20,%d) rotate(-90)" text-anchor="middle" font-size="13">%s</text>`+"\n", top+plotHeight/2, esc(yLabel))
}

// axis maps data values to pixels [p0, p1] (p0 for the minimum).
type axis struct {
	lo, hi float64
	log    bool
	p0, p1 float64
}

func newAxis(vals []float64, lo, hi float64, log bool, p0, p1 int) axis {
	dlo, dhi := math.Inf(1), math.Inf(-1)
	for _, v := range vals {
		if ok(v, log) {
			dlo, dhi = math.Min(dlo, v), math.Max(dhi, v)
		}
	}
	if math.IsInf(dlo, 1) {
		dlo, dhi = 0, 1
		if log {
			dlo = 1
		}
	}
	if math.IsNaN(lo) {
		lo = dlo
		if log {
			lo = math.Pow(10, math.Floor(math.Log10(dlo)))
		} else if lo > 0 && lo < dhi/3 {
			lo = 0
		}
	}
	if math.IsNaN(hi) {
		hi = dhi
		if log {
			hi = math.Pow(10, math.Ceil(math.Log10(math.Max(dhi, minLogValue))))
		} else {
			hi = niceCeil(hi + (hi-lo)*0.05)
		}
	}
	if hi <= lo {
		hi = lo + 1
		if log {
			hi = lo * 10
		}
	}
	return axis{lo: lo, hi: hi, log: log, p0: float64(p0), p1: float64(p1)}
}

func (a axis) pos(v float64) float64 {
	var f float64
	if a.log {
		f = (math.Log10(v) - math.Log10(a.lo)) / (math.Log10(a.hi) - math.Log10(a.lo))
	} else {
		f = (v - a.lo) / (a.hi - a.lo)
	}
	return a.p0 + f*(a.p1-a.p0)
}

func (a axis) ticks() []float64 {
	var out []float64
	if a.log {
		for e := math.Floor(math.Log10(a.lo)); e <= math.Ceil(math.Log10(a.hi)); e++ {
			if v := math.Pow(10, e); v >= a.lo*0.999 && v <= a.hi*1.001 {
				out = append(out, v)
			}
		}
		return out
	}
	step := niceStep((a.hi - a.lo) / tickCount)
	for v := math.Ceil(a.lo/step) * step; v <= a.hi+step*1e-9; v += step {
		out = append(out, v)
	}
	return out
}

func niceStep(raw float64) float64 {
	if raw <= 0 {
		return 1
	}
	e := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*e >= raw {
			return m * e
		}
	}
	return 10 * e
}

func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	s := niceStep(v / tickCount)
	return math.Ceil(v/s) * s
}

func fmtNum(v float64) string {
	a := math.Abs(v)
	switch {
	case v == 0:
		return "0"
	case a >= 1e6:
		return strconv.FormatFloat(v/1e6, 'g', 4, 64) + "M"
	case a >= 1e4:
		return strconv.FormatFloat(v/1e3, 'g', 4, 64) + "k"
	case a >= 0.01:
		return strconv.FormatFloat(v, 'g', 4, 64)
	default:
		return strconv.FormatFloat(v, 'g', 2, 64)
	}
}

func toFloat(v any) float64 {
	switch v := v.(type) {
	case float64:
		return v
	case int:
		return float64(v)
	case int64:
		return float64(v)
	}
	panic(fmt.Sprintf("plot: not a number: %T", v))
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

func esc(s string) string { return html.EscapeString(s) }
