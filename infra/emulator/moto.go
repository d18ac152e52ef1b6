package emulator

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os/exec"
	"strconv"
)

// StartMoto starts moto_server on a free 127.0.0.1 port. Only infra/stack's tests use it: it
// is the one engine here with a CloudFormation API, and the local platform does not deploy
// through CloudFormation (it provisions from the template's SAM translation, see infra/sam).
func StartMoto(ctx context.Context, logw io.Writer) (*Server, error) {
	argv, err := motoCommand(ctx)
	if err != nil {
		return nil, err
	}
	return startServer(ctx, spec{
		name: "moto_server",
		command: func(port int) ([]string, []string) {
			return append(append([]string{}, argv...), "-H", "127.0.0.1", "-p", strconv.Itoa(port)), []string{"PYTHONUNBUFFERED=1"}
		},
		ready: func(ctx context.Context, endpoint string) error {
			return probe(ctx, http.DefaultClient, endpoint+"/moto-api/")
		},
		portTaken: "Address already in use",
	}, logw)
}

// motoCommand finds moto_server (preinstalled on the project's machines with moto[server]).
func motoCommand(ctx context.Context) ([]string, error) {
	if p, err := exec.LookPath("moto_server"); err == nil {
		return []string{p}, nil
	}
	if exec.CommandContext(ctx, "python3", "-c", "import moto.server").Run() == nil {
		return []string{"python3", "-m", "moto.server"}, nil
	}
	return nil, errors.New(`emulator: moto_server is not installed (python3 -m pip install "moto[server]")`)
}
