package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/sundialhq/sundial/internal/suggest"
)

// fieldError is the error an UnmarshalYAML of ours returns for a bad value: a yaml.TypeError
// carries the node's line, so the decoder reports it with the others and yamlProblems can
// name the field it belongs to.
func fieldError(n *yaml.Node, format string, args ...any) error {
	return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: %s", n.Line, fmt.Sprintf(format, args...))}}
}

// yamlProblems rewrites a decode error of data into our words: a syntax error names the line
// where the document stops being YAML (yaml.v3 names the line the enclosing block started on,
// often lines earlier) with its text; each unmarshal error names its line, the entry and the
// field, and an unknown field the closest known one.
func yamlProblems(data []byte, err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) {
		var doc yaml.Node
		_ = yaml.Unmarshal(data, &doc) // it parsed, or there would be no unmarshal errors
		msgs := make([]string, 0, len(te.Errors))
		for _, e := range te.Errors {
			msgs = append(msgs, rewriteTypeError(&doc, e))
		}
		return errors.New(strings.Join(msgs, "; "))
	}
	return syntaxProblem(data, err)
}

var (
	lineRe      = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)
	unknownRe   = regexp.MustCompile(`^field (\S+) not found in type (\S+)$`)
	gotRe       = regexp.MustCompile(`got "(.*)"$`)
	unmarshalRe = regexp.MustCompile("^cannot unmarshal !!(\\w+) `(.*)` into (\\S+)$")
)

// maxSyntaxScan is how many lines from the block's start syntaxProblem tries one by one, and
// maxSyntaxScanBytes bounds the bytes all its parses read (past it, a large manifest's error
// is reported at yaml.v3's line).
const (
	maxSyntaxScan      = 64
	maxSyntaxScanBytes = 4 << 20
)

