package stack

import "github.com/sundialhq/sundial/infra/sam"

// For the external tests.
var (
	AsJSON  = sam.JSON
	Compact = compact
)

const MaxTemplateBody = maxTemplateBody
