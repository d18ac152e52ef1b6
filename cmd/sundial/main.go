// Command sundial is the operator CLI and the local platform: `sundial up` runs Sundial on the
// embedded engines (DynamoDB Local, fauxqs); the other commands manage timers on a local or
// deployed stack.
package main

import (
	"context"
	"errors"
	"fmt"
	"github.com/aws/smithy-go"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/sundialhq/sundial/infra/gateway"
	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/termsafe"
)

const usage = `sundial — OutSystems-style timers on AWS serverless

Usage:
  sundial up [--endpoint URL] [--manifest PATH] [--tick DUR] [--state DIR] [--data DIR] [--fresh]
             [--listen ADDR] [--sam-env FILE] [--docker-host H] [--lambda-endpoint URL] [--console ADDR] [--token T] [--tls-cert F --tls-key F] [--console-host NAMES] [--operators FILE] [--stack NAME] [--template PATH] [--examples]
             [--app-stack DIR]...   also deploy an app's own stack (DIR/template.yaml, e.g. examples/billing)
                              onto the platform: its tables, Go functions and Custom::SundialTimers;
                              a changed template is applied as a stack update (--watch=false: not)
  sundial app-stack delete [--state DIR] DIR   the Delete of the running up's app stack: its custom resources get
                              their Delete request (Custom::SundialTimers: the app's timers are
                              deactivated, history kept)
  sundial timers list [--json] [--tenant T] [--app APP]   one entry per runtime instance (shard, tenant)
  sundial timers show NAME [--json] [--app APP]
  sundial timers edit NAME [--schedule S] [--timeout DUR] [--priority P] [--dst shift|skip] [--misfire-after DUR] [--reset] [--json] [--app APP]
                              validated before saving; Reset returns to the manifest's values
  sundial timers run-now|activate|deactivate NAME   (the same as the commands below)
  sundial health [--json] [--app APP]   Environment Health: fetcher, queues, processors, execution order
  sundial alerts [--json] [--app APP]   the open alerts: timers whose alert rule holds (manifest alerts:)
  sundial logs [--json] [--timer NAME] [--tenant T] [--errors] [--limit N] [--app APP]
  sundial run-now NAME [--param KEY=VALUE]... [--ignore-after] [--app APP]   run as soon as possible (activates a
                              deactivated timer); --param overrides a declared parameter (manifest parameters:);
                              --ignore-after runs a timer with after without waiting for its upstreams
  sundial activate NAME [--app APP]
  sundial deactivate NAME [--stop] [--app APP]   a running execution is not stopped (--stop: stopped too)
  sundial stop NAME[@tenant] [--app APP]   stop the running execution: a synchronous action is aborted
                              within 5 s, an async one at its next heartbeat; logged stopped with who
  sundial deactivate --app APP (--all | --tenant T | --priority P | NAME...) --note TEXT [--until RFC3339]
                              pause many timers with a reason; at --until the platform activates them
  sundial activate --app APP (--all | --tenant T | --priority P | NAME...)   end a pause early
  sundial logs redrive [--json] [--limit N] [--app APP]   log what the log writer gave up (its
                              failure queue), read back from the stream: within 24 h of the executions
  sundial sync MANIFEST       publish a manifest, as a deploy does: create/update/deactivate
                              timers, keep operators' changes, run When Published timers once
  sundial check MANIFEST      validate a manifest offline (what a deploy would reject)
  sundial plan MANIFEST [--json] [--from RFC3339] [--days N] [--tenants N|a,b] [--failure-rate F] [--fetch-tick-minutes M] [--due-shards N] ...
                              what the timers will do and cost per month, offline: firings per
                              instance, peak seconds and concurrency per priority, on-demand and
                              provisioned dollars (sundial plan -h lists every flag)
  sundial tenants list|add NAME|remove NAME [--json]
                              tenants of multi-tenant timers: add creates their instances,
                              remove deactivates them (history kept)
  sundial calendars list|show NAME|edit NAME [--app A] [--dates D,..] [--yearly MM-DD,..] [--ranges A..B,..] [--weekdays sat,..] [--wait] [--json]
                              business calendars; edit replaces a calendar's rules at runtime (in
                              force at once), reschedules its timers as a job, kept by publishes
  sundial resources list [--json]   shared resources' pools (resources:, uses:): slots, holders,
                              waiters in the order they are served, apps using the default app's
  sundial backfill NAME --from RFC3339 --to RFC3339 [--app A] [--tenant T] [--parallel N] [--param K=V]... [--detach] [--with-downstream] [--json]
                              run every past instant of the timer's schedule in the range again,
                              oldest first, scheduledAt the original instant; waits showing progress
  sundial backfill status|cancel NAME [--app A] [--json]   the timer's latest backfill; stop it
  sundial backfill list [--app A] [--page-size N] [--json]   every timer's latest backfill (range, state, who)
  sundial state show|reset NAME [--app A] [--json]   the state the last successful run handed to
                              the next (its payload's "state") and that run's instants; reset
                              removes it (audited; refused while the timer runs)
  sundial apps list [--json]  the apps, their timers, and the stack that owns each (one
                              stack's Custom::SundialTimers owns an app; another's is refused)
  sundial apps release NAME   free an app from its stack (gone without its resource's Delete):
                              its timers are unchanged, and another stack may publish it
  sundial schedule next EXPR [--from RFC3339] [--tz IANA] [--dst shift|skip] [-n N] [--json] [--timer [APP:]NAME[@TENANT]]
        [--calendars FILE --calendar NAME --on-excluded skip|next-business-day|previous-business-day] [--start RFC3339] [--end RFC3339]
  sundial invoke FUNCTION --event FILE   run fetch|processor|recovery|api once, as Lambda would
  sundial dlq list [--json] [--limit N]      inspect dead-lettered messages (not consumed)
  sundial dlq redrive [--json] [--limit N]   send well-formed ones back to their queues
  sundial console [--stack NAME] [--api URL] [--listen ADDR] [--token T]
                              Service Center for a deployed stack, on this machine: every request
                              to the stack's API signed with your AWS credentials (IAM decides)
  sundial audit [--app APP] [--timer NAME] [--who WHO] [--since RFC3339] [--limit N] [--json]
                              operators' actions (run-now, activate, deactivate, edit, reset,
                              tenants, apps release, dlq redrive, sync), newest first
  sundial audit verify [--since RFC3339] [--json]
                              check the audit trail's hash chain (default 31 days back): names
                              every record deleted, changed or inserted; exit 1 if any
` + jobsUsage + `  sundial engines install     install the embedded engines (DynamoDB Local, fauxqs; Java from apt)

Who you act as: the operator commands (run-now, activate, deactivate, timers list|show|edit,
health, alerts, logs, audit, tenants, apps release, dlq, calendars, backfill, state) go through the Service
Center API signed with your AWS credentials, so that IAM decides and the audit trail names you:
with --api URL; on a deployed stack, its ApiUrl; on a local "sundial up --operators FILE", its
console's API whenever AWS credentials are in the environment (AWS_ACCESS_KEY_ID and
AWS_SECRET_ACCESS_KEY, or AWS_PROFILE): an operator's key acts as that operator (their policies
decide), a key FILE does not name or a wrong secret is refused. Otherwise they act on the tables:
locally as the platform's administrator (audited as cli:USER; without --operators, whatever
credentials the environment holds), on a stack deployed without the API with your credentials.
sync, apps list, logs redrive, audit verify, invoke and app-stack delete have no API
route: locally they act as the administrator, and on a platform with --operators are refused
while the environment holds AWS credentials other than the administrator's.
Commands other than up take --endpoint (or AWS_ENDPOINT_URL; default: the endpoint of the
running "sundial up", else AWS), --stack (default sundial), and --state DIR (or SUNDIAL_STATE):
the "sundial up --state DIR" to talk to (a platform owns its state directory; default .sundial).
NAME is Timer, Timer@tenant, app:Timer or app:Timer@tenant; --app APP selects one app's timers
(the default app is "default").
Exit codes: 0 ok, 1 failure, 2 invalid input, 3 not found.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	// Everything printed may carry text from outside (an action's error body, a DLQ
	// message): control characters are shown escaped, never sent to the terminal raw.
	stdout, stderr = termsafe.NewWriter(stdout), termsafe.NewWriter(stderr)
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stdout, usage)
		return 0
	}
	var err error
	switch cmd, rest := args[0], args[1:]; cmd {
	case "up":
		err = cmdUp(ctx, rest, stdout, stderr)
	case "timers":
		err = cmdTimers(ctx, rest, stdout)
	case "logs":
		err = cmdLogs(ctx, rest, stdout)
	case "health":
		err = cmdHealth(ctx, rest, stdout)
	case "alerts":
		err = cmdAlerts(ctx, rest, stdout)
	case "run-now", "activate", "deactivate", "stop":
		err = cmdOperate(ctx, cmd, rest, stdout)
	case "sync":
		err = cmdSync(ctx, rest, stdout)
	case "tenants":
		err = cmdTenants(ctx, rest, stdout)
	case "calendars":
		err = cmdCalendars(ctx, rest, stdout)
	case "resources":
		err = cmdResources(ctx, rest, stdout)
	case "state":
		err = cmdState(ctx, rest, stdout)
	case "backfill":
		err = cmdBackfill(ctx, rest, stdout)
	case "apps":
		err = cmdApps(ctx, rest, stdout)
	case "check":
		err = cmdCheck(rest, stdout)
	case "plan":
		err = cmdPlan(rest, stdout)
	case "schedule":
		err = cmdSchedule(rest, stdout)
	case "invoke":
		err = cmdInvoke(ctx, rest, stdout)
	case "dlq":
		err = cmdDLQ(ctx, rest, stdout)
	case "audit":
		err = cmdAudit(ctx, rest, stdout)
	case "jobs":
		err = cmdJobs(ctx, rest, stdout)
	case "console":
		err = cmdConsole(ctx, rest, stdout)
	case "app-stack":
		err = cmdAppStack(ctx, rest, stdout)
	case "engines":
		err = cmdEngines(ctx, rest, stdout)
	default:
		err = usageErr("unknown command %q; run `sundial help`", cmd)
	}
	if err == nil {
		return 0
	}
	var help helpRequested
	if errors.As(err, &help) {
		help.print(stdout)
		return 0
	}
	fmt.Fprintln(stderr, "sundial:", err)
	if hint := credentialHint(err); hint != "" {
		fmt.Fprintln(stderr, hint)
	}
	return errkind.ExitCode(err)
}

// credentialHint says what to do when an endpoint refused the CLI's key: a local `sundial
// up` verifies signatures and knows only its own administrator key; its console's API (up
// --operators) knows its operators' keys too.
func credentialHint(err error) string {
	if errors.Is(err, errkind.Forbidden) && (strings.Contains(err.Error(), gateway.ErrUnknownKey.Error()) || strings.Contains(err.Error(), "signature we calculated does not match")) {
		return "hint: the Service Center API does not know this access key, or its secret does not match (the AWS credentials in the environment or profile); " +
			"a local `sundial up --operators FILE` knows the keys FILE names and its administrator's: unset AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_PROFILE to act as the administrator"
	}
	var api smithy.APIError
	if !errors.As(err, &api) {
		return ""
	}
	switch api.ErrorCode() {
	case "UnrecognizedClientException", "InvalidSignatureException", "InvalidClientTokenId", "SignatureDoesNotMatch":
		return "hint: a local `sundial up` accepts only the administrator key it records in .sundial/local.json; " +
			"run the command from that directory (or below it) without --endpoint, or give --endpoint exactly as `up` printed it"
	}
	return ""
}

func usageErr(format string, a ...any) error {
	return fmt.Errorf("%w: %s", errkind.Invalid, fmt.Sprintf(format, a...))
}
