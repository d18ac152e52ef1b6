package iam

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

// Events is EventBridge (X-Amz-Target AWSEvents.<Operation>).
const Events Service = "events"

// eventsCalls: PutEvents is authorized as events:PutEvents on each bus its entries name
// (EventBusName, a name or an ARN; none: the account's default bus).
func (e Env) eventsCalls(op string, body []byte) ([]Call, error) {
	if op != "PutEvents" {
		return nil, fmt.Errorf("events %s: the local platform emulates only PutEvents", op)
	}
	// Read strictly (strict.go), as the bus each entry names is what is authorized.
	b, err := strictObject(body, true)
	if err != nil {
		return nil, fmt.Errorf("events %s: %w", op, err)
	}
	var entries []json.RawMessage
	if raw, ok := b["Entries"]; ok {
		if err := json.Unmarshal(raw, &entries); err != nil {
			return nil, fmt.Errorf("events %s: Entries is not a list: %w", op, err)
		}
	}
	seen := map[string]bool{}
	var out []Call
	for _, raw := range entries {
		en, err := strictObject(raw, true)
		if err != nil {
			return nil, fmt.Errorf("events %s: an entry: %w", op, err)
		}
		var bus string
		if v, ok := en["EventBusName"]; ok {
			if err := json.Unmarshal(v, &bus); err != nil {
				return nil, fmt.Errorf("events %s: EventBusName is not a string", op)
			}
		}
		res := e.EventBusARN(bus)
		if !seen[res] {
			seen[res] = true
			out = append(out, Call{Action: "events:PutEvents", Resource: res})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("events %s: no Entries", op)
	}
	return out, nil
}

// EventBusARN is the ARN of the bus a PutEvents entry names (a name or an ARN; empty:
// "default").
func (e Env) EventBusARN(bus string) string {
	if strings.HasPrefix(bus, "arn:") {
		return bus
	}
	if bus == "" {
		bus = "default"
	}
	return fmt.Sprintf("arn:aws:events:%s:%s:event-bus/%s", e.Region, e.Account, bus)
}

// SNS is Amazon SNS (query protocol, Version 2010-03-31).
const SNS Service = "sns"

// snsCalls: Publish is authorized as sns:Publish on its TopicArn.
func snsCalls(op string, form url.Values) ([]Call, error) {
	if op != "Publish" {
		return nil, fmt.Errorf("sns %s: the local platform emulates only Publish", op)
	}
	topic := form.Get("TopicArn")
	if !strings.HasPrefix(topic, "arn:") {
		return nil, fmt.Errorf("sns Publish: TopicArn %q is not an ARN", topic)
	}
	return []Call{{Action: "sns:Publish", Resource: topic}}, nil
}
