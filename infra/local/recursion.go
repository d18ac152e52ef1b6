package local

import (
	"context"
	"fmt"
	"os"

	"github.com/sundialhq/sundial"
	"github.com/sundialhq/sundial/infra/lambdarun"
	"github.com/sundialhq/sundial/infra/sam"
)

// recursiveLoop is a function's RecursiveLoop setting as the template's SAM translation gives
// it (Lambda's default, Terminate, where it is left out), for a stack at a given endpoint,
// whose functions the embedded provisioning does not read (provision.Function.RecursiveLoop).
func recursiveLoop(ctx context.Context, o Options, logicalID string) (string, error) {
	body := sundial.Template
	if o.Template != "" {
		b, err := os.ReadFile(o.Template)
		if err != nil {
			return "", fmt.Errorf("template: %w", err)
		}
		body = b
	}
	t, err := sam.Translate(ctx, body)
	if err != nil {
		return "", err
	}
	res, ok := t.Resources[logicalID]
	if !ok {
		return "", fmt.Errorf("the template has no function %s", logicalID)
	}
	v, ok := res.Properties["RecursiveLoop"]
	if !ok {
		return "Terminate", nil
	}
	if s := fmt.Sprint(v); s == lambdarun.RecursiveLoopAllow || s == "Terminate" {
		return s, nil
	}
	return "", fmt.Errorf("%s: RecursiveLoop %v: want Allow or Terminate", logicalID, v)
}
