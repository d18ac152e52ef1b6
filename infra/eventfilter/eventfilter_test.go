package eventfilter

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// logWriterPattern is template.yaml's LogWriterFunction filter: records that end an execution.
var logWriterPattern = func() string {
	b, err := os.ReadFile(filepath.Join("..", "..", "template.yaml"))
	if err != nil {
		panic(err)
	}
	m := regexp.MustCompile(`(?m)^\s*- Pattern: '(.*)'\s*$`).FindSubmatch(b)
	if m == nil {
		panic("template.yaml: no filter pattern")
	}
	return string(m[1])
}()

func record(name string, oldImage, newImage string) string {
	r := `{"eventID":"1","eventName":"` + name + `","eventSource":"aws:dynamodb","dynamodb":{"Keys":{"pk":{"S":"t"}}`
	if oldImage != "" {
		r += `,"OldImage":` + oldImage
	}
	if newImage != "" {
		r += `,"NewImage":` + newImage
	}
	return r + `}}`
}

func TestMatch(t *testing.T) {
	t.Parallel()
	running := `{"pk":{"S":"t"},"execId":{"S":"e1"}}`
	idle := `{"pk":{"S":"t"},"lastExecId":{"S":"e1"}}`
	for _, c := range []struct {
		name, pattern, event string
		want                 bool
	}{
		{"finish passes the template's filter", logWriterPattern, record("MODIFY", running, idle), true},
		{"claim does not", logWriterPattern, record("MODIFY", idle, running), false},
		{"lease extension does not", logWriterPattern, record("MODIFY", running, running), false},
		{"edit does not", logWriterPattern, record("MODIFY", idle, idle), false},
		{"insert does not", logWriterPattern, record("INSERT", "", idle), false},
		{"remove of a running item does not", logWriterPattern, record("REMOVE", running, ""), false},
		{"execId of another type is not execId.S", logWriterPattern, record("MODIFY", `{"execId":{"N":"1"}}`, idle), false},

		{"exact string", `{"a":["x"]}`, `{"a":"x"}`, true},
		{"exact string, other value", `{"a":["x"]}`, `{"a":"y"}`, false},
		{"list of values is OR", `{"a":["x","y"]}`, `{"a":"y"}`, true},
		{"strings do not equal numbers", `{"a":["5"]}`, `{"a":5}`, false},
		{"numbers compare as numbers", `{"a":[5]}`, `{"a":5.0}`, true},
		{"numbers, other value", `{"a":[5]}`, `{"a":6}`, false},
		{"booleans", `{"a":[true]}`, `{"a":true}`, true},
		{"booleans, other value", `{"a":[true]}`, `{"a":false}`, false},
		{"null", `{"a":[null]}`, `{"a":null}`, true},
		{"null is not absent", `{"a":[null]}`, `{}`, false},
		{"exact on absent field", `{"a":["x"]}`, `{}`, false},
		{"event list: any element", `{"a":["x"]}`, `{"a":["z","x"]}`, true},
		{"event list: none", `{"a":["x"]}`, `{"a":["z"]}`, false},
		{"exists true", `{"a":[{"exists":true}]}`, `{"a":"v"}`, true},
		{"exists true, null value", `{"a":[{"exists":true}]}`, `{"a":null}`, true},
		{"exists true, absent", `{"a":[{"exists":true}]}`, `{"b":1}`, false},
		{"exists false, absent", `{"a":[{"exists":false}]}`, `{"b":1}`, true},
		{"exists false, present", `{"a":[{"exists":false}]}`, `{"a":1}`, false},
		{"exists false, parent absent", `{"p":{"a":[{"exists":false}]}}`, `{}`, true},
		{"exists true, parent absent", `{"p":{"a":[{"exists":true}]}}`, `{}`, false},
		{"exists matches leaves only", `{"p":[{"exists":true}]}`, `{"p":{"a":1}}`, false},
		{"exists true, empty list", `{"a":[{"exists":true}]}`, `{"a":[]}`, false},
		{"exists false, empty list", `{"a":[{"exists":false}]}`, `{"a":[]}`, true},
		{"nested: all fields must match", `{"p":{"a":["1"],"b":["2"]}}`, `{"p":{"a":"1","b":"2","c":"3"}}`, true},
		{"nested: one field fails", `{"p":{"a":["1"],"b":["2"]}}`, `{"p":{"a":"1","b":"3"}}`, false},
		{"nested under a leaf", `{"p":{"a":["1"]}}`, `{"p":"1"}`, false},
		{"nested under a list of objects", `{"p":{"a":["1"]}}`, `{"p":[{"a":"0"},{"a":"1"}]}`, true},
		{"exact or exists", `{"a":["x",{"exists":false}]}`, `{}`, true},
		{"empty pattern matches everything", `{}`, `{"a":1}`, true},
		{"case matters", `{"A":["x"]}`, `{"a":"x"}`, false},
	} {
		crit, err := Parse([]string{c.pattern})
		require.NoError(t, err, c.name)
		got, err := crit.MatchJSON([]byte(c.event))
		require.NoError(t, err, c.name)
		require.Equal(t, c.want, got, "%s: %s against %s", c.name, c.pattern, c.event)
	}
}

