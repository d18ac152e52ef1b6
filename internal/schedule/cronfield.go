package schedule

import (
	"fmt"
	"strings"
)

// cronField describes one field of a cron dialect.
type cronField struct {
	name     string
	min, max int
	names    []string // case-insensitive; names[i] stands for nameBase+i
	nameBase int
	base     int    // a value v is bit v-base of the parsed set
	note     string // appended to range errors, e.g. the day-of-week numbering
	// hashMin..hashMax is the range H picks from (spread.go); hashMax 0: H is refused.
	hashMin, hashMax int
}

// fieldParser parses the text of one field; errors name the field and its text.
type fieldParser struct {
	expr string
	dl   *cronDialect
	f    *cronField
	text string
	sp   *spreader
	idx  int // the item's position in the list, for H
}

func (p *fieldParser) errf(format string, args ...any) error {
	return invalid(p.expr, "%s field %q: %s", p.f.name, p.text, fmt.Sprintf(format, args...))
}

func (p *fieldParser) expected() string {
	s := fmt.Sprintf("a number %d-%d", p.f.min, p.f.max)
	if p.f.names != nil {
		s += fmt.Sprintf(" or a name %s-%s", p.f.names[0], p.f.names[len(p.f.names)-1])
	}
	return s + p.f.note
}

// values parses a comma-separated list of "*", "v", "a-b", each optionally with
// "/step", and (Quartz) "/step" alone for "*/step".
func (p *fieldParser) values() ([4]uint64, error) {
	var set [4]uint64
	switch {
	case strings.Contains(p.text, "?"):
		return set, p.errf(`"?" is only allowed in the day-of-month or day-of-week field of the Quartz and cron(...) forms`)
	case strings.Contains(p.text, "#"):
		return set, p.errf(`"#" is only allowed in the day-of-week field of the Quartz and cron(...) forms`)
	}
	for i, item := range strings.Split(p.text, ",") {
		p.idx = i
		lo, hi, step, err := p.item(item)
		if err != nil {
			return set, err
		}
		for v := lo; v <= hi; v += step {
			b := v - p.f.base
			set[b/64] |= 1 << (b % 64)
		}
	}
	return set, nil
}

func (p *fieldParser) item(item string) (lo, hi, step int, err error) {
	if item == "" {
		return 0, 0, 0, p.errf("empty value in the list; expected %s", p.expected())
	}
	rng, stepText, hasStep := strings.Cut(item, "/")
	lo, hi, step = p.f.min, p.f.max, 1
	switch {
	case strings.HasPrefix(rng, "H"):
		return p.hashItem(rng, stepText, hasStep, fmt.Sprintf("%s/%d", p.f.name, p.idx))
	case rng == "*":
	case rng == "" && hasStep:
		if !p.dl.leadingSlash {
			return 0, 0, 0, p.errf(`expected a value or "*" before "/" in %q (a bare "/N" is Quartz shorthand)`, item)
		}
	default:
		a, b, isRange := strings.Cut(rng, "-")
		if lo, err = p.value(a); err != nil {
			return 0, 0, 0, err
		}
		switch {
		case isRange:
			if hi, err = p.value(b); err != nil {
				return 0, 0, 0, err
			}
			if lo > hi {
				return 0, 0, 0, p.errf("range %q runs backwards; write it as a list, as in \"%d-%d,%d-%d\"", rng, lo, p.f.max, p.f.min, hi)
			}
		case !hasStep:
			hi = lo
		}
	}
	if hasStep {
		n, ok := parseUint(stepText)
		if !ok || n == 0 {
			return 0, 0, 0, p.errf("step %q must be a positive integer", stepText)
		}
		// Quartz refuses a step larger than the field's largest value ("/60" in seconds or
		// minutes, "/24" in hours); a year step larger than the years it can span is as useless.
		limit := int64(p.f.max)
		if p.f.base != 0 {
			limit = int64(p.f.max - p.f.min + 1)
		}
		if n > limit {
			return 0, 0, 0, p.errf("step %d is larger than the field's largest value %d (range %d-%d)", n, limit, p.f.min, p.f.max)
		}
		step = int(n)
	}
	return lo, hi, step, nil
}

// value reads one number or name.
func (p *fieldParser) value(s string) (int, error) {
	if n, ok := parseUint(s); ok {
		if n < int64(p.f.min) || n > int64(p.f.max) {
			return 0, p.errf("%q out of range %d-%d%s", s, p.f.min, p.f.max, p.f.note)
		}
		return int(n), nil
	}
	for i, name := range p.f.names {
		if strings.EqualFold(s, name) {
			return p.f.nameBase + i, nil
		}
	}
	if s == "" {
		return 0, p.errf("missing value; expected %s", p.expected())
	}
	return 0, p.errf("unexpected %q; expected %s", s, p.expected())
}

// parseUint accepts plain decimal digits, saturating values too large to matter.
func parseUint(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return 0, false
		}
		n = min(n*10+int64(s[i]-'0'), 1<<40)
	}
	return n, true
}