// syntaxProblem finds the first line at which a prefix of the document fails with the same
// problem as the whole, and reports that line.
func syntaxProblem(data []byte, err error) error {
	m := lineRe.FindStringSubmatch(err.Error())
	if m == nil {
		return fmt.Errorf("yaml: %s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	reported, _ := strconv.Atoi(m[1])
	problem := m[2]
	lines := bytes.SplitAfter(data, []byte("\n"))
	// fails says whether the first k lines fail with the problem; false once the budget of
	// bytes parsed is spent.
	scanned, spent := 0, false
	fails := func(k int) bool {
		prefix := bytes.Join(lines[:k], nil)
		if scanned += len(prefix); scanned > maxSyntaxScanBytes {
			spent = true
			return false
		}
		var n yaml.Node
		perr := yaml.Unmarshal(prefix, &n)
		if perr == nil {
			return false
		}
		pm := lineRe.FindStringSubmatch(perr.Error())
		return pm != nil && pm[2] == problem
	}
	found, first := 0, max(reported, 1)
	// Line by line near the block's start, where the problem usually is; beyond, the bracket
	// doubles and is then halved (a longer prefix of a failing one fails the same way).
	k := first
	for ; k <= len(lines) && k < first+maxSyntaxScan && !spent; k++ {
		if fails(k) {
			found = k
			break
		}
	}
	if found == 0 && !spent && k <= len(lines) {
		lo, step := k-1, 1
		hi := 0
		for !spent {
			c := min(lo+step, len(lines))
			if fails(c) {
				hi = c
				break
			}
			if c == len(lines) {
				break
			}
			lo, step = c, step*2
		}
		for hi > 0 && hi-lo > 1 && !spent {
			mid := (lo + hi) / 2
			if fails(mid) {
				hi = mid
			} else {
				lo = mid
			}
		}
		if !spent {
			found = hi
		}
	}
	if found == 0 {
		return fmt.Errorf("line %d: %s", reported, problem)
	}
	text := strings.TrimRight(string(lines[found-1]), "\r\n")
	msg := fmt.Sprintf("line %d: %s: %q", found, problem, text)
	if strings.Contains(problem, "expected key") || strings.Contains(problem, "indicator") ||
		strings.Contains(problem, "mapping values are not allowed") {
		msg += " (check its indentation against the lines above)"
	}
	return errors.New(msg)
}

// rewriteTypeError turns one of yaml.v3's unmarshal errors ("line 5: field retries not found in
// type manifest.Timer") into ours ("line 5: timers[0] "T": unknown field "retries"; did you
// mean "maxRetries"?").
func rewriteTypeError(doc *yaml.Node, e string) string {
	m := lineRe.FindStringSubmatch(e)
	if m == nil {
		return e
	}
	line, _ := strconv.Atoi(m[1])
	what := m[2]
	if u := unknownRe.FindStringSubmatch(what); u != nil {
		field, typ := u[1], u[2]
		where := pathTo(doc, func(n *yaml.Node) bool { return n.Line == line && n.Value == field }, true)
		msg := fmt.Sprintf("line %d: %sunknown field %q", line, prefix(where), field)
		known := knownFields()[typ]
		if best, ok := suggest.Closest(field, known); ok {
			return msg + fmt.Sprintf("; did you mean %q?", best)
		}
		if len(known) > 0 {
			return msg + fmt.Sprintf("; the fields here are %s", strings.Join(known, ", "))
		}
		return msg
	}
	got, hasGot := "", false
	if u := unmarshalRe.FindStringSubmatch(what); u != nil {
		got, hasGot = u[2], true
		what = fmt.Sprintf("want %s, got %q", wantOf(u[3]), u[2])
	} else if g := gotRe.FindStringSubmatch(what); g != nil {
		got, hasGot = g[1], true
	}
	// A line may hold several fields ({name: T, multiTenant: yes-please}): the value names it.
	where := ""
	if hasGot {
		where = pathTo(doc, func(n *yaml.Node) bool { return n.Line == line && n.Value == got }, false)
	}
	if where == "" {
		where = pathTo(doc, func(n *yaml.Node) bool { return n.Line == line }, false)
	}
	return fmt.Sprintf("line %d: %s%s", line, prefix(where), what)
}

func prefix(where string) string {
	if where == "" {
		return ""
	}
	return where + ": "
}

// wantOf names a Go type in a manifest writer's words.
func wantOf(goType string) string {
	switch {
	case strings.HasPrefix(goType, "int"), strings.HasPrefix(goType, "uint"):
		return "a whole number"
	case goType == "bool":
		return "true or false"
	case goType == "string":
		return "a text value"
	case strings.HasPrefix(goType, "[]"):
		return "a list"
	case strings.HasPrefix(goType, "map["):
		return "a mapping of names to values"
	}
	return "a mapping of fields (" + goType + ")"
}

// pathTo is the path ("timers[0] "T": action") to the mapping holding the key node match
// accepts (ofMapping), or to that key's own field (not ofMapping); "" when none matches.
func pathTo(doc *yaml.Node, match func(*yaml.Node) bool, ofMapping bool) string {
	var walk func(n *yaml.Node, path string) (string, bool)
	walk = func(n *yaml.Node, path string) (string, bool) {
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				if p, ok := walk(c, path); ok {
					return p, true
				}
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				p := fmt.Sprintf("%s[%d]", path, i)
				if name := nameOf(c); name != "" {
					p += fmt.Sprintf(" %q", name)
				}
				if r, ok := walk(c, p); ok {
					return r, true
				}
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				child := k.Value
				if path != "" {
					child = path + ": " + k.Value
				}
				if match(k) || (!ofMapping && v.Kind == yaml.ScalarNode && match(v)) {
					if ofMapping {
						return path, true
					}
					return child, true
				}
				if r, ok := walk(v, child); ok {
					return r, true
				}
			}
		}
		return "", false
	}
	p, _ := walk(doc, "")
	return p
}

// nameOf is a mapping's name: value, or "".
func nameOf(n *yaml.Node) string {
	if n.Kind != yaml.MappingNode {
		return ""
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "name" && n.Content[i+1].Kind == yaml.ScalarNode {
			return n.Content[i+1].Value
		}
	}
	return ""
}

// knownFields maps each struct type a manifest decodes into, as yaml.v3 names it
// ("manifest.Timer"), to its YAML keys in declaration order.
func knownFields() map[string][]string {
	out := map[string][]string{}
	var visit func(t reflect.Type)
	visit = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return
		}
		if _, seen := out[t.String()]; seen {
			return
		}
		if reflect.PointerTo(t).Implements(reflect.TypeFor[yaml.Unmarshaler]()) {
			return
		}
		out[t.String()] = nil
		out[t.String()] = keysOf(t, visit)
	}
	visit(reflect.TypeFor[Manifest]())
	for k := range out {
		if out[k] == nil {
			delete(out, k)
		}
	}
	return out
}

func keysOf(t reflect.Type, visit func(reflect.Type)) []string {
	var keys []string
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if strings.Contains(opts, "inline") {
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			keys = append(keys, keysOf(ft, visit)...)
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		keys = append(keys, name)
		visit(f.Type)
	}
	return keys
}
