package action

import "github.com/sundialhq/sundial/internal/actionspec"

// What an action is and what it receives are defined in internal/actionspec, a leaf the core
// imports; these names let the callers of an action keep saying action.Spec and action.Payload.
type (
	Spec       = actionspec.Spec
	HTTPSpec   = actionspec.HTTPSpec
	LambdaSpec = actionspec.LambdaSpec
	Payload    = actionspec.Payload
	Window     = actionspec.Window
)
