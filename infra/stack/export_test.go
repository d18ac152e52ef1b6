package stack

// For the external tests.
var (
	AsJSON  = asJSON
	Compact = compact
)

const MaxTemplateBody = maxTemplateBody
