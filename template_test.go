package sundial_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/sundialhq/sundial"
	"github.com/sundialhq/sundial/infra/sam"
)

// The limit on a timer's timeout comes from the processor function's own Timeout, and the
// functions learn it from the same parameter: no copy that can drift.
func TestProcessorTimeout(t *testing.T) {
	t.Parallel()
	d, err := sundial.ProcessorTimeout(sundial.Template, nil)
	require.NoError(t, err)
	require.Equal(t, 900*time.Second, d)
	d, err = sundial.ProcessorTimeout(sundial.Template, map[string]string{"ProcessorTimeoutSeconds": "60"})
	require.NoError(t, err)
	require.Equal(t, time.Minute, d)
	_, err = sundial.ProcessorTimeout(sundial.Template, map[string]string{"Nope": "1"})
	require.EqualError(t, err, "parameter Nope: the template declares no such parameter")

	_, err = sundial.ProcessorTimeout([]byte("Resources:\n  ProcessorFunction:\n    Properties:\n      Timeout: 120\n"), nil)
	require.NoError(t, err)
	_, err = sundial.ProcessorTimeout([]byte("Resources:\n  ApiFunction:\n    Properties:\n      Timeout: 120\n"), nil)
	require.EqualError(t, err, "template: ProcessorFunction has no Timeout")
	_, err = sundial.ProcessorTimeout(sundial.Template, map[string]string{"ProcessorTimeoutSeconds": "901"})
	require.EqualError(t, err, `parameter ProcessorTimeoutSeconds="901": above the maximum 900`)

	var doc yaml.Node
	require.NoError(t, yaml.Unmarshal(sundial.Template, &doc))
	root := doc.Content[0]
	timeout := lookup(root, "Resources", "ProcessorFunction", "Properties", "Timeout")
	env := lookup(root, "Globals", "Function", "Environment", "Variables", "SUNDIAL_PROCESSOR_TIMEOUT_SECONDS")
	require.NotNil(t, env, "every function is told the processor's timeout")
	require.Equal(t, "!Ref", timeout.Tag)
	require.Equal(t, timeout.Tag+" "+timeout.Value, env.Tag+" "+env.Value, "the variable and the processor's Timeout are one parameter")
}

// Every ARN the template builds names the stack's partition (${AWS::Partition}): a literal
// "arn:aws:" is wrong in aws-cn and aws-us-gov, where no policy or reference with it matches.
// Descriptions are prose for the operator and may show examples.
func TestTemplateARNsUseThePartition(t *testing.T) {
	t.Parallel()
	var doc yaml.Node
	require.NoError(t, yaml.Unmarshal(sundial.Template, &doc))
	literal := regexp.MustCompile(`arn:aws[a-z-]*:`)
	var found []string
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		switch n.Kind {
		case yaml.DocumentNode, yaml.SequenceNode:
			for i, c := range n.Content {
				walk(c, fmt.Sprintf("%s[%d]", path, i))
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == "Description" {
					continue
				}
				walk(n.Content[i+1], path+"."+n.Content[i].Value)
			}
		case yaml.ScalarNode:
			if literal.MatchString(n.Value) {
				found = append(found, fmt.Sprintf("%s (line %d): %s", path, n.Line, n.Value))
			}
		}
	}
	walk(&doc, "")
	require.Empty(t, found, "ARNs with a literal partition; use ${AWS::Partition}")
}

// The local endpoint answers every other short poll empty, as SQS's sampling may
// (infra/gateway/shortpoll.go), taking a request's WaitTimeSeconds 0 as a short poll: true
// while no queue sets ReceiveMessageWaitTimeSeconds, which would make its polls long.
func TestQueuesPollShortByDefault(t *testing.T) {
	t.Parallel()
	var doc yaml.Node
	require.NoError(t, yaml.Unmarshal(sundial.Template, &doc))
	resources := lookup(doc.Content[0], "Resources")
	require.NotNil(t, resources)
	queues := 0
	for i := 0; i+1 < len(resources.Content); i += 2 {
		name, res := resources.Content[i].Value, resources.Content[i+1]
		if typ := lookup(res, "Type"); typ == nil || typ.Value != "AWS::SQS::Queue" {
			continue
		}
		queues++
		require.Nil(t, lookup(res, "Properties", "ReceiveMessageWaitTimeSeconds"),
			"%s sets ReceiveMessageWaitTimeSeconds: teach infra/gateway/shortpoll.go the queue's own wait", name)
	}
	require.Positive(t, queues)
}

