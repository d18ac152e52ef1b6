package stack

import (
	"bytes"
	"reflect"
	"regexp"

	"gopkg.in/yaml.v3"
)

// blockScalar matches a line that opens a YAML block scalar ("key: |", "key: !Sub >-",
// "- |"): the lines indented deeper than it are its content, comment-like or not.
var blockScalar = regexp.MustCompile(`(^|:|-)\s*(![^\s]+\s+)?[|>][-+0-9]*\s*(#.*)?$`)

// compact drops a YAML template's full-line comments, which CloudFormation ignores, so that a
// template above CloudFormation's inline limit may still fit in a TemplateBody. Lines inside
// block scalars are kept whatever they start with. Should the result not decode to the same
// document (a multi-line quoted scalar with a line that starts with '#'), the body is returned
// unchanged.
func compact(body []byte) []byte {
	var out bytes.Buffer
	block := -1 // indentation of the line that opened the current block scalar, -1 outside one
	for _, line := range bytes.SplitAfter(body, []byte("\n")) {
		content := bytes.TrimRight(line, "\r\n")
		trimmed := bytes.TrimLeft(content, " ")
		indent := len(content) - len(trimmed)
		if block >= 0 {
			if len(trimmed) == 0 || indent > block {
				out.Write(line)
				continue
			}
			block = -1
		}
		if bytes.HasPrefix(trimmed, []byte("#")) {
			continue
		}
		if blockScalar.Match(content) {
			block = indent
		}
		out.Write(line)
	}
	var before, after any
	if yaml.Unmarshal(body, &before) != nil || yaml.Unmarshal(out.Bytes(), &after) != nil || !reflect.DeepEqual(before, after) {
		return body
	}
	return out.Bytes()
}
