package local

import (
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
)

// SamEnv is the --env-vars file of `sam local invoke` / `sam local start-lambda` for this
// platform's stack: each function's environment from the template's SAM translation (the
// values SAM's own translation would give it are placeholders without a deployed stack),
// with SUNDIAL_ENDPOINT_URL (and SUNDIAL_LAMBDA_ENDPOINT) pointing at the local endpoint as a
// container reaches it: dockerHost is the host name containers use for this machine
// (127.0.0.1 with `--docker-network host` on Linux, host.docker.internal with Docker
// Desktop). SAM passes the shell's AWS credentials into the container, and the local
// endpoint verifies signatures: run sam local with the platform's administrator credentials
// (accessKeyId and secretAccessKey in .sundial/local.json) as AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY; sam local invocations are then not checked against the functions'
// roles. Queue URLs stay as they are: the SQS API takes them as names.
func (p *Platform) SamEnv(dockerHost string) (map[string]map[string]string, error) {
	if p.Stack == nil {
		return nil, fmt.Errorf("sam-env: only the embedded platform has a stack to describe (not %s)", p.Endpoint)
	}
	u, err := url.Parse(p.Endpoint)
	if err != nil {
		return nil, err
	}
	endpoint := "http://" + net.JoinHostPort(dockerHost, u.Port())
	out := map[string]map[string]string{}
	for _, id := range slices.Sorted(maps.Keys(p.Stack.Functions)) {
		env := maps.Clone(p.Stack.Functions[id].Env)
		env["SUNDIAL_ENDPOINT_URL"] = endpoint
		if p.actions != nil {
			env["SUNDIAL_LAMBDA_ENDPOINT"] = endpoint
		}
		out[id] = env
	}
	return out, nil
}

// WriteSamEnv writes SamEnv's file.
func (p *Platform) WriteSamEnv(path, dockerHost string) error {
	env, err := p.SamEnv(dockerHost)
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(env, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
