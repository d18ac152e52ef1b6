package sundial_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/sundialhq/sundial"
	"github.com/sundialhq/sundial/infra/iam"
	"github.com/sundialhq/sundial/internal/ops"
)

// plain turns a template node into the JSON shape of a policy document, !Sub strings
// substituted from vars.
func plain(t *testing.T, n *yaml.Node, vars map[string]string) any {
	t.Helper()
	switch n.Kind {
	case yaml.MappingNode:
		m := map[string]any{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			m[n.Content[i].Value] = plain(t, n.Content[i+1], vars)
		}
		return m
	case yaml.SequenceNode:
		var out []any
		for _, c := range n.Content {
			out = append(out, plain(t, c, vars))
		}
		return out
	}
	s := n.Value
	if n.Tag == "!Sub" {
		for k, v := range vars {
			s = strings.ReplaceAll(s, "${"+k+"}", v)
		}
		require.NotContains(t, s, "${", "unsubstituted variable in %q", n.Value)
	}
	return s
}

// The managed policies the template exports, and the one-app policy docs/console.md shows,
// decide every Service Center route as they say: the viewer reads every app and operates
// none; the operator reads and operates every app; billing's operator reads every app and
// operates billing only.
func TestServiceCenterPolicies(t *testing.T) {
	t.Parallel()
	var doc yaml.Node
	require.NoError(t, yaml.Unmarshal(sundial.Template, &doc))
	vars := map[string]string{"AWS::Partition": "aws", "AWS::Region": "eu-west-1", "AWS::AccountId": "123456789012", "ServiceCenterApi": "a1b2c3"}
	role := func(name string, docs ...any) *iam.Role {
		r := &iam.Role{Name: name}
		for _, d := range docs {
			p, err := iam.ParseDocument(name, d)
			require.NoError(t, err)
			r.Policies = append(r.Policies, p)
		}
		return r
	}
	managed := func(logical string) *iam.Role {
		n := lookup(doc.Content[0], "Resources", logical, "Properties", "PolicyDocument")
		require.NotNil(t, n, logical)
		return role(logical, plain(t, n, vars))
	}
	viewer, operator := managed("ServiceCenterViewerPolicy"), managed("ServiceCenterOperatorPolicy")

	md, err := os.ReadFile("docs/console.md")
	require.NoError(t, err)
	m := regexp.MustCompile("(?s)operator of one app.*?```json\n(.*?)```").FindSubmatch(md)
	require.NotNil(t, m, "docs/console.md shows the policy of an operator of one app in a json block")
	var oneApp any
	require.NoError(t, yaml.Unmarshal(m[1], &oneApp))
	billing := role("billing-ops", oneApp)

	// Every operation of the table (internal/ops) the API serves, its IAM action on its
	// route's ARN: a read is allowed to the viewer and a change is not.
	for _, o := range ops.Table {
		if !o.API() || o.Name == ops.OpLoginLink {
			continue // the login link: the local console's bearer token only
		}
		for _, app := range []string{"billing", "shipping"} {
			path := strings.NewReplacer("{app}", app, "{name}", "acme").Replace(o.Route)
			call := iam.Call{Action: o.IAMAction, Resource: ops.InvokeARN("eu-west-1", "123456789012", "a1b2c3", "$default", o.Method, path)}
			ok, _ := viewer.Decide(call)
			require.Equal(t, o.Read(), ok, "viewer: %s (%s)", call, o.Name)
			ok, _ = operator.Decide(call)
			require.True(t, ok, "operator: %s (%s)", call, o.Name)
			ok, _ = billing.Decide(call)
			require.Equal(t, o.Read() || (app == "billing" && strings.Contains(o.Route, "{app}")), ok, "billing's operator: %s (%s)", call, o.Name)
		}
	}
}
