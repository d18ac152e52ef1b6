// Package localstack_test checks the LocalStack setup against LocalStack's documented
// conventions and runs the ready hook with a stand-in awslocal. Nothing here starts LocalStack
// (no Docker engine on the project's machines); docs/local.md says what has and has not been run.
package localstack_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

const readyDir = "init/ready.d"

// LocalStack runs the files of /etc/localstack/init/ready.d whose extension is .sh (executable,
// with a shebang) or .py, in name order, once it is ready.
func TestReadyHooksFollowLocalStackConventions(t *testing.T) {
	entries, err := os.ReadDir(readyDir)
	require.NoError(t, err)
	require.NotEmpty(t, entries)
	for _, e := range entries {
		p := filepath.Join(readyDir, e.Name())
		ext := filepath.Ext(e.Name())
		require.Contains(t, []string{".sh", ".py"}, ext, "%s: LocalStack runs only .sh and .py hooks", p)
		if ext != ".sh" {
			continue
		}
		info, err := os.Stat(p)
		require.NoError(t, err)
		require.NotZero(t, info.Mode().Perm()&0o111, "%s must be executable", p)
		f, err := os.Open(p)
		require.NoError(t, err)
		first, err := bufio.NewReader(f).ReadString('\n')
		f.Close()
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(first, "#!"), "%s needs a shebang", p)
	}
}

// The hook passes shellcheck. `make lint` runs it too, installing shellcheck where it is missing.
func TestReadyHooksPassShellcheck(t *testing.T) {
	if _, err := exec.LookPath("shellcheck"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("shellcheck is missing (make lint installs it)")
		}
		t.Skip("shellcheck is not installed; `make lint` installs and runs it")
	}
	hooks, err := filepath.Glob(filepath.Join(readyDir, "*.sh"))
	require.NoError(t, err)
	out, err := exec.Command("shellcheck", hooks...).CombinedOutput()
	require.NoError(t, err, "%s", out)
}

// The compose file mounts the hooks where LocalStack looks for them and the repository where
// the hook looks for it, lets LocalStack start Lambda containers, and passes the auth token
// LocalStack's image requires.
func TestComposeFile(t *testing.T) {
	body, err := os.ReadFile("docker-compose.yml")
	require.NoError(t, err)
	var doc struct {
		Services map[string]struct {
			Image       string            `yaml:"image"`
			Ports       []string          `yaml:"ports"`
			Environment map[string]string `yaml:"environment"`
			Volumes     []string          `yaml:"volumes"`
		} `yaml:"services"`
	}
	require.NoError(t, yaml.Unmarshal(body, &doc))
	ls, ok := doc.Services["localstack"]
	require.True(t, ok, "a localstack service")
	require.True(t, strings.HasPrefix(ls.Image, "localstack/localstack"), ls.Image)
	require.Contains(t, ls.Ports, "127.0.0.1:4566:4566", "the edge port, on loopback only")
	require.Contains(t, ls.Volumes, "./init/ready.d:/etc/localstack/init/ready.d:ro")
	require.Contains(t, ls.Volumes, "..:/sundial:ro", "the hook's SUNDIAL_SRC default")
	require.Contains(t, ls.Volumes, "/var/run/docker.sock:/var/run/docker.sock", "Lambda runs functions in containers")
	require.Regexp(t, regexp.MustCompile(`^\$\{LOCALSTACK_AUTH_TOKEN:\?.+\}$`), ls.Environment["LOCALSTACK_AUTH_TOKEN"], "the token comes from the host, and compose stops with a message without it")
	require.Equal(t, "sundial", ls.Environment["SUNDIAL_STACK"])
}

// hookRun runs deploy.sh with a stand-in awslocal that logs each call and, for `cloudformation
// package`, checks the function code and keeps the template it was given.
type hookRun struct {
	calls    [][]string
	packaged string // the template `cloudformation package` received
	stubOK   bool   // every CodeUri of that template held an executable bootstrap
	out      string
	err      error
}

const fakeAWSLocal = `#!/usr/bin/env bash
set -euo pipefail
printf '%s\t' "$@" >>"$FAKE_DIR/calls"; echo >>"$FAKE_DIR/calls"
case "$1 $2" in
"s3api head-bucket") exit 1 ;;
"cloudformation package")
  shift 2
  while (($#)); do
    case "$1" in
    --template-file) in="$2"; shift ;;
    --output-template-file) out="$2"; shift ;;
    esac
    shift
  done
  cp "$in" "$FAKE_DIR/packaged.yaml"
  ok=true
  while read -r dir; do
    [[ -x "$dir/bootstrap" ]] || ok=false
  done < <(sed -nE 's/^[[:space:]]*CodeUri:[[:space:]]*(\/.*)$/\1/p' "$in")
  echo "$ok" >"$FAKE_DIR/stub-ok"
  cp "$in" "$out" ;;
"cloudformation deploy") exit "${FAKE_DEPLOY_RC:-0}" ;;
esac
`

