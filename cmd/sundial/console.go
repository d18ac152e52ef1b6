package main

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/sundialhq/sundial/infra/local"
	"github.com/sundialhq/sundial/infra/localaws"
	"github.com/sundialhq/sundial/infra/operators"
	"github.com/sundialhq/sundial/infra/sam"
	"github.com/sundialhq/sundial/infra/stack"
	"github.com/sundialhq/sundial/internal/app"
	"github.com/sundialhq/sundial/internal/console"
)

// consoleOptions are up's console flags.
type consoleOptions struct {
	addr     string
	explicit bool   // --console was given: a busy address is an error, not a fallback
	token    string // "": generate one
	tlsCert  string
	tlsKey   string
	hosts    string // --console-host, comma-separated
	// operators is --operators: the file naming the people allowed in, with their IAM
	// policies; region is the platform's (their routes' ARNs).
	operators string
	region    string
	ops       *operators.File // loaded by check

	cert *tls.Certificate // loaded by check
	ln   net.Listener     // bound by listen before the platform starts, so a taken port fails fast
	// moved says that the default address was taken and where the console listens instead
	// (the banner's note); "" when it listens where asked.
	moved string
	// stateFile is the platform's state (local.json): with operators, the console's API is
	// recorded there for the CLI.
	stateFile string
}

// listen binds the console's address: a taken default falls back to any free port, a taken
// --console is an error saying how to move it.
func (o *consoleOptions) listen() (net.Listener, error) {
	ln, err := net.Listen("tcp", o.addr)
	if err != nil && !o.explicit {
		ln, err = net.Listen("tcp", "127.0.0.1:0") // the default port is taken: any free one
		if err == nil {
			o.moved = fmt.Sprintf("console: %s is taken (by another sundial up or another program); listening on %s instead (--console ADDR, or make run CONSOLE=ADDR, picks one)",
				o.addr, ln.Addr())
		}
	}
	if err != nil {
		return nil, fmt.Errorf("console: %w (%s)", err, moveHint(err, "--console", "CONSOLE", "127.0.0.1:8090"))
	}
	return ln, nil
}

// check refuses a console that would send the token, login codes and session cookie in
// clear text beyond this machine, and loads the TLS certificate (so that a bad one stops up
// before it starts anything).
func (o *consoleOptions) check() error {
	if o.operators != "" {
		f, err := operators.Load(o.operators)
		if err != nil {
			return usageErr("up: --operators: %v", err)
		}
		if _, err := operators.New(f, operators.Admin{}, "r", "a", "i"); err != nil {
			return usageErr("up: --operators %s: %v", o.operators, err)
		}
		o.ops = f
	}
	if (o.tlsCert == "") != (o.tlsKey == "") {
		return usageErr("up: give both --tls-cert and --tls-key, or neither")
	}
	host, _, err := net.SplitHostPort(o.addr)
	if err != nil {
		return usageErr("up: --console %q: %v", o.addr, err)
	}
	if o.tlsCert == "" {
		if !loopbackHost(host) {
			return usageErr("up: --console %s listens beyond this machine, where the token, login codes and cookie would travel in clear text: "+
				"serve TLS with --tls-cert and --tls-key, or listen on 127.0.0.1", o.addr)
		}
		return nil
	}
	cert, err := tls.LoadX509KeyPair(o.tlsCert, o.tlsKey)
	if err != nil {
		return usageErr("up: --tls-cert/--tls-key: %v", err)
	}
	o.cert = &cert
	if ip := net.ParseIP(host); (host == "" || (ip != nil && ip.IsUnspecified())) && o.hostList() == nil {
		return usageErr("up: --console %s listens on every interface: name the address browsers use with --console-host", o.addr)
	}
	return nil
}

func (o *consoleOptions) hostList() []string {
	var hs []string
	for _, h := range strings.Split(o.hosts, ",") {
		if h = strings.TrimSpace(h); h != "" {
			hs = append(hs, h)
		}
	}
	return hs
}

// loopbackHost: the listen address stays on this machine.
func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// consoleBase is the console's address in links: the first --console-host (with the
// listener's port unless it names one), else the address it listens on.
func consoleBase(o consoleOptions, ln net.Addr) string {
	scheme := "http"
	if o.cert != nil {
		scheme = "https"
	}
	host := ln.String()
	if hs := o.hostList(); len(hs) > 0 {
		host = hs[0]
		if _, _, err := net.SplitHostPort(host); err != nil {
			if tcp, ok := ln.(*net.TCPAddr); ok {
				host = net.JoinHostPort(strings.Trim(host, "[]"), strconv.Itoa(tcp.Port))
			}
		}
	}
	return scheme + "://" + host
}

