package local

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/sundialhq/sundial/infra/lambdarun"
	"github.com/sundialhq/sundial/internal/chaos"
)

// buildProcesses builds the functions' bootstraps when they run as processes, before anything
// starts: a build takes seconds, and timers synced before it would start late.
func (p *Platform) buildProcesses(ctx context.Context, o Options) error {
	if !o.Processes {
		return nil
	}
	src := o.SourceDir
	if src == "" {
		var err error
		if src, err = moduleRoot(); err != nil {
			return err
		}
	}
	dir := o.BootstrapDir
	if dir == "" {
		tmp, err := ownedTempDir(bootstrapsPrefix)
		if err != nil {
			return err
		}
		dir, p.tempDir = tmp, tmp
	}
	var err error
	if o.Chaos != "" {
		// The chaos run's functions: their roles with faults injected, never compiled into
		// the functions' own bootstraps (infra/chaosrun/bootstrap).
		p.bootstraps, err = buildBootstraps(ctx, src, dir, chaosBootstrap, FnFetch, FnProcessor, FnRecovery, FnLogWriter)
		return err
	}
	p.bootstraps, err = BuildBootstraps(ctx, src, dir, FnFetch, FnProcessor, FnRecovery, FnLogWriter)
	return err
}

// startProcesses returns the bootstraps as process functions: each runs behind an emulated
// Runtime API, with the environment the template gives the function (its SAM translation's,
// with the local settings), the local AWS endpoint and its role's credentials, and the chaos
// settings if any.
func (p *Platform) startProcesses(ctx context.Context, o Options, processors int) error {
	logMu := &sync.Mutex{}
	p.Functions = map[string]*lambdarun.ProcessFunction{}
	for name, f := range p.funcs {
		creds, err := f.aws.Credentials.Retrieve(ctx)
		if err != nil {
			return fmt.Errorf("credentials for the %s processes: %w", name, err)
		}
		env := maps.Clone(f.env)
		env["AWS_ENDPOINT_URL"] = p.Endpoint
		env["AWS_ACCESS_KEY_ID"], env["AWS_SECRET_ACCESS_KEY"] = creds.AccessKeyID, creds.SecretAccessKey
		if creds.SessionToken != "" {
			env["AWS_SESSION_TOKEN"] = creds.SessionToken
		}
		if o.Chaos != "" {
			env[chaos.EnvVar] = o.Chaos // read by the chaos bootstrap
		}
		// Successful executions are logged at Debug; the platform prints a line for each and
		// keeps only Info and up in the function log, as Lambda's default level would.
		env["AWS_LAMBDA_LOG_LEVEL"] = "DEBUG"
		concurrency := 1
		switch name {
		case FnProcessor:
			concurrency = processors
		case FnLogWriter:
			concurrency = 4 // one invocation at a time per shard; instances start only when used
		}
		if r := p.funcs[name].reserved; r > 0 {
			concurrency = min(concurrency, r) // no more instances than the reservation allows
		}
		var onInvoke func(int, string)
		if o.OnInvoke != nil {
			onInvoke = func(instance int, requestID string) { o.OnInvoke(name, instance, requestID) }
		}
		fn, err := lambdarun.NewProcessFunction(lambdarun.ProcessConfig{
			Name: "sundial-" + name, Bootstrap: p.bootstraps[name], Env: env, Region: p.AWS.Region,
			Timeout: f.timeout, MemoryMB: f.memoryMB, Concurrency: concurrency, OnInvoke: onInvoke,
			Output: &processOutput{function: name, lines: p.lines, log: o.Log, logMu: logMu},
		})
		if err != nil {
			return err
		}
		p.Functions[name] = fn
	}
	return nil
}

// stopProcesses ends every function process (after the event sources and schedules stopped
// invoking them) and removes the bootstraps Up built in a directory of its own.
func (p *Platform) stopProcesses() error {
	var errs []error
	for _, fn := range p.Functions {
		errs = append(errs, fn.Stop())
	}
	if p.tempDir != "" {
		errs = append(errs, os.RemoveAll(p.tempDir))
	}
	return errors.Join(errs...)
}

// chaosBootstrap is the package of the chaos run's bootstraps: one per function, the function
// named at link time (main.function).
const chaosBootstrap = "./infra/chaosrun/bootstrap"

// BuildBootstraps builds functions/<name> of the Sundial module at src as Lambda's build does
// (lambda.norpc, no cgo), for this machine, into dir/<name>/bootstrap, and returns their paths.
func BuildBootstraps(ctx context.Context, src, dir string, names ...string) (map[string]string, error) {
	return buildBootstraps(ctx, src, dir, "", names...)
}

// buildBootstraps is BuildBootstraps from pkg, when set, with each function's name linked in
// as main.function, instead of from functions/<name>.
func buildBootstraps(ctx context.Context, src, dir, pkg string, names ...string) (map[string]string, error) {
	out := map[string]string{}
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	for _, name := range names {
		bin := filepath.Join(dir, name, "bootstrap")
		g.Go(func() error {
			args := []string{"build", "-tags", "lambda.norpc", "-o", bin, "./functions/" + name}
			if pkg != "" {
				args = []string{"build", "-tags", "lambda.norpc", "-ldflags", "-X=main.function=" + name, "-o", bin, pkg}
			}
			cmd := exec.CommandContext(gctx, "go", args...)
			cmd.Dir = src
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+runtime.GOOS, "GOARCH="+runtime.GOARCH)
			var msg bytes.Buffer
			cmd.Stdout, cmd.Stderr = &msg, &msg
			if err := cmd.Run(); err != nil {
				return fmt.Errorf("build the %s bootstrap (go %s in %s): %w\n%s", name, strings.Join(args, " "), src, err, msg.String())
			}
			mu.Lock()
			out[name] = bin
			mu.Unlock()
			return nil
		})
	}
	return out, g.Wait()
}

// moduleRoot finds the Sundial module (its go.mod) from the working directory upward: the
// function processes are built from its source.
func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	return moduleRootFrom(dir)
}

// moduleRootFrom finds the Sundial module from dir upward.
func moduleRootFrom(dir string) (string, error) {
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && bytes.Contains(b, []byte("module github.com/sundialhq/sundial\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("running the functions as processes builds them from source: run from the Sundial source tree, or set the source directory")
		}
		dir = parent
	}
}
