package provision

import (
	"fmt"
	"strconv"
	"strings"
)

// Application Auto Scaling does not run locally: DynamoDB Local neither throttles nor reports
// consumed capacity to CloudWatch, so a PROVISIONED table keeps the units it was created with;
// the local endpoint throttles it at its target's MaxCapacity (ProvisionedUnits).
// The scalable targets and their policies get the names and ARNs AWS would give them, and are
// checked as Application Auto Scaling checks them when they are registered: a DynamoDB target
// names a table (or a global secondary index) of the stack that is billed PROVISIONED, with a
// dimension of its kind, and MinCapacity <= MaxCapacity; a DynamoDB target-tracking policy
// tracks the utilization of its target's dimension, as a percent.

const notScaled = "not scaled: the table or index keeps its initial units, and the local endpoint throttles it at the target's MaxCapacity"

// scalableTarget names an AWS::ApplicationAutoScaling::ScalableTarget. Its Ref is the
// scalable target's ID as CloudFormation returns it: "resource|dimension|namespace".
func (s *Stack) scalableTarget(res *Resource) error {
	p := res.Properties
	ns, id, dim := fmt.Sprint(p["ServiceNamespace"]), fmt.Sprint(p["ResourceId"]), fmt.Sprint(p["ScalableDimension"])
	lo, err := capacity(p, "MinCapacity")
	if err != nil {
		return err
	}
	hi, err := capacity(p, "MaxCapacity")
	if err != nil {
		return err
	}
	if lo > hi {
		return fmt.Errorf("MinCapacity %d is above MaxCapacity %d (Application Auto Scaling refuses the target)", lo, hi)
	}
	if ns == "dynamodb" {
		if err := s.dynamoTarget(id, dim); err != nil {
			return err
		}
	}
	res.Ref = id + "|" + dim + "|" + ns
	res.Attrs["Id"] = res.Ref
	s.NotEmulated = append(s.NotEmulated, res.LogicalID+" ("+res.Type+"): "+notScaled)
	return nil
}

func capacity(p map[string]any, prop string) (int, error) {
	v, ok := p[prop]
	if !ok {
		return 0, fmt.Errorf("%s is required", prop)
	}
	n, err := strconv.Atoi(fmt.Sprint(v))
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s %v: want a whole number, 0 or more", prop, v)
	}
	return n, nil
}

// dynamoTarget checks a DynamoDB target's ResourceId ("table/NAME" or
// "table/NAME/index/INDEX") and ScalableDimension against the stack's tables.
func (s *Stack) dynamoTarget(id, dim string) error {
	parts := strings.Split(id, "/")
	kind := ""
	switch {
	case len(parts) == 2 && parts[0] == "table":
		kind = "table"
	case len(parts) == 4 && parts[0] == "table" && parts[2] == "index":
		kind = "index"
	default:
		return fmt.Errorf("ResourceId %q: want table/NAME or table/NAME/index/INDEX", id)
	}
	if dim != "dynamodb:"+kind+":ReadCapacityUnits" && dim != "dynamodb:"+kind+":WriteCapacityUnits" {
		return fmt.Errorf("ScalableDimension %q does not scale a %s (ResourceId %s): want dynamodb:%s:ReadCapacityUnits or dynamodb:%s:WriteCapacityUnits", dim, kind, id, kind, kind)
	}
	var table *Resource
	for _, r := range s.Resources {
		if r.Type == "AWS::DynamoDB::Table" && r.Ref == parts[1] {
			table = r
		}
	}
	if table == nil {
		return fmt.Errorf("ResourceId %s: the stack has no table %s", id, parts[1])
	}
	if mode := fmt.Sprint(table.Properties["BillingMode"]); mode == "PAY_PER_REQUEST" {
		return fmt.Errorf("ResourceId %s: table %s is billed %s; auto scaling needs PROVISIONED", id, table.LogicalID, mode)
	}
	if kind == "index" {
		gsis, _ := table.Properties["GlobalSecondaryIndexes"].([]any)
		var names []string
		for _, g := range gsis {
			gm, _ := g.(map[string]any)
			names = append(names, fmt.Sprint(gm["IndexName"]))
		}
		found := false
		for _, n := range names {
			found = found || n == parts[3]
		}
		if !found {
			return fmt.Errorf("ResourceId %s: table %s has no global secondary index %s (it has %s)", id, table.LogicalID, parts[3], strings.Join(names, ", "))
		}
	}
	return nil
}

// scalingPolicy names an AWS::ApplicationAutoScaling::ScalingPolicy; its Ref and Arn are the
// policy's ARN.
func (s *Stack) scalingPolicy(res *Resource) error {
	p := res.Properties
	target := fmt.Sprint(p["ScalingTargetId"])
	var id, dim, ns string
	if _, ok := p["ScalingTargetId"]; ok {
		var t *Resource
		for _, r := range s.Resources {
			if r.Type == "AWS::ApplicationAutoScaling::ScalableTarget" && r.Ref == target {
				t = r
			}
		}
		if t == nil {
			return fmt.Errorf("ScalingTargetId %s is not a scalable target of the stack", target)
		}
		parts := strings.SplitN(t.Ref, "|", 3)
		id, dim, ns = parts[0], parts[1], parts[2]
	} else {
		id, dim, ns = fmt.Sprint(p["ResourceId"]), fmt.Sprint(p["ScalableDimension"]), fmt.Sprint(p["ServiceNamespace"])
	}
	if ns == "dynamodb" && fmt.Sprint(p["PolicyType"]) == "TargetTrackingScaling" {
		cfg, _ := p["TargetTrackingScalingPolicyConfiguration"].(map[string]any)
		spec, _ := cfg["PredefinedMetricSpecification"].(map[string]any)
		metric := fmt.Sprint(spec["PredefinedMetricType"])
		for _, d := range []string{"Read", "Write"} {
			if strings.HasSuffix(dim, ":"+d+"CapacityUnits") && spec != nil && metric != "DynamoDB"+d+"CapacityUtilization" {
				return fmt.Errorf("PredefinedMetricType %s does not track %s: want DynamoDB%sCapacityUtilization", metric, dim, d)
			}
		}
		if v, err := strconv.ParseFloat(fmt.Sprint(cfg["TargetValue"]), 64); err != nil || v <= 0 || v > 100 {
			return fmt.Errorf("TargetValue %v: want a utilization percent", cfg["TargetValue"])
		}
	}
	res.Ref = s.arn("autoscaling", "scalingPolicy:local:resource/"+ns+"/"+id+":policyName/"+fmt.Sprint(p["PolicyName"]))
	res.Attrs["Arn"] = res.Ref
	s.NotEmulated = append(s.NotEmulated, res.LogicalID+" ("+res.Type+"): "+notScaled)
	return nil
}
