package ops_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/cfn"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/client"
	"github.com/sundialhq/sundial/internal/app"
	"github.com/sundialhq/sundial/internal/audit"
	"github.com/sundialhq/sundial/internal/console"
	"github.com/sundialhq/sundial/internal/jobs"
	"github.com/sundialhq/sundial/internal/manifest"
	"github.com/sundialhq/sundial/internal/ops"
	"github.com/sundialhq/sundial/internal/ops/apply"
	"github.com/sundialhq/sundial/internal/publish"
	"github.com/sundialhq/sundial/internal/testenv"
	"github.com/sundialhq/sundial/internal/timer"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// recorder is an audit trail that keeps what it is given, to count a call's records.
type recorder struct {
	mu   sync.Mutex
	recs []audit.Record
}

func (r *recorder) Add(_ context.Context, rec audit.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, rec)
	return nil
}

func (r *recorder) List(context.Context, audit.Query) ([]audit.Record, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.recs), nil
}

// take returns the records added since the last take.
func (r *recorder) take() []audit.Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.recs
	r.recs = nil
	return out
}

// call is one operation through one surface: do runs it (failing the test on an error) and
// returns the records it wrote and who they must name.
type call struct {
	op string
	do func(t *testing.T) (recs []audit.Record, who string)
}

// surface is a way in: the console's API, the public client, the publish function, the CLI
// (cmd/sundial: its cases are added beside these), the platform itself.
type surface struct {
	name  string
	calls func(t *testing.T, f *fixture) []call
}

type fixture struct {
	app        *app.App
	rec        *recorder
	name       string // the app under test
	timer, mt  string // a timer and a multi-tenant timer of it
	cal        string
	tenant     string
	manifest   string
	ts         *httptest.Server
	token      string
	ops        *apply.Service
	stackID    string
	publishDoc string
}

func setup(t *testing.T) *fixture {
	t.Helper()
	cfg, outs := testenv.Stack(t)
	quiet := slog.New(slog.NewJSONHandler(io.Discard, nil))
	a, err := app.ForStack(cfg, outs, app.Options{Log: quiet, Node: "ops-test"})
	require.NoError(t, err)
	rec := &recorder{}
	a.Audit = rec // every surface below records into it, except the client (its own app)
	a.Jobs.Audit = rec
	u := strings.ToLower(strings.NewReplacer("/", "", "_", "").Replace(testenv.Unique(t)))
	if len(u) > 40 {
		u = u[len(u)-40:]
	}
	f := &fixture{app: a, rec: rec, name: "a" + u, timer: "Nightly", mt: "PerTenant", cal: "biz", tenant: "t" + u, token: console.NewToken(),
		stackID: "arn:aws:cloudformation:us-east-1:000000000000:stack/" + "s" + u + "/1"}
	f.manifest = fmt.Sprintf(`app: %s
calendars:
  - {name: %s, weekdays: [sat, sun]}
timers:
  - {name: %s, schedule: "02:00", calendar: %s, action: {http: {url: "http://127.0.0.1:9/x"}}}
  - {name: %s, schedule: "03:00", multiTenant: true, action: {http: {url: "http://127.0.0.1:9/x"}}}
`, f.name, f.cal, f.timer, f.cal, f.mt)
	f.ops = a.Ops()
	srv, err := console.New(console.Options{Service: console.NewService(a, sqs.NewFromConfig(cfg), [4]int{1, 1, 1, 1}), Token: f.token, Log: quiet})
	require.NoError(t, err)
	f.ts = httptest.NewServer(srv.Handler())
	t.Cleanup(f.ts.Close)
	return f
}

func (f *fixture) manifestOf(t *testing.T) manifest.Manifest {
	t.Helper()
	m, err := manifest.Parse(strings.NewReader(f.manifest))
	require.NoError(t, err)
	return m
}

