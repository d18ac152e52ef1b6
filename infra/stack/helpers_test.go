package stack

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/emulator"
)

// startMoto starts a moto_server for a deploy test, stopped when the test ends, and returns
// a context that ends within two minutes, the server and an AWS config for it; it skips the
// test under -short or without moto_server.
func startMoto(t *testing.T) (context.Context, *emulator.Server, aws.Config) {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: deploys on moto; -short (make test-unit) skips it")
	}
	if _, err := exec.LookPath("moto_server"); err != nil {
		t.Skip(`moto_server is not installed (pip install "moto[server]"); skipping the deploy test against the emulator`)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	emu, err := emulator.StartMoto(ctx, nil)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, emu.Stop()) })
	cfg, err := emulator.AWSConfig(ctx, emu.Endpoint, "us-east-1")
	require.NoError(t, err)
	return ctx, emu, cfg
}
