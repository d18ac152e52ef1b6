package local_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/lambdarun"
	"github.com/sundialhq/sundial/infra/local"
	"github.com/sundialhq/sundial/internal/testenv"
)

// The --env-vars file `sundial up` writes for sam local is all a function needs: the fetch's
// bootstrap, given only that environment (plus the credentials and region SAM passes into
// its container), runs a tick of the platform's stack from its sample event.
func TestSamEnvFileRunsAFunctionAsSamLocalWould(t *testing.T) {
	testenv.Integration(t)
	t.Parallel()
	dir := t.TempDir()
	var logs testenv.SyncBuffer
	p, err := local.Up(context.Background(), local.Options{Template: "../../template.yaml", Log: &logs})
	require.NoError(t, err, "log:\n%s", logs.String())
	t.Cleanup(func() { require.NoError(t, p.Stop()) })

	path := filepath.Join(dir, "sam-env.json")
	require.NoError(t, p.WriteSamEnv(path, "127.0.0.1"))
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var file map[string]map[string]string
	require.NoError(t, json.Unmarshal(raw, &file))
	for _, fn := range []string{"FetchFunction", "ProcessorFunction", "RecoveryFunction", "ApiFunction", "PublishFunction"} {
		require.Contains(t, file, fn)
		require.Equal(t, p.Endpoint, file[fn]["SUNDIAL_ENDPOINT_URL"], fn)
		require.Equal(t, p.Outputs.TimersTable, file[fn]["SUNDIAL_TIMERS_TABLE"], fn)
	}
	desktop, err := p.SamEnv("host.docker.internal")
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(desktop["FetchFunction"]["SUNDIAL_ENDPOINT_URL"], "http://host.docker.internal:"))

	bin, err := local.BuildBootstraps(context.Background(), "../..", filepath.Join(dir, "bin"), local.FnFetch)
	require.NoError(t, err)
	env := file["FetchFunction"]
	// SAM passes the shell's credentials: the developer gives it the platform's
	// administrator's (the endpoint refuses any key it does not know).
	admin := p.Local.Admin()
	env["AWS_ACCESS_KEY_ID"], env["AWS_SECRET_ACCESS_KEY"] = admin.AccessKeyID, admin.SecretAccessKey
	fn, err := lambdarun.NewProcessFunction(lambdarun.ProcessConfig{Name: "FetchFunction", Bootstrap: bin[local.FnFetch],
		Env: env, Timeout: time.Minute, Output: &logs})
	require.NoError(t, err)
	t.Cleanup(func() { _ = fn.Stop() })
	event, err := os.ReadFile("../../functions/fetch/event.json")
	require.NoError(t, err)
	before, err := p.App.Store.Watermark(context.Background())
	require.NoError(t, err)
	_, err = fn.Invoke(context.Background(), "sam-local", event)
	require.NoError(t, err, "log:\n%s", logs.String())
	after, err := p.App.Store.Watermark(context.Background())
	require.NoError(t, err)
	require.True(t, after.After(before), "the tick moved the stack's watermark (%s → %s)", before, after)
}