// startConsole serves Service Center for the running platform and prints its URL, a
// one-time login link and, when it generated the token, the token. The returned function
// stops the server.
func startConsole(p *local.Platform, o consoleOptions, stdout io.Writer, log *slog.Logger) (func(), error) {
	generated := o.token == ""
	if generated {
		o.token = console.NewToken()
	}
	ln := o.ln
	if ln == nil {
		var err error
		if ln, err = o.listen(); err != nil {
			return nil, err
		}
	}
	base := consoleBase(o, ln.Addr())
	// The console is Service Center's API function: it runs with that function's role.
	opts := console.Options{
		Service: console.NewService(p.API, sqs.NewFromConfig(p.APIAWS), capacityOf(p.Outputs.Parameters)),
		Auth:    console.AuthToken, Token: o.token, Log: log,
		BaseURL: base, Hosts: o.hostList(),
	}
	if o.ops != nil {
		gate, err := operatorGate(p, o)
		if err != nil {
			ln.Close()
			return nil, err
		}
		opts.Gate = gate
	}
	srv, err := console.New(opts)
	if err != nil {
		ln.Close()
		return nil, err
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 30 * time.Second,
		IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10}
	if o.cert != nil {
		hs.TLSConfig = &tls.Config{Certificates: []tls.Certificate{*o.cert}, MinVersion: tls.VersionTLS12}
	}
	if o.ops != nil && o.stateFile != "" {
		// The CLI with an operator's credentials in its environment goes through this API,
		// so that their policies decide and the audit names them (viaAPI).
		st, ok := local.ReadState(o.stateFile)
		if !ok {
			ln.Close()
			return nil, fmt.Errorf("state %s: unreadable", o.stateFile)
		}
		st.API = base + "/api/"
		if err := local.WriteState(o.stateFile, st); err != nil {
			ln.Close()
			return nil, err
		}
	}
	go func() {
		serve := func() error { return hs.Serve(ln) }
		if o.cert != nil {
			serve = func() error { return hs.ServeTLS(ln, "", "") }
		}
		if err := serve(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("console stopped", "error", err)
		}
	}()
	fmt.Fprintf(stdout, "console    %s/   (API %s/api/ with Authorization: Bearer TOKEN)\n", base, base)
	if o.moved != "" {
		fmt.Fprintf(stdout, "note       %s\n", o.moved)
	}
	fmt.Fprintf(stdout, "login      %s   (one-time, valid %s)\n", srv.LoginLink(base), console.LoginLinkTTL)
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() {
		fmt.Fprintf(stdout, "note       the console listens on %s, beyond this machine, over TLS; it answers only to %s\n", tcp, strings.Join(append([]string{base}, o.hostList()...), ", "))
	}
	if generated {
		fmt.Fprintf(stdout, "token      %s   (generated; --token or SUNDIAL_CONSOLE_TOKEN sets it)\n", o.token)
	}
	if o.ops != nil {
		fmt.Fprintf(stdout, "operators  %d from %s: their requests (SigV4 for %s, or their token) are allowed what their IAM policies allow\n",
			len(o.ops.Operators), o.operators, operators.SigningName)
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(ctx)
	}, nil
}

// operatorGate decides the console's requests by the operators' IAM policies, as API
// Gateway with AWS_IAM authorization; the platform's administrator keeps full access.
func operatorGate(p *local.Platform, o consoleOptions) (*operators.Gate, error) {
	var admin operators.Admin
	if p.Local != nil {
		c := p.Local.Admin()
		admin = operators.Admin{Name: "administrator", AccessKeyID: c.AccessKeyID, SecretAccessKey: c.SecretAccessKey}
	}
	apiID := "local" // the API's ID: the first label of ApiUrl's host (ID.execute-api.REGION.…)
	if u, err := url.Parse(p.Outputs.Values["ApiUrl"]); err == nil && u.Hostname() != "" {
		apiID, _, _ = strings.Cut(u.Hostname(), ".")
	}
	return operators.New(o.ops, admin, cmp.Or(o.region, localaws.Region), sam.Account, apiID)
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
