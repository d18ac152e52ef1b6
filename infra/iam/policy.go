// Package iam checks AWS calls against IAM policies as AWS would: a call is allowed when a
// statement of the caller's policies allows its action on every resource it touches and no
// statement denies it. The local platform gives each function its own role (the policies
// the template's SAM translation gives it) and refuses what that role does not allow, with
// the AccessDenied answer AWS sends, so the engine's real failure path runs.
//
// Conditions are modelled for the keys and operators in conditions.go (dynamodb:LeadingKeys
// with StringEquals or StringLike, single- or ForAllValues:); a policy with any other
// condition is refused when loaded, so it cannot pass silently. What is not modelled:
// NotAction/NotResource, resource policies, permission boundaries, SCPs and session policies.
package iam

import (
	"fmt"
	"strings"
)

// Statement is one statement of a policy document, actions and resources evaluated.
type Statement struct {
	Sid       string
	Effect    string // Allow or Deny
	Actions   []string
	Resources []string
	// Conditions must all hold for the statement to apply (conditions.go).
	Conditions []Condition
}

// Policy is a named policy document.
type Policy struct {
	Name       string
	Statements []Statement
}

// Role is an identity's set of policies.
type Role struct {
	Name     string // the role's logical ID in the template
	Arn      string
	Policies []Policy
}

// ParseDocument reads a policy document (its JSON shape, with intrinsic functions already
// evaluated): Statement is a statement or a list; Action and Resource strings or lists.
func ParseDocument(name string, doc any) (Policy, error) {
	m, ok := doc.(map[string]any)
	if !ok {
		return Policy{}, fmt.Errorf("policy %s: the document is not an object", name)
	}
	p := Policy{Name: name}
	var stmts []any
	switch s := m["Statement"].(type) {
	case []any:
		stmts = s
	case map[string]any:
		stmts = []any{s}
	default:
		return Policy{}, fmt.Errorf("policy %s: no Statement", name)
	}
	for i, raw := range stmts {
		sm, ok := raw.(map[string]any)
		if !ok {
			return Policy{}, fmt.Errorf("policy %s statement %d: not an object", name, i)
		}
		for _, unsupported := range []string{"NotAction", "NotResource", "NotPrincipal"} {
			if _, has := sm[unsupported]; has {
				return Policy{}, fmt.Errorf("policy %s statement %d: %s is not modelled by the local IAM check", name, i, unsupported)
			}
		}
		st := Statement{Sid: str(sm["Sid"]), Effect: str(sm["Effect"]), Actions: strs(sm["Action"]), Resources: strs(sm["Resource"])}
		if c, has := sm["Condition"]; has {
			conds, err := parseConditions(c)
			if err != nil {
				return Policy{}, fmt.Errorf("policy %s statement %d: %w", name, i, err)
			}
			st.Conditions = conds
		}
		if st.Effect != "Allow" && st.Effect != "Deny" {
			return Policy{}, fmt.Errorf("policy %s statement %d: Effect %q", name, i, st.Effect)
		}
		if len(st.Actions) == 0 || len(st.Resources) == 0 {
			return Policy{}, fmt.Errorf("policy %s statement %d: needs Action and Resource", name, i)
		}
		p.Statements = append(p.Statements, st)
	}
	return p, nil
}

func str(v any) string { s, _ := v.(string); return s }

func strs(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}

// Managed are the AWS managed policies SAM attaches to function roles, with the statements
// AWS gives them (as published in the AWS Managed Policy Reference).
var Managed = map[string]Policy{
	"arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole": {Name: "AWSLambdaBasicExecutionRole", Statements: []Statement{
		{Effect: "Allow", Actions: []string{"logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"}, Resources: []string{"*"}},
	}},
	"arn:aws:iam::aws:policy/service-role/AWSLambdaSQSQueueExecutionRole": {Name: "AWSLambdaSQSQueueExecutionRole", Statements: []Statement{
		{Effect: "Allow", Actions: []string{"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes", "logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"}, Resources: []string{"*"}},
	}},
	"arn:aws:iam::aws:policy/service-role/AWSLambdaDynamoDBExecutionRole": {Name: "AWSLambdaDynamoDBExecutionRole", Statements: []Statement{
		{Effect: "Allow", Actions: []string{"dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator", "dynamodb:ListStreams", "logs:CreateLogGroup", "logs:CreateLogStream", "logs:PutLogEvents"}, Resources: []string{"*"}},
	}},
}

