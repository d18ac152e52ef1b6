package sam_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/sam"
)

// names resolves every resource to its logical ID (Ref) or "ID.Attr" (Fn::GetAtt).
type names struct{}

func (names) Ref(id string) (string, bool)          { return id, true }
func (names) GetAtt(id, attr string) (string, bool) { return id + "." + attr, true }

// The template's Capacity parameter translates and evaluates both ways: OnDemand leaves the
// tables PAY_PER_REQUEST with no ProvisionedThroughput anywhere (AWS refuses one) and no auto
// scaling; Provisioned makes them PROVISIONED with the Min parameters on the table and on every
// global secondary index, and enables a scalable target and a target-tracking policy for each
// table and index and each dimension, between the Min and Max parameters.
func TestCapacityTranslates(t *testing.T) {
	tpl, err := sam.TranslateFile(context.Background(), "../../template.yaml")
	require.NoError(t, err)
	given := map[string]string{"TimersReadCapacityMin": "6", "TimersWriteCapacityMin": "7", "TimersReadCapacityMax": "60",
		"TimersWriteCapacityMax": "70", "LogReadCapacityMin": "2", "LogWriteCapacityMin": "3", "LogReadCapacityMax": "20",
		"LogWriteCapacityMax": "30", "TargetUtilization": "55"}
	tables := map[string]string{"TimersTable": "Timers", "LogTable": "Log"} // logical ID: parameter prefix

	for _, capacity := range []string{"OnDemand", "Provisioned"} {
		t.Run(capacity, func(t *testing.T) {
			p := maps.Clone(given)
			p["Capacity"] = capacity
			params, err := tpl.Params(p)
			require.NoError(t, err)
			ev := &sam.Evaluator{Template: tpl, Params: params, StackName: "s", Region: "us-east-1", Resources: names{}}
			provisioned := capacity == "Provisioned"

			// want holds, per "table/ID" or "table/ID/index/NAME", the Min/Max pairs a target must have.
			want := map[string]string{}
			for id, prefix := range tables {
				r, ok := tpl.Resources[id]
				require.True(t, ok, id)
				v, err := ev.Eval(map[string]any(r.Properties))
				require.NoError(t, err, id)
				props := v.(map[string]any)
				mode := "PAY_PER_REQUEST"
				if provisioned {
					mode = "PROVISIONED"
				}
				require.Equal(t, mode, props["BillingMode"], id)
				units := map[string]any{"ReadCapacityUnits": params[prefix+"ReadCapacityMin"], "WriteCapacityUnits": params[prefix+"WriteCapacityMin"]}
				check := func(what string, m map[string]any) {
					tp, has := m["ProvisionedThroughput"]
					require.Equal(t, provisioned, has, "%s: ProvisionedThroughput", what)
					if provisioned {
						require.Equal(t, units, tp, what)
					}
				}
				check(id, props)
				want["table/"+id] = prefix
				gsis, _ := props["GlobalSecondaryIndexes"].([]any)
				require.NotEmpty(t, gsis, id)
				for _, g := range gsis {
					gm := g.(map[string]any)
					check(fmt.Sprintf("%s index %v", id, gm["IndexName"]), gm)
					want[fmt.Sprintf("table/%s/index/%v", id, gm["IndexName"])] = prefix
				}
			}

			targets := map[string]string{} // ScalableTarget logical ID: "resource|dimension"
			var policies []string
			for _, id := range slices.Sorted(maps.Keys(tpl.Resources)) {
				r := tpl.Resources[id]
				if !strings.HasPrefix(r.Type, "AWS::ApplicationAutoScaling::") {
					continue
				}
				on, err := ev.Enabled(r.Condition)
				require.NoError(t, err)
				require.Equal(t, provisioned, on, "%s exists only with Provisioned", id)
				if !on {
					continue
				}
				v, err := ev.Eval(map[string]any(r.Properties))
				require.NoError(t, err, id)
				props := v.(map[string]any)
				switch r.Type {
				case "AWS::ApplicationAutoScaling::ScalableTarget":
					res, dim := props["ResourceId"].(string), props["ScalableDimension"].(string)
					prefix, ok := want[res]
					require.True(t, ok, "%s scales %s, not a table or index of the template", id, res)
					kind, rw := "table", "Read"
					if strings.Contains(res, "/index/") {
						kind = "index"
					}
					if strings.HasSuffix(dim, "WriteCapacityUnits") {
						rw = "Write"
					}
					require.Equal(t, "dynamodb:"+kind+":"+rw+"CapacityUnits", dim, id)
					require.Equal(t, "dynamodb", props["ServiceNamespace"], id)
					require.Equal(t, params[prefix+rw+"CapacityMin"], props["MinCapacity"], id)
					require.Equal(t, params[prefix+rw+"CapacityMax"], props["MaxCapacity"], id)
					require.NotContains(t, props, "RoleARN", "the service-linked role")
					targets[id] = res + "|" + dim
				case "AWS::ApplicationAutoScaling::ScalingPolicy":
					policies = append(policies, id)
				}
			}
			if !provisioned {
				return
			}
			covered := map[string]bool{}
			for _, v := range targets {
				require.False(t, covered[v], "two targets for %s", v)
				covered[v] = true
			}
			for res := range want {
				kind := "table"
				if strings.Contains(res, "/index/") {
					kind = "index"
				}
				for _, rw := range []string{"Read", "Write"} {
					require.True(t, covered[res+"|dynamodb:"+kind+":"+rw+"CapacityUnits"], "%s has no %s scaling", res, rw)
				}
			}
			tracked := map[string]bool{}
			for _, id := range policies {
				v, err := ev.Eval(map[string]any(tpl.Resources[id].Properties))
				require.NoError(t, err, id)
				props := v.(map[string]any)
				require.Equal(t, "TargetTrackingScaling", props["PolicyType"], id)
				target := props["ScalingTargetId"].(string)
				dim, ok := targets[target]
				require.True(t, ok, "%s: ScalingTargetId %s is not a target", id, target)
				require.False(t, tracked[target], "two policies for %s", target)
				tracked[target] = true
				cfg := props["TargetTrackingScalingPolicyConfiguration"].(map[string]any)
				require.Equal(t, "55", cfg["TargetValue"], id)
				metric := cfg["PredefinedMetricSpecification"].(map[string]any)["PredefinedMetricType"]
				if strings.HasSuffix(dim, "WriteCapacityUnits") {
					require.Equal(t, "DynamoDBWriteCapacityUtilization", metric, id)
				} else {
					require.Equal(t, "DynamoDBReadCapacityUtilization", metric, id)
				}
			}
			require.Len(t, tracked, len(targets), "a policy per target")
		})
	}
}