// lookup follows mapping keys from n.
func lookup(n *yaml.Node, path ...string) *yaml.Node {
	for _, key := range path {
		if n == nil || n.Kind != yaml.MappingNode {
			return nil
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				next = n.Content[i+1]
				break
			}
		}
		n = next
	}
	return n
}

// TestNoTemplateValueInGo: configuration has one source. No Go source outside the tests
// writes the template's functions' environment (a composite literal keyed by a variable the
// Globals give every function) or a parameter's default (a key named like the parameter, a
// string or a struct field, whose value is the default): they are read from the template
// (infra/sam, stack.Outputs.Env), whose parameters a deploy may change.
func TestNoTemplateValueInGo(t *testing.T) {
	t.Parallel()
	tpl, err := sam.ParseYAML(sundial.Template)
	require.NoError(t, err)
	defaults, err := tpl.Params(nil)
	require.NoError(t, err)
	fn, _ := tpl.Globals["Function"].(map[string]any)
	envProp, _ := fn["Environment"].(map[string]any)
	vars, _ := envProp["Variables"].(map[string]any)
	require.NotEmpty(t, vars)

	var copies []string
	fset := token.NewFileSet()
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if call, ok := n.(*ast.CallExpr); ok {
				copies = append(copies, defaultInCall(fset, call, defaults)...)
				return true
			}
			kv, ok := n.(*ast.KeyValueExpr)
			if !ok {
				return true
			}
			key := ""
			switch k := kv.Key.(type) {
			case *ast.BasicLit:
				key, _ = strconv.Unquote(k.Value)
			case *ast.Ident:
				key = k.Name
			}
			if _, ok := vars[key]; ok && key != "" {
				if _, lit := kv.Key.(*ast.BasicLit); lit {
					copies = append(copies, fmt.Sprintf("%s: %s: the template's Globals give every function this variable", fset.Position(kv.Pos()), key))
				}
			}
			def, isParam := defaults[key]
			if v, lit := kv.Value.(*ast.BasicLit); isParam && lit && def != "" {
				if s, err := strconv.Unquote(v.Value); (err == nil && s == def) || v.Value == def {
					copies = append(copies, fmt.Sprintf("%s: %s: %s is the template's default", fset.Position(kv.Pos()), key, v.Value))
				}
			}
			return true
		})
		return nil
	})
	require.NoError(t, err)
	require.Empty(t, copies, "values of template.yaml written again in Go; read them from the template")
}

// defaultInCall finds a call that names a template parameter in a string argument and passes
// the parameter's default as another, as in fs.Int("due-shards", 4, "template DueShards").
func defaultInCall(fset *token.FileSet, call *ast.CallExpr, defaults map[string]string) []string {
	var texts, values []string
	for _, arg := range call.Args {
		lit, ok := arg.(*ast.BasicLit)
		if !ok {
			continue
		}
		if s, err := strconv.Unquote(lit.Value); err == nil {
			texts, values = append(texts, s), append(values, s)
		} else {
			values = append(values, lit.Value)
		}
	}
	var out []string
	for _, text := range texts {
		for _, word := range strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			def, ok := defaults[word]
			if !ok || def == "" {
				continue
			}
			for _, v := range values {
				if v == def && v != text {
					out = append(out, fmt.Sprintf("%s: %s: %s is the template's default", fset.Position(call.Pos()), word, v))
				}
			}
		}
	}
	return out
}