// Call is one authorization request: an action on a resource.
type Call struct {
	Action   string // service:Operation, e.g. dynamodb:UpdateItem
	Resource string // an ARN
	// LeadingKey is the item's partition key value (dynamodb:LeadingKeys) of a single-item
	// DynamoDB call, when KeyKnown.
	LeadingKey string
	KeyKnown   bool
}

func (c Call) String() string { return c.Action + " on " + c.Resource }

// Grant identifies one (action pattern, resource pattern) pair of an Allow statement.
type Grant struct {
	Policy, Sid, Action, Resource string
}

func (g Grant) String() string {
	sid := g.Sid
	if sid == "" {
		sid = "(no Sid)"
	}
	return fmt.Sprintf("%s/%s: %s on %s", g.Policy, sid, g.Action, g.Resource)
}

// Decide evaluates a call against the role: allowed, and the Allow grants that matched.
func (r *Role) Decide(c Call) (allowed bool, matched []Grant) {
	for _, p := range r.Policies {
		for _, st := range p.Statements {
			for _, a := range st.Actions {
				if !ActionMatch(a, c.Action) {
					continue
				}
				for _, res := range st.Resources {
					if !ResourceMatch(res, c.Resource) || !conditionsHold(st.Conditions, c) {
						continue
					}
					if st.Effect == "Deny" {
						return false, nil
					}
					matched = append(matched, Grant{Policy: p.Name, Sid: st.Sid, Action: a, Resource: res})
				}
			}
		}
	}
	return len(matched) > 0, matched
}

// Grants lists every (action, resource) pair the role's own Allow statements give (managed
// policies excluded: they are AWS's, not the template's).
func (r *Role) Grants() []Grant {
	var out []Grant
	for _, p := range r.Policies {
		if _, managed := managedNames[p.Name]; managed {
			continue
		}
		for _, st := range p.Statements {
			if st.Effect != "Allow" {
				continue
			}
			for _, a := range st.Actions {
				for _, res := range st.Resources {
					out = append(out, Grant{Policy: p.Name, Sid: st.Sid, Action: a, Resource: res})
				}
			}
		}
	}
	return out
}

var managedNames = func() map[string]bool {
	m := map[string]bool{}
	for _, p := range Managed {
		m[p.Name] = true
	}
	return m
}()

// ActionMatch matches an action against a pattern: case-insensitive, with * and ?.
func ActionMatch(pattern, action string) bool {
	return wildcard(strings.ToLower(pattern), strings.ToLower(action))
}

// ResourceMatch matches an ARN against a pattern: case-sensitive, * and ? match across
// ARN segments and slashes, as IAM's do.
func ResourceMatch(pattern, arn string) bool {
	return wildcard(pattern, arn)
}

// wildcard matches * (any run, slashes included) and ? (one character).
func wildcard(p, s string) bool {
	for len(p) > 0 {
		switch p[0] {
		case '*':
			for len(p) > 0 && p[0] == '*' {
				p = p[1:]
			}
			if p == "" {
				return true
			}
			for i := 0; i <= len(s); i++ {
				if wildcard(p, s[i:]) {
					return true
				}
			}
			return false
		case '?':
			if s == "" {
				return false
			}
			p, s = p[1:], s[1:]
		default:
			if s == "" || p[0] != s[0] {
				return false
			}
			p, s = p[1:], s[1:]
		}
	}
	return s == ""
}
