package provision

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Units are the provisioned read and write units of a PROVISIONED table or of one of its
// global secondary indexes (Index "").
type Units struct {
	Table, Index string
	Read, Write  int
}

// ProvisionedUnits lists the units each PROVISIONED table and index of the stack can have:
// an auto scaling target's MaxCapacity where one scales that dimension (auto scaling is
// not emulated, so the local platform gives the table what target tracking can reach at
// most), else the template's ProvisionedThroughput. On-demand tables are not listed.
func (s *Stack) ProvisionedUnits() []Units {
	var out []Units
	idx := map[string]int{}
	num := func(v any) int {
		n, _ := strconv.Atoi(fmt.Sprint(v))
		return n
	}
	for _, id := range slices.Sorted(func(yield func(string) bool) {
		for k := range s.Resources {
			if !yield(k) {
				return
			}
		}
	}) {
		r := s.Resources[id]
		if r.Type != "AWS::DynamoDB::Table" || fmt.Sprint(r.Properties["BillingMode"]) == "PAY_PER_REQUEST" {
			continue
		}
		pt, ok := r.Properties["ProvisionedThroughput"].(map[string]any)
		if !ok {
			continue
		}
		idx[r.Ref] = len(out)
		out = append(out, Units{Table: r.Ref, Read: num(pt["ReadCapacityUnits"]), Write: num(pt["WriteCapacityUnits"])})
		gsis, _ := r.Properties["GlobalSecondaryIndexes"].([]any)
		for _, g := range gsis {
			gm, _ := g.(map[string]any)
			gpt, _ := gm["ProvisionedThroughput"].(map[string]any)
			name := fmt.Sprint(gm["IndexName"])
			idx[r.Ref+"/index/"+name] = len(out)
			out = append(out, Units{Table: r.Ref, Index: name, Read: num(gpt["ReadCapacityUnits"]), Write: num(gpt["WriteCapacityUnits"])})
		}
	}
	for _, r := range s.Resources {
		if r.Type != "AWS::ApplicationAutoScaling::ScalableTarget" || fmt.Sprint(r.Properties["ServiceNamespace"]) != "dynamodb" {
			continue
		}
		i, ok := idx[strings.TrimPrefix(fmt.Sprint(r.Properties["ResourceId"]), "table/")]
		if !ok {
			continue
		}
		hi := num(r.Properties["MaxCapacity"])
		switch dim := fmt.Sprint(r.Properties["ScalableDimension"]); {
		case strings.HasSuffix(dim, ":ReadCapacityUnits"):
			out[i].Read = hi
		case strings.HasSuffix(dim, ":WriteCapacityUnits"):
			out[i].Write = hi
		}
	}
	return out
}
