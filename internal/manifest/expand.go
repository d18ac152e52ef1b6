package manifest

import (
	"os"
	"strings"
)

// ActionsVar is the one name a manifest may expand: "${SUNDIAL_ACTIONS}" in an action's
// http.url or a property value is replaced by the address (host:port) the example actions are
// served on, so the example manifests follow `sundial up --actions ADDR` (make run ACTIONS=…).
const ActionsVar = "SUNDIAL_ACTIONS"

// DefaultActions is what ${SUNDIAL_ACTIONS} stands for when the environment does not set it:
// `make run`'s default --actions address.
const DefaultActions = "127.0.0.1:9000"

// ActionsAddr is the value of ${SUNDIAL_ACTIONS} for whoever reads a manifest (sundial check,
// sync and plan, `up`, the publish function): the environment's SUNDIAL_ACTIONS, else
// DefaultActions. `sundial up --actions ADDR` sets SUNDIAL_ACTIONS for itself, and records it
// in its state file for `sundial sync`; the publish function on AWS has no SUNDIAL_ACTIONS
// (template.yaml does not set it) and so reads DefaultActions, as `sundial check` does.
func ActionsAddr() string {
	if v := os.Getenv(ActionsVar); v != "" {
		return v
	}
	return DefaultActions
}

// expandActions replaces ${SUNDIAL_ACTIONS} in the timers' http URLs and property values by addr.
func (m *Manifest) expandActions(addr string) {
	const ref = "${" + ActionsVar + "}"
	for i := range m.Timers {
		t := &m.Timers[i]
		if t.Action.HTTP != nil {
			t.Action.HTTP.URL = strings.ReplaceAll(t.Action.HTTP.URL, ref, addr)
		}
		for k, v := range t.Properties {
			t.Properties[k] = strings.ReplaceAll(v, ref, addr)
		}
	}
}
