package timer

import "time"

// AppOwner records which stack publishes an app's timers: the stack whose Custom::SundialTimers
// resource published it first. One stack owns an app; another stack's resource naming the same
// app is refused (ErrAppOwned) until the owner's resource is deleted or an operator releases
// the app (`sundial apps release`).
type AppOwner struct {
	App   string `json:"app"`
	Owner string `json:"owner"` // the owning stack's id (CloudFormation's StackId, an ARN)
	// Resource is the logical id of the owning stack's resource that published the app last: a
	// Delete of another resource of the same stack (renamed, or a second one naming the app)
	// leaves the app alone.
	Resource string    `json:"resource,omitempty"`
	Since    time.Time `json:"since"` // when it first published the app
}
