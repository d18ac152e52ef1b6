package iam

import (
	"fmt"
	"slices"
	"strings"
)

// Condition is one condition of a statement: the operator, whether it is ForAllValues:,
// the context key and the values.
type Condition struct {
	Operator string // StringEquals or StringLike
	ForAll   bool
	Key      string
	Values   []string
}

// The condition operators and keys the local check evaluates.
var (
	conditionOperators = []string{"StringEquals", "StringLike"}
	conditionKeys      = []string{"dynamodb:LeadingKeys"}
)

func parseConditions(raw any) ([]Condition, error) {
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("Condition is not an object")
	}
	var out []Condition
	for op, body := range m {
		c := Condition{Operator: op}
		if rest, ok := strings.CutPrefix(op, "ForAllValues:"); ok {
			c.Operator, c.ForAll = rest, true
		}
		if !slices.Contains(conditionOperators, c.Operator) {
			return nil, fmt.Errorf("condition operator %s is not modelled by the local IAM check (only %s, optionally ForAllValues:)", op, strings.Join(conditionOperators, ", "))
		}
		keys, ok := body.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("condition %s is not an object", op)
		}
		for key, v := range keys {
			if !slices.Contains(conditionKeys, key) {
				return nil, fmt.Errorf("condition key %s is not modelled by the local IAM check (only %s)", key, strings.Join(conditionKeys, ", "))
			}
			cc := c
			cc.Key, cc.Values = key, strs(v)
			if len(cc.Values) == 0 {
				return nil, fmt.Errorf("condition %s %s has no values", op, key)
			}
			out = append(out, cc)
		}
	}
	return out, nil
}

// conditionsHold evaluates a statement's conditions for a call. A call whose
// dynamodb:LeadingKeys the check does not know (other than a single-item DynamoDB call)
// fails every condition on it: refused locally rather than allowed by guess. A known key
// holds its one value; ForAllValues and the plain operator then agree.
func conditionsHold(conds []Condition, c Call) bool {
	for _, cond := range conds {
		if !c.KeyKnown {
			return false
		}
		match := false
		for _, v := range cond.Values {
			if (cond.Operator == "StringEquals" && v == c.LeadingKey) || (cond.Operator == "StringLike" && wildcard(v, c.LeadingKey)) {
				match = true
			}
		}
		if !match {
			return false
		}
	}
	return true
}
