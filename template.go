// Package sundial carries template.yaml, the one source of Sundial's configuration, so that
// the sundial binary runs the local platform from any directory (`sundial up --template`
// overrides it).
package sundial

import _ "embed"

// Template is template.yaml as built into this binary.
//
//go:embed template.yaml
var Template []byte