// api sends a request with the console's token; the records it wrote name the token's
// principal ("api").
func (f *fixture) api(method, path, body string) func(t *testing.T) ([]audit.Record, string) {
	return func(t *testing.T) ([]audit.Record, string) {
		t.Helper()
		req, err := http.NewRequest(method, f.ts.URL+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+f.token)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode == http.StatusAccepted {
			require.Contains(t, string(b), `"job"`, "202 answers the job started: %s %s", method, path)
		} else {
			require.Equal(t, http.StatusOK, res.StatusCode, "%s %s: %s", method, path, b)
		}
		return callers(f.rec.take()), "api"
	}
}

// callers leaves out the platform's records of the jobs that ended (OpJobEnded, counted on
// its own): a bulk action's job may end within the request that started it.
func callers(recs []audit.Record) []audit.Record {
	var out []audit.Record
	for _, r := range recs {
		if !(r.Who == jobs.Platform && r.Action == audit.Job) {
			out = append(out, r)
		}
	}
	return out
}

// queuedJob starts a bulk activate of the app's timers that no worker works (the fixture's
// ops start jobs without working them): what a cancel or a sweep finds.
func (f *fixture) queuedJob(t *testing.T) jobs.Job {
	t.Helper()
	j, err := f.ops.Bulk(context.Background(), ops.Actor{Kind: ops.CLI, Name: "cli:setup"}, f.name, ops.OpBulkActivate, apply.BulkBody{All: true})
	require.NoError(t, err)
	require.Equal(t, jobs.Queued, j.State)
	f.rec.take()
	return j
}