func TestAnyFilterMatches(t *testing.T) {
	t.Parallel()
	c, err := Parse([]string{`{"a":["1"]}`, `{"b":["2"]}`})
	require.NoError(t, err)
	require.True(t, c.Match(map[string]any{"b": "2"}))
	require.False(t, c.Match(map[string]any{"a": "2", "b": "1"}))
	var none *Criteria
	require.True(t, none.Match(map[string]any{}), "no criteria: every record passes")
	require.Equal(t, []string{`{"a":["1"]}`, `{"b":["2"]}`}, c.Patterns())
}

func TestParseRefuses(t *testing.T) {
	t.Parallel()
	for pattern, msg := range map[string]string{
		`{"a":[{"prefix":"x"}]}`:              `filter operator "prefix" is not emulated`,
		`{"a":[{"anything-but":["x"]}]}`:      `filter operator "anything-but" is not emulated`,
		`{"a":{"b":[{"numeric":[">",1]}]}}`:   `a.b: filter operator "numeric" is not emulated`,
		`{"a":[{"suffix":"x"}]}`:              `"suffix"`,
		`{"a":[{"equals-ignore-case":"x"}]}`:  `"equals-ignore-case"`,
		`{"a":[{"wildcard":"x*"}]}`:           `"wildcard"`,
		`{"a":[{"cidr":"10.0.0.0/8"}]}`:       `"cidr"`,
		`{"a":[{"exists":"yes"}]}`:            `"exists" takes true or false`,
		`{"a":[{"exists":true,"prefix":""}]}`: `one operator`,
		`{"a":"x"}`:                           `not "x"`,
		`{"a":[]}`:                            `empty list`,
		`{"a":[["x"]]}`:                       `not a value or a rule`,
		`["x"]`:                               `not a JSON object`,
		`{"a":`:                               `not JSON`,
		`{} {}`:                               `text after`,
	} {
		_, err := Parse([]string{pattern})
		require.ErrorContains(t, err, msg, pattern)
	}
	_, err := Parse(strings.Split("{},{},{},{},{},{}", ","))
	require.ErrorContains(t, err, "at most 5")
	c, err := Parse(nil)
	require.NoError(t, err)
	require.Nil(t, c)
}

// FuzzMatch: parsing and matching never panic; a pattern made of an event's own leaf values
// matches it, and the same pattern with every leaf asking for absence does not (unless the
// event has no leaf at all).
func FuzzMatch(f *testing.F) {
	f.Add(record("MODIFY", `{"pk":{"S":"t"},"execId":{"S":"e1"}}`, `{"pk":{"S":"t"}}`), logWriterPattern)
	f.Add(`{"a":[1,"x",true,null],"b":{"c":{}}}`, `{"a":[{"exists":true}]}`)
	f.Add(`{"a":{"b":[{"c":"d"}]}}`, `{"a":{"b":{"c":["d"]}}}`)
	f.Fuzz(func(t *testing.T, event, pattern string) {
		if c, err := Parse([]string{pattern}); err == nil {
			_, _ = c.MatchJSON([]byte(event))
		}
		var ev map[string]any
		if json.Unmarshal([]byte(event), &ev) != nil {
			return
		}
		present, absent, leaves := derive(ev)
		if present == nil {
			return
		}
		pb, _ := json.Marshal(present)
		c, err := Parse([]string{string(pb)})
		require.NoError(t, err, "%s", pb)
		require.True(t, c.Match(ev), "pattern %s from event %s", pb, event)
		if leaves > 0 {
			ab, _ := json.Marshal(absent)
			c, err = Parse([]string{string(ab)})
			require.NoError(t, err, "%s", ab)
			require.False(t, c.Match(ev), "pattern %s from event %s", ab, event)
		}
	})
}

// derive builds from an object two patterns: one requiring each leaf's own value (or its
// existence), one requiring every leaf's absence; and counts the leaves.
func derive(obj map[string]any) (present, absent map[string]any, leaves int) {
	present, absent = map[string]any{}, map[string]any{}
	for k, v := range obj {
		switch x := v.(type) {
		case map[string]any:
			p, a, n := derive(x)
			if n == 0 {
				continue
			}
			present[k], absent[k] = p, a
			leaves += n
		case []any:
			var vals []any
			for _, e := range x {
				switch e.(type) {
				case map[string]any, []any:
				default:
					vals = append(vals, e)
				}
			}
			if len(vals) == 0 {
				continue
			}
			present[k], absent[k] = vals, []any{map[string]any{"exists": false}}
			leaves++
		default:
			present[k], absent[k] = []any{x}, []any{map[string]any{"exists": false}}
			leaves++
		}
	}
	return present, absent, leaves
}
