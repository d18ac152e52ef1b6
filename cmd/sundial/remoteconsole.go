package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"

	"github.com/sundialhq/sundial/internal/console"
)

// cmdConsole serves Service Center on this machine for a deployed stack: the pages `sundial
// up` serves, every read and action a request to the stack's Service Center API signed with
// the operator's own AWS credentials (the SDK's default chain), so that IAM decides each.
func cmdConsole(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("console", flag.ContinueOnError)
	var t target
	t.flags(fs)
	listen := fs.String("listen", "127.0.0.1:8089", "serve the console on this loopback `ADDR`")
	api := fs.String("api", "", "the Service Center API's `URL` (default: the stack output ApiUrl; for a running `sundial up --operators FILE`, its console's API)")
	token := fs.String("token", os.Getenv("SUNDIAL_CONSOLE_TOKEN"), "console token (default SUNDIAL_CONSOLE_TOKEN, else generated)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageErr("console: unexpected argument %q", fs.Arg(0))
	}
	host, _, err := net.SplitHostPort(*listen)
	if err != nil {
		return usageErr("console: --listen %q: %v", *listen, err)
	}
	if !loopbackHost(host) {
		return usageErr("console: --listen %s: sundial console serves this machine only (127.0.0.1); it signs with your AWS credentials", *listen)
	}
	if *token != "" && len(*token) < 16 {
		return usageErr("console: --token must be at least 16 characters")
	}
	apiURL := *api
	if apiURL == "" {
		if st, running := t.runningUp(); running {
			if st.API == "" {
				return usageErr("console: the local platform decides operators' requests only when started with sundial up --operators FILE; " +
					"without it its own console (the address up printed) is Service Center, or give --api http://127.0.0.1:PORT/api/")
			}
			apiURL = st.API
		} else {
			_, outs, err := t.connect(ctx)
			if err != nil {
				return err
			}
			if apiURL = outs.Values["ApiUrl"]; apiURL == "" {
				return fmt.Errorf("console: stack %s has no Service Center API (output ApiUrl): deploy it with ServiceCenter=true", t.stack)
			}
		}
	}
	// The operator's own credentials, never the local platform's administrator's.
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx, awsconfig.WithRegion(regionOf(apiURL, t.region)))
	if err != nil {
		return fmt.Errorf("console: AWS configuration: %w", err)
	}
	if _, err := awsCfg.Credentials.Retrieve(ctx); err != nil {
		return fmt.Errorf("console: no AWS credentials to sign the API's requests with (environment, profile, SSO or role): %w", err)
	}
	remote, err := console.NewRemote(apiURL, awsCfg.Credentials, awsCfg.Region)
	if err != nil {
		return err
	}
	generated := *token == ""
	if generated {
		*token = console.NewToken()
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("console: %w (%s)", err, moveHint(err, "--listen", "LISTEN", "127.0.0.1:8090"))
	}
	defer ln.Close()
	base := "http://" + ln.Addr().String()
	srv, err := console.New(console.Options{Backend: remote, Token: *token, BaseURL: base,
		Log: slog.New(slog.NewJSONHandler(io.Discard, nil))})
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 30 * time.Second, MaxHeaderBytes: 64 << 10}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
	}()
	printf(stdout, "console    %s/   (Service Center of %s, signed with your AWS credentials)\n", base, apiURL)
	printf(stdout, "login      %s   (one-time, valid %s)\n", srv.LoginLink(base), console.LoginLinkTTL)
	if generated {
		printf(stdout, "token      %s   (generated; --token or SUNDIAL_CONSOLE_TOKEN sets it)\n", *token)
	}
	printf(stdout, "ready      Ctrl-C stops\n")
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// regionOf is the region of an API Gateway URL (ID.execute-api.REGION.amazonaws.com), else
// the given one, else the environment's (AWS_REGION), else us-east-1.
func regionOf(apiURL, given string) string {
	if given != "" {
		return given
	}
	if u, err := url.Parse(apiURL); err == nil {
		if parts := strings.Split(u.Hostname(), "."); len(parts) >= 4 && parts[1] == "execute-api" {
			return parts[2]
		}
	}
	if r := os.Getenv("AWS_REGION"); r != "" {
		return r
	}
	return "us-east-1"
}
