//go:build unix

package lambdarun_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// buildBootstrap builds pkg as Lambda's build does (lambda.norpc), for this host, into dir.
func buildBootstrap(t *testing.T, dir, pkg string) string {
	t.Helper()
	out := filepath.Join(dir, "bootstrap")
	cmd := exec.Command("go", "build", "-tags", "lambda.norpc", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	msg, err := cmd.CombinedOutput()
	require.NoError(t, err, "go build %s: %s", pkg, msg)
	return out
}

// groupMembers lists, from the process table (ps), the live processes in process group
// pgid; zombies are dead and wait only for their reaper, so they do not count.
func groupMembers(t *testing.T, pgid int) []int {
	t.Helper()
	out, err := exec.Command("ps", "-A", "-o", "pid=,pgid=,stat=").Output()
	require.NoError(t, err)
	var pids []int
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) < 3 || f[1] != strconv.Itoa(pgid) || strings.HasPrefix(f[2], "Z") {
			continue
		}
		pid, _ := strconv.Atoi(f[0])
		pids = append(pids, pid)
	}
	return pids
}

// request is what the test bootstrap (testdata/bootstrap) understands.
type request struct {
	Op   string `json:"op,omitempty"`
	Ms   int    `json:"ms,omitempty"`
	Code int    `json:"code,omitempty"`
	Msg  string `json:"msg,omitempty"`
	Data any    `json:"data,omitempty"`
}

type response struct {
	Data        json.RawMessage   `json:"data"`
	RequestID   string            `json:"requestId"`
	ARN         string            `json:"arn"`
	DeadlineMs  int64             `json:"deadlineMs"`
	HasDeadline bool              `json:"hasDeadline"`
	PID         int               `json:"pid"`
	ChildPID    int               `json:"childPid"`
	Env         map[string]string `json:"env"`
}

type invoker interface {
	Invoke(ctx context.Context, requestID string, payload []byte) ([]byte, error)
}

func call(t *testing.T, fn invoker, id string, req request) (response, error) {
	t.Helper()
	payload, err := json.Marshal(req)
	require.NoError(t, err)
	out, err := fn.Invoke(context.Background(), id, payload)
	var resp response
	if err == nil {
		require.NoError(t, json.Unmarshal(out, &resp), "%s", out)
	}
	return resp, err
}
