package main

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/functions/internal/lambdatest"
	"github.com/sundialhq/sundial/internal/audit"
	"github.com/sundialhq/sundial/internal/auditwriter"
	"github.com/sundialhq/sundial/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// The sample request goes through the handler main.go starts, with the writer's role (its
// calls checked by the local endpoint): the record is appended to the chain with the writer's
// id and time; a malformed one is refused, naming what is wrong.
func TestSampleEvent(t *testing.T) {
	ctx := context.Background()
	cfg, outs := lambdatest.Env(t, "auditwriter", nil)
	out, err := lambdatest.Invoke(t, "auditwriter", handler(ctx), 30*time.Second, []byte(`{"record":{"who":"ann","action":"drop-table"}}`))
	require.ErrorContains(t, err, `the audit writer refused the record: invalid input: audit record: unknown action "drop-table"`)
	require.Nil(t, out)

	sample, _ := lambdatest.Event[auditwriter.Request](t)
	out, err = lambdatest.Invoke(t, "auditwriter", handler(ctx), 30*time.Second, sample)
	require.NoError(t, err)
	var resp auditwriter.Response
	require.NoError(t, json.Unmarshal(out, &resp))
	require.NotEmpty(t, resp.ID)

	a := lambdatest.App(t, cfg, outs)
	recs, err := a.AuditDirect().List(ctx, audit.Query{App: "billing", Who: "arn:aws:iam::123456789012:user/ann", Limit: audit.MaxLimit})
	require.NoError(t, err)
	var found bool
	for _, r := range recs {
		found = found || (r.ID == resp.ID && r.Action == audit.RunNow && r.Timer == "Nightly")
	}
	require.True(t, found, "the record is in the trail: %+v", recs)
	rep, err := a.AuditDirect().Verify(ctx, resp.At.Add(-time.Minute))
	require.NoError(t, err)
	require.True(t, rep.OK(), "%+v", rep.Findings)
}
