package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/sundialhq/sundial/infra/local"
	"github.com/sundialhq/sundial/infra/stack"
	"github.com/sundialhq/sundial/internal/app"
	"github.com/sundialhq/sundial/internal/console"
)

// consoleOptions are up's console flags.
type consoleOptions struct {
	addr     string
	explicit bool   // --console was given: a busy address is an error, not a fallback
	token    string // "": generate one
}

// startConsole serves Service Center for the running platform and prints its URL, a
// one-time login link and, when it generated the token, the token. The returned function
// stops the server.
func startConsole(p *local.Platform, o consoleOptions, stdout io.Writer, log *slog.Logger) (func(), error) {
	generated := o.token == ""
	if generated {
		o.token = console.NewToken()
	}
	// The console is Service Center's API function: it runs with that function's role.
	srv, err := console.New(console.Options{
		Service: console.NewService(p.API, sqs.NewFromConfig(p.APIAWS), capacityOf(p.Outputs.Parameters)),
		Auth:    console.AuthToken, Token: o.token, Log: log,
	})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil && !o.explicit {
		ln, err = net.Listen("tcp", "127.0.0.1:0") // the default port is taken: any free one
	}
	if err != nil {
		return nil, fmt.Errorf("console: %w (choose another address with --console)", err)
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 30 * time.Second,
		IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10}
	go func() {
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("console stopped", "error", err)
		}
	}()
	base := "http://" + ln.Addr().String()
	fmt.Fprintf(stdout, "console    %s/   (API %s/api/ with Authorization: Bearer TOKEN)\n", base, base)
	fmt.Fprintf(stdout, "login      %s   (one-time, valid %s)\n", srv.LoginLink(base), console.LoginLinkTTL)
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() {
		fmt.Fprintf(stdout, "warning    the console listens on %s, beyond this machine: plain HTTP, guarded by the token only\n", tcp)
	}
	if generated {
		fmt.Fprintf(stdout, "token      %s   (generated; --token or SUNDIAL_CONSOLE_TOKEN sets it)\n", o.token)
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(ctx)
	}, nil
}

// apiHandler is the API function's handler (functions/api) on a stack, for `sundial invoke
// api`: IAM mode, so the event's requestContext.authorizer.iam is what authenticates.
func apiHandler(a *app.App, awsCfg aws.Config, outs stack.Outputs) (any, error) {
	srv, err := console.New(console.Options{
		Service: console.NewService(a, sqs.NewFromConfig(awsCfg), capacityOf(outs.Parameters)),
		Auth:    console.AuthIAM,
		Log:     slog.New(slog.NewJSONHandler(os.Stderr, nil)).With("function", "api"),
	})
	if err != nil {
		return nil, err
	}
	return console.LambdaHandler(srv.Handler()), nil
}
