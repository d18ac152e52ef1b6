//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/infra/local"
	"github.com/sundialhq/sundial/internal/jobs"
)

// A bulk pause is a job: the CLI starts it and answers, the platform's recovery sweep goes
// on with it; the platform killed (kill -9) mid-job and started again finishes it once the
// dead worker's lease lapsed; every instance carries the one pause the job was accepted
// with, and the job is one audit record.
func TestJobResumedAfterThePlatformIsKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end: runs sundial up, kills it mid-job, starts it again (over a minute)")
	}
	t.Parallel()
	bin, err := sundialBinary()
	require.NoError(t, err)
	dir := t.TempDir()
	const n = 1500
	var m strings.Builder
	m.WriteString("timers:\n")
	for i := range n {
		fmt.Fprintf(&m, "  - {name: T%04d, schedule: \"every 12h\", timeout: 5s, action: {http: {url: \"http://127.0.0.1:9/unused\"}}}\n", i)
	}
	manifestPath := writeManifestIn(t, dir, m.String())

	start := func() *exec.Cmd {
		up, stdout := startUp(t, bin, dir, manifestPath, nil, "--console", "", "--sam-env", "")
		upReadyWithin(t, stdout, 4*time.Minute) // 1,500 timers to publish
		return up
	}
	getJob := func(id string) jobs.Job {
		out, errOut, code := cli(t, dir, "jobs", id, "--json")
		require.Equal(t, 0, code, errOut)
		var j jobs.Job
		require.NoError(t, json.Unmarshal([]byte(out), &j), out)
		return j
	}

	up := start()
	out, errOut, code := cli(t, dir, "deactivate", "--all", "--note", "freeze")
	require.Equal(t, 0, code, errOut)
	id := strings.Fields(strings.TrimPrefix(out, "job "))[0]
	require.NoError(t, jobs.ValidID(id), "the CLI names the job it started: %s", out)
	j := getJob(id)
	require.False(t, j.State.Over(), "1,500 timers take longer than the 3 s the request works: %+v", j)

	// Kill the platform while its recovery sweep holds the job.
	require.Eventually(t, func() bool {
		j = getJob(id)
		return j.State == jobs.Running && j.Owner != "" || j.State.Over() // the CLI released it: an owner now is the platform's sweep
	}, time.Minute, 50*time.Millisecond)
	require.NoError(t, up.Process.Signal(syscall.SIGKILL))
	_ = up.Wait()
	owner := j.Owner

	// Started again, the platform takes the job up once the dead worker's lease lapsed.
	up = start()
	j = getJob(id)
	require.Equal(t, jobs.Running, j.State, "killed mid-job (the sweep was faster than the test): %+v", j)
	require.Less(t, j.Done, n)
	require.Equal(t, owner, j.Owner, "still the dead worker's, until its lease lapses")
	t.Logf("killed at %s, held by %s", j.Progress(), j.Owner)
	// The platform's own sweep finishes it (the CLI only reads it here).
	require.Eventually(t, func() bool { j = getJob(id); return j.State.Over() }, 5*time.Minute, time.Second)
	out, errOut, code = cli(t, dir, "jobs", id, "--wait")
	require.Equal(t, 0, code, "%s\n%s", out, errOut)
	require.Contains(t, out, "1500 timers of default deactivated")
	require.Equal(t, jobs.Done, j.State)
	require.Equal(t, n, j.Done)
	require.Equal(t, n, j.Total)
	require.Zero(t, j.Failed)

	out, errOut, code = cli(t, dir, "timers", "list", "--json")
	require.Equal(t, 0, code, errOut)
	type row struct {
		Active bool `json:"active"`
		Pause  *struct {
			By string    `json:"by"`
			At time.Time `json:"at"`
		} `json:"pause"`
	}
	rows := jsonLines[row](t, out) // --json is one object per line (the listing is paged)
	require.Len(t, rows, n)
	for _, r := range rows {
		require.False(t, r.Active)
		require.NotNil(t, r.Pause)
		require.True(t, r.Pause.At.Equal(rows[0].Pause.At), "one pause: the one the job was accepted with")
	}
	out, errOut, code = cli(t, dir, "audit", "--json")
	require.Equal(t, 0, code, errOut)
	require.Len(t, regexp.MustCompile(`"action":\s*"job"`).FindAllString(out, -1), 1, "one record for the job: %s", out)
	st, ok := local.ReadState(filepath.Join(dir, local.DefaultStateFile))
	require.True(t, ok)
	requireIAMClean(t, dir, st.Endpoint) // recovery's sweep worked the job within its policy
	interrupt(t, up)
}