var surfaces = []surface{
	{"api", func(t *testing.T, f *fixture) []call {
		app, tm := "/api/apps/"+f.name, "/api/apps/"+f.name+"/timers/"+f.timer
		hour := time.Now().UTC().Truncate(time.Hour)
		return []call{
			{ops.OpEdit, f.api("PATCH", tm, `{"schedule":"04:00"}`)},
			{ops.OpStateReset, f.api("POST", tm+"/state/reset", "")},
			{ops.OpRunNow, f.api("POST", tm+"/run-now", "")},
			{ops.OpDeactivate, f.api("POST", tm+"/deactivate", "")},
			{ops.OpActivate, f.api("POST", tm+"/activate", "")},
			{ops.OpBulkDeactivate, f.api("POST", app+"/deactivate", `{"all":true,"note":"maintenance"}`)},
			{ops.OpBulkActivate, f.api("POST", app+"/activate", `{"all":true}`)},
			{ops.OpCalendarEdit, f.api("PUT", app+"/calendars/"+f.cal, `{"weekdays":["sun"]}`)},
			{ops.OpBackfillStart, f.api("POST", tm+"/backfill", fmt.Sprintf(`{"from":%q,"to":%q}`,
				hour.Add(-49*time.Hour).Format(time.RFC3339), hour.Add(-time.Hour).Format(time.RFC3339)))},
			{ops.OpBackfillCancel, f.api("POST", tm+"/backfill/cancel", "")},
			{ops.OpTenantAdd, f.api("POST", "/api/tenants", `{"name":"`+f.tenant+`"}`)},
			{ops.OpTenantRemove, f.api("DELETE", "/api/tenants/"+f.tenant, "")},
			{ops.OpDLQRedrive, f.api("POST", "/api/dlq/redrive?limit=1", "")},
			{ops.OpLoginLink, f.api("POST", "/api/login-links", "")},
			{ops.OpJobCancel, func(t *testing.T) ([]audit.Record, string) {
				return f.api("POST", "/api/jobs/"+f.queuedJob(t).ID+"/cancel", "")(t)
			}},
			{ops.OpAppJobCancel, func(t *testing.T) ([]audit.Record, string) {
				return f.api("POST", app+"/jobs/"+f.queuedJob(t).ID+"/cancel", "")(t)
			}},
			{ops.OpAppRelease, func(t *testing.T) ([]audit.Record, string) {
				_, _, err := f.app.Admin.ClaimApp(context.Background(), f.name, "arn:aws:cloudformation:us-east-1:1:stack/gone/x", "Timers")
				require.NoError(t, err)
				return f.api("POST", app+"/release", "")(t)
			}},
			{ops.OpStop, func(t *testing.T) ([]audit.Record, string) {
				// An execution to stop: a processor's claim of the timer's next run.
				ctx, k := context.Background(), timer.Key{App: f.name, Timer: f.timer}
				in, err := f.app.Store.Get(ctx, k)
				require.NoError(t, err)
				_, err = f.app.Store.Claim(ctx, k, timer.Claim{Due: in.NextRun, ScheduledAt: in.NextRun, Attempt: 1, ExecutionID: "E-stop", By: "ops-test", Now: time.Now()})
				require.NoError(t, err)
				return f.api("POST", tm+"/stop", "")(t)
			}},
		}
	}},
	{"client", func(t *testing.T, f *fixture) []call {
		cfg, _ := testenv.Stack(t)
		c, err := client.New(context.Background(), cfg, testenv.StackName())
		require.NoError(t, err)
		creds, err := cfg.Credentials.Retrieve(context.Background())
		require.NoError(t, err)
		who := "client:" + creds.AccessKeyID
		name := f.name + ":" + f.timer
		// The client appends to the stack's own trail: its records are read back there.
		trail := func(t *testing.T, action string) []audit.Record {
			recs, err := f.app.AuditDirect().List(context.Background(), audit.Query{App: f.name, Who: who, Limit: audit.MaxLimit})
			require.NoError(t, err)
			var out []audit.Record
			for _, r := range recs {
				if r.Action == action {
					out = append(out, r)
				}
			}
			return out
		}
		return []call{
			{ops.OpWake, func(t *testing.T) ([]audit.Record, string) {
				require.NoError(t, c.Wake(context.Background(), name))
				return trail(t, audit.Wake), who
			}},
			{ops.OpSetNextRun, func(t *testing.T) ([]audit.Record, string) {
				require.NoError(t, c.SetNextRun(context.Background(), name, time.Now().Add(time.Hour)))
				return trail(t, audit.SetNextRun), who
			}},
		}
	}},
	{"publish", func(t *testing.T, f *fixture) []call {
		h := &publish.Handler{Admin: f.app.Admin, Ops: f.ops, Log: slog.New(slog.NewJSONHandler(io.Discard, nil))}
		ev := func(typ cfn.RequestType, props map[string]any) cfn.Event {
			return cfn.Event{RequestType: typ, RequestID: testenv.Unique(t), ResourceType: publish.TimersResourceType, StackID: f.stackID,
				LogicalResourceID: "Timers", PhysicalResourceID: publish.AppPhysicalID(f.name), ResourceProperties: props}
		}
		return []call{
			{ops.OpPublish, func(t *testing.T) ([]audit.Record, string) {
				doc := strings.Replace(f.manifest, "schedule: \"02:00\"", "schedule: \"05:00\"", 1)
				_, _, err := h.Handle(context.Background(), ev(cfn.RequestUpdate, map[string]any{publish.PropApp: f.name, publish.PropManifest: doc}))
				require.NoError(t, err)
				return f.rec.take(), f.stackID
			}},
			{ops.OpUnpublish, func(t *testing.T) ([]audit.Record, string) {
				_, _, err := h.Handle(context.Background(), ev(cfn.RequestDelete, nil))
				require.NoError(t, err)
				return f.rec.take(), f.stackID
			}},
		}
	}},
	// `sundial sync` applies through ops with the CLI's user as actor (cmd/sundial's cases
	// of the CLI surface go beside this one).
	{"cli-sync", func(t *testing.T, f *fixture) []call {
		return []call{{ops.OpSync, func(t *testing.T) ([]audit.Record, string) {
			_, err := f.ops.Sync(context.Background(), ops.Actor{Kind: ops.CLI, Name: "cli:tester"}, f.manifestOf(t))
			require.NoError(t, err)
			return f.rec.take(), "cli:tester"
		}}}
	}},
	{"platform", func(t *testing.T, f *fixture) []call {
		return []call{{ops.OpJobEnded, func(t *testing.T) ([]audit.Record, string) {
			j := f.queuedJob(t)
			j, err := f.app.Jobs.Work(context.Background(), j.ID, time.Minute)
			require.NoError(t, err)
			require.Equal(t, jobs.Done, j.State)
			return f.rec.take(), jobs.Platform
		}}, {ops.OpPauseEnded, func(t *testing.T) ([]audit.Record, string) {
			until := time.Now().Add(time.Hour).UTC()
			j, err := f.ops.Bulk(context.Background(), ops.Actor{Kind: ops.Operator, Name: "ann"}, f.name, ops.OpBulkDeactivate,
				apply.BulkBody{Names: []string{f.timer}, Note: "until later", Until: &until})
			require.NoError(t, err)
			_, err = f.app.Jobs.Work(context.Background(), j.ID, time.Minute) // the fixture's ops do not work it
			require.NoError(t, err)
			f.rec.take()
			later := *f.ops
			later.Clock = fixedClock(until.Add(time.Minute))
			_, err = later.ResumePauses(context.Background())
			require.NoError(t, err)
			var mine []audit.Record
			for _, r := range f.rec.take() {
				if r.App == f.name {
					mine = append(mine, r)
				}
			}
			return mine, "platform"
		}}, {ops.OpAutoPause, func(t *testing.T) ([]audit.Record, string) {
			ctx := context.Background()
			k := timer.Key{App: f.name, Timer: "Flaky"}
			in := timer.Instance{Key: k, Settings: timer.Settings{Schedule: "every 1h", Timezone: "UTC", Priority: 3, Timeout: time.Minute,
				AutoPause: timer.AutoPause{After: 3, For: time.Hour}}, Active: true, NumberOfTries: 3, NextRun: time.Now().Add(time.Hour)}
			require.NoError(t, f.app.Store.Create(ctx, in))
			e := timer.Execution{Key: k, ExecutionID: "E3", Outcome: timer.OutcomeError, Error: "HTTP 500"}
			for range 2 { // the second is the same stream record delivered again: no second record
				_, _, err := ops.PauseAfterFailures(ctx, f.app.Store, f.rec, in, e, time.Now())
				require.NoError(t, err)
			}
			return f.rec.take(), "platform"
		}}}
	}},
}

