package main

import (
	"context"
	"flag"
	"io"
	"os"
	"time"

	"github.com/sundialhq/sundial/infra/lambdarun"
)

func cmdInvoke(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("invoke", flag.ContinueOnError)
	var t target
	t.flags(fs)
	eventPath := fs.String("event", "", "event JSON file (samples: functions/<name>/event.json)")
	if err := parse(fs, args); err != nil {
		return err
	}
	name, err := onePositional(fs, "function (fetch, processor, recovery or api)")
	if err != nil {
		return err
	}
	if *eventPath == "" {
		return usageErr("invoke: --event FILE is required")
	}
	payload, err := os.ReadFile(*eventPath)
	if err != nil {
		return usageErr("invoke: %v", err)
	}
	awsCfg, outs, err := t.connect(ctx)
	if err != nil {
		return err
	}
	a, err := t.appOn(awsCfg, outs)
	if err != nil {
		return err
	}
	var fn lambdarun.Function
	switch name {
	case "fetch":
		fn = lambdarun.NewFunction("sundial-fetch", a.FetchHandler, time.Minute)
	case "processor":
		fn = lambdarun.NewFunction("sundial-processor", a.ProcessHandler, 15*time.Minute)
	case "recovery":
		fn = lambdarun.NewFunction("sundial-recovery", a.RecoverHandler, time.Minute)
	case "api":
		h, err := apiHandler(a, awsCfg, outs)
		if err != nil {
			return err
		}
		fn = lambdarun.NewFunction("sundial-api", h, 29*time.Second)
	default:
		return usageErr("invoke: unknown function %q; expected fetch, processor, recovery or api", name)
	}
	out, err := fn.Invoke(ctx, "cli-invoke", payload)
	if err != nil {
		return err
	}
	_, err = stdout.Write(append(out, '\n'))
	return err
}