func runHook(t *testing.T, src string, env ...string) hookRun {
	t.Helper()
	fake := t.TempDir()
	bin := filepath.Join(fake, "bin")
	require.NoError(t, os.MkdirAll(bin, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(bin, "awslocal"), []byte(fakeAWSLocal), 0o755))
	hook, err := filepath.Abs(filepath.Join(readyDir, "deploy.sh"))
	require.NoError(t, err)
	cmd := exec.Command(hook)
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "FAKE_DIR="+fake, "SUNDIAL_SRC="+src,
		"SUNDIAL_PARAMETER_OVERRIDES=")
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	r := hookRun{out: string(out), err: err}
	if b, err := os.ReadFile(filepath.Join(fake, "calls")); err == nil {
		for _, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
			r.calls = append(r.calls, strings.Split(strings.TrimSuffix(line, "\t"), "\t"))
		}
	}
	if b, err := os.ReadFile(filepath.Join(fake, "packaged.yaml")); err == nil {
		r.packaged = string(b)
	}
	if b, err := os.ReadFile(filepath.Join(fake, "stub-ok")); err == nil {
		r.stubOK = strings.TrimSpace(string(b)) == "true"
	}
	return r
}

// call returns the first call of awslocal starting with prefix.
func (r hookRun) call(prefix ...string) []string {
	for _, c := range r.calls {
		if len(c) >= len(prefix) && slices.Equal(c[:len(prefix)], prefix) {
			return c
		}
	}
	return nil
}

// parameters are the --parameter-overrides of `cloudformation deploy`.
func (r hookRun) parameters(t *testing.T) map[string]string {
	t.Helper()
	c := r.call("cloudformation", "deploy")
	require.NotNil(t, c, "cloudformation deploy was called:\n%s", r.out)
	params := map[string]string{}
	on := false
	for _, a := range c {
		switch {
		case a == "--parameter-overrides":
			on = true
		case strings.HasPrefix(a, "--"):
			on = false
		case on:
			k, v, ok := strings.Cut(a, "=")
			require.True(t, ok, a)
			params[k] = v
		}
	}
	return params
}

func TestDeployHook(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatalf("the hook is a bash script: %v", err)
	}
	template, err := os.ReadFile("../template.yaml")
	require.NoError(t, err)
	repo := func(t *testing.T) string {
		src := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(src, "template.yaml"), template, 0o644))
		return src
	}

	t.Run("WithoutSamBuildDeploysStubCodeAndNoPublish", func(t *testing.T) {
		r := runHook(t, repo(t))
		require.NoError(t, r.err, r.out)
		require.NotNil(t, r.call("s3", "mb", "s3://sundial-artifacts"), "the artifact bucket is made when missing")
		require.NotEmpty(t, r.packaged)
		require.NotContains(t, r.packaged, "CodeUri: .\n", "every function gets the stub")
		require.Equal(t, strings.Count(string(template), "CodeUri: .\n"), strings.Count(r.packaged, "/stub\n"))
		require.True(t, r.stubOK, "each CodeUri holds an executable bootstrap")
		require.Equal(t, map[string]string{"ServiceCenter": "false", "PublishTimers": "false"}, r.parameters(t))
		deploy := r.call("cloudformation", "deploy")
		require.Contains(t, deploy, "CAPABILITY_AUTO_EXPAND", "the SAM transform is a macro")
		require.Contains(t, deploy, "CAPABILITY_IAM", "the functions' roles")
		require.Contains(t, deploy, "--no-fail-on-empty-changeset")
		require.NotNil(t, r.call("cloudformation", "describe-stacks", "--stack-name", "sundial"), "the outputs are printed")
	})

	t.Run("WithSamBuildDeploysTheBuiltTemplate", func(t *testing.T) {
		src := repo(t)
		built := filepath.Join(src, ".aws-sam", "build")
		require.NoError(t, os.MkdirAll(built, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(built, "template.yaml"), []byte("# built by sam build\n"), 0o644))
		r := runHook(t, src, "SUNDIAL_STACK=mine")
		require.NoError(t, r.err, r.out)
		require.Equal(t, "# built by sam build\n", r.packaged)
		require.Equal(t, map[string]string{"ServiceCenter": "false"}, r.parameters(t), "the functions have code: publish runs")
		require.Contains(t, r.call("cloudformation", "deploy"), "mine")
	})

	t.Run("OverridesWin", func(t *testing.T) {
		r := runHook(t, repo(t), "SUNDIAL_PARAMETER_OVERRIDES=ServiceCenter=true DueShards=8  LogRetentionDays=7")
		require.NoError(t, r.err, r.out)
		require.Equal(t, map[string]string{"ServiceCenter": "true", "PublishTimers": "false", "DueShards": "8", "LogRetentionDays": "7"}, r.parameters(t))
	})

	t.Run("MalformedOverrideStopsBeforeDeploying", func(t *testing.T) {
		r := runHook(t, repo(t), "SUNDIAL_PARAMETER_OVERRIDES=DueShards")
		require.Error(t, r.err)
		require.Contains(t, r.out, "'DueShards' is not Key=Value")
		require.Nil(t, r.call("cloudformation", "deploy"))
	})

	t.Run("FailedDeployFailsTheHookAndShowsWhy", func(t *testing.T) {
		r := runHook(t, repo(t), "FAKE_DEPLOY_RC=255")
		require.Error(t, r.err, "LocalStack marks the hook ERROR (/_localstack/init/ready)")
		require.Contains(t, r.out, "deploying stack sundial failed")
		require.NotNil(t, r.call("cloudformation", "describe-stack-events", "--stack-name", "sundial"))
		require.Nil(t, r.call("cloudformation", "describe-stacks"))
	})
}