type fixedClock time.Time

func (c fixedClock) Now() time.Time { return time.Time(c) }

// Every change must be attributable: every operation of the table that changes something writes exactly one audit
// record naming its caller, through each surface that offers it; and every such operation
// is offered by some surface here.
func TestEveryOperationAuditedOnce(t *testing.T) {
	testenv.Integration(t)
	f := setup(t)
	ctx := context.Background()
	_, err := f.ops.Sync(ctx, ops.Actor{Kind: ops.CLI, Name: "cli:setup"}, f.manifestOf(t))
	require.NoError(t, err)
	_, _, err = f.app.Admin.ClaimApp(ctx, f.name, f.stackID, "Timers")
	require.NoError(t, err)
	require.NoError(t, f.app.Admin.UnclaimApp(ctx, f.name, f.stackID))
	f.rec.take()

	covered := map[string]bool{}
	for _, s := range surfaces {
		for _, c := range s.calls(t, f) {
			t.Run(s.name+"/"+c.op, func(t *testing.T) {
				o, ok := ops.Lookup(c.op)
				require.True(t, ok, c.op)
				recs, who := c.do(t)
				require.Len(t, recs, 1, "%s through %s: %+v", c.op, s.name, recs)
				require.Equal(t, who, recs[0].Who)
				if o.Audit == audit.CalendarEdit {
					require.Equal(t, audit.CalendarEdit+f.cal, recs[0].Action)
				} else {
					require.Equal(t, o.Audit, recs[0].Action)
				}
				require.NoError(t, audit.Validate(recs[0]))
				covered[c.op] = true
			})
		}
	}
	for _, o := range ops.Table {
		if !o.Read() {
			require.True(t, covered[o.Name], "operation %s is audited through no surface of this test", o.Name)
		}
	}
}
