package auditwriter

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/audit"
)

type trail struct{ got []audit.Record }

func (t *trail) Add(_ context.Context, r audit.Record) error {
	t.got = append(t.got, r)
	return nil
}

var now = time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)

// The writer appends a valid record with its own id and time, and refuses anything else
// with a *Refused naming what is wrong, appending nothing.
func TestHandle(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", audit.MaxWho+1)
	for name, tc := range map[string]struct{ req, want string }{
		"a run-now":           {`{"record":{"who":"ann","action":"run-now","app":"billing","timer":"Nightly"}}`, ""},
		"a calendar edit":     {`{"record":{"who":"ann","action":"calendar edit holidays","app":"billing","after":{"dates":["2026-12-25"]}}}`, ""},
		"not JSON":            {`{"record":`, "is not {\"record\": {...}}"},
		"no record":           {`{}`, "has no record"},
		"another key":         {`{"record":{"who":"ann","action":"run-now"},"as":"admin"}`, "is not {\"record\": {...}}"},
		"an unknown field":    {`{"record":{"who":"ann","action":"run-now","role":"admin"}}`, "is not an audit record"},
		"an unknown action":   {`{"record":{"who":"ann","action":"drop-table"}}`, `unknown action "drop-table"`},
		"no who":              {`{"record":{"action":"run-now"}}`, "who is empty"},
		"a blank who":         {`{"record":{"who":"  ","action":"run-now"}}`, "who is empty"},
		"a long who":          {`{"record":{"who":"` + long + `","action":"run-now"}}`, "who is 2049 bytes, over 2048"},
		"its own id":          {`{"record":{"id":"x","who":"ann","action":"run-now"}}`, "the writer sets both"},
		"its own time":        {`{"record":{"at":"2020-01-01T00:00:00Z","who":"ann","action":"run-now"}}`, "the writer sets both"},
		"a bad app":           {`{"record":{"who":"ann","action":"run-now","app":"a/b"}}`, "app name"},
		"an unnamed calendar": {`{"record":{"who":"ann","action":"calendar edit ","app":"billing"}}`, "names its calendar"},
		"huge values": {`{"record":{"who":"ann","action":"edit","after":{"schedule":"` + strings.Repeat("y", audit.MaxValues) + `"}}}`,
			"after is 8207 bytes of JSON, over 8192"},
		"a huge request": {`{"record":{"who":"ann","action":"run-now","reason":"` + strings.Repeat("z", MaxRequest) + `"}}`, "over 65536"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tr := &trail{}
			h := Handler{Trail: tr, Now: func() time.Time { return now }}
			resp, err := h.Handle(context.Background(), json.RawMessage(tc.req))
			if tc.want == "" {
				require.NoError(t, err)
				require.Len(t, tr.got, 1)
				require.Equal(t, now, tr.got[0].At, "the writer's clock")
				require.Equal(t, resp.ID, tr.got[0].ID)
				require.NotEmpty(t, resp.ID)
				return
			}
			var ref *Refused
			require.ErrorAs(t, err, &ref)
			require.ErrorContains(t, err, tc.want)
			require.Empty(t, tr.got, "nothing appended")
		})
	}
}
