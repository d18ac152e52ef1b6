package app

import (
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/sundialhq/sundial/infra/stack"
	"github.com/sundialhq/sundial/internal/config"
)

// ForStack wires the services on a deployed stack, found by its outputs: with the
// configuration the template gives its functions (stack.Outputs.Env, read as a function reads
// its environment). The CLI, the client package and the tests connect this way.
func ForStack(awsCfg aws.Config, outs stack.Outputs, o Options) (*App, error) {
	env := outs.Env(nil)
	cfg, err := config.FromEnv(func(k string) string { return env[k] })
	if err != nil {
		return nil, err
	}
	return New(awsCfg, cfg, o)
}
