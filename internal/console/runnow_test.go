package console_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/audit"
	"github.com/sundialhq/sundial/internal/timer"
)

func strp(s string) *string { return &s }

var reloadParams = timer.Params{
	{Name: "limit", Type: timer.ParamInteger, Default: strp("100"), Description: "rows per batch"},
	{Name: "day", Type: timer.ParamDate, Required: true},
	{Name: "mode", Type: timer.ParamEnum, Values: []string{"full", "delta"}, Default: strp("delta")},
	{Name: "dry", Type: timer.ParamBoolean},
}

// Run Now with parameters through the API: a refusal answers 400 with every field's error
// and writes nothing (no next run, no overrides, no audit record); accepted, the overrides
// are stored typed with the next run and in the Run Now's audit record.
func TestRunNowParametersAPI(t *testing.T) {
	t.Parallel()
	f := setup(t)
	key := f.create(t, "Reload", "every 1h", func(in *timer.Instance) { in.Parameters = reloadParams })
	before := f.get(t, key)

	for _, c := range []struct {
		body   string
		fields []timer.ParamError
	}{
		{`{"parameters":{"colour":"red","day":"2026-11-02"}}`, []timer.ParamError{{Name: "colour", Message: "not a parameter of this timer (declared: limit, day, mode, dry)"}}},
		{`{"parameters":{"limit":"ten","day":"2026-11-02"}}`, []timer.ParamError{{Name: "limit", Message: `integer: "ten" is not an integer`}}},
		{`{"parameters":{"limit":1.5,"day":"2026-11-02"}}`, []timer.ParamError{{Name: "limit", Message: "integer: 1.5 is not an integer"}}},
		{`{"parameters":{"dry":"maybe","day":"2026-11-02"}}`, []timer.ParamError{{Name: "dry", Message: `boolean: "maybe" is not a boolean (true or false)`}}},
		{`{"parameters":{"day":"02/11/2026"}}`, []timer.ParamError{{Name: "day", Message: `date: "02/11/2026" is not a date (YYYY-MM-DD)`}}},
		{`{"parameters":{"mode":"half","day":"2026-11-02"}}`, []timer.ParamError{{Name: "mode", Message: `enum: "half" is not one of full, delta`}}},
		{``, []timer.ParamError{{Name: "day", Message: "required: give a value"}}},
		{`{"parameters":{"limit":"x","mode":"y"}}`, []timer.ParamError{{Name: "limit", Message: `integer: "x" is not an integer`},
			{Name: "mode", Message: `enum: "y" is not one of full, delta`}, {Name: "day", Message: "required: give a value"}}},
	} {
		status, body, _ := f.do(t, "POST", timerPath(key)+"/run-now", f.token, c.body)
		require.Equal(t, http.StatusBadRequest, status, body)
		var e struct {
			Error  string
			Fields []timer.ParamError
		}
		require.NoError(t, json.Unmarshal([]byte(body), &e))
		require.Equal(t, c.fields, e.Fields, c.body)
		require.Contains(t, e.Error, "parameter "+c.fields[0].Name+": ")
	}
	status, body, _ := f.do(t, "POST", timerPath(key)+"/run-now", f.token, `{"parameters":{"day":"2026-11-02"},"extra":1}`)
	require.Equal(t, http.StatusBadRequest, status, body)
	after := f.get(t, key)
	require.Equal(t, before.NextRun, after.NextRun, "a refused Run Now writes nothing")
	require.Empty(t, after.RunParams)

	status, body, _ = f.do(t, "POST", timerPath(key)+"/run-now", f.token, `{"parameters":{"day":"2026-11-02","limit":7,"dry":"true"}}`)
	require.Equal(t, http.StatusOK, status, body)
	in := f.get(t, key)
	require.JSONEq(t, `{"day":"2026-11-02","limit":7,"dry":true}`, in.RunParams)
	require.True(t, in.NextRun.Before(before.NextRun))
	require.Equal(t, map[string]any{"limit": int64(7), "day": "2026-11-02", "mode": "delta", "dry": true},
		in.Parameters.Values(in.RunOverrides()), "the run's payload: defaults overlaid with the overrides")

	status, body, _ = f.do(t, "GET", "/api/audit?timer="+key.Timer, f.token, "")
	require.Equal(t, http.StatusOK, status, body)
	var runNows []audit.Record
	for _, r := range decode[audit.Page](t, body).Items {
		if r.Action == audit.RunNow {
			runNows = append(runNows, r)
		}
	}
	require.Len(t, runNows, 1, "only the accepted Run Now is recorded")
	require.Equal(t, map[string]any{"parameters": map[string]any{"day": "2026-11-02", "limit": 7.0, "dry": true}}, runNows[0].After)

	// A timer without parameters refuses any, and runs as before without.
	plain := f.create(t, "Plain", "every 1h", nil)
	status, body, _ = f.do(t, "POST", timerPath(plain)+"/run-now", f.token, `{"parameters":{"x":"1"}}`)
	require.Equal(t, http.StatusBadRequest, status, body)
	require.Contains(t, body, "parameter x: not a parameter of this timer (it declares none)")
	status, body, _ = f.do(t, "POST", timerPath(plain)+"/run-now", f.token, "")
	require.Equal(t, http.StatusOK, status, body)
}

// The timer page of a timer with parameters renders a Run Now form (typed inputs, an enum
// and a boolean as selects, the required one marked); posted, its values are the Run Now's
// overrides (an empty field takes the default), and the execution view shows a run's.
func TestRunNowParametersForm(t *testing.T) {
	t.Parallel()
	f := setup(t)
	key := f.create(t, "Form", "every 1h", func(in *timer.Instance) { in.Parameters = reloadParams })
	b := f.login(t)
	status, page, _ := b.send(t, "GET", "/timers/"+keyPath(key), nil, "")
	require.Equal(t, http.StatusOK, status, page)
	for _, want := range []string{
		`<form method="post" action="/timers/` + keyPath(key) + `/run-now" id="run-now-form"`,
		`<input id="param-limit" name="param.limit" type="number" step="1" placeholder="default: 100">`,
		`rows per batch`,
		`<label for="param-day">day</label> <span class="badge" title="every Run Now gives it">required</span>`,
		`<input id="param-day" name="param.day" type="date" required>`,
		`<select id="param-mode" name="param.mode"><option value="">default (delta)</option><option value="full">full</option><option value="delta">delta</option></select>`,
		`<select id="param-dry" name="param.dry"><option value="">none</option><option value="true">true</option><option value="false">false</option></select>`,
	} {
		require.Contains(t, page, want)
	}
	csrf := csrfField.FindStringSubmatch(page)[1]

	before := f.get(t, key)
	status, page, _ = b.send(t, "POST", "/timers/"+keyPath(key)+"/run-now", url.Values{"csrf": {csrf}, "param.day": {""}, "param.limit": {"5"}, "param.mode": {""}}, "")
	require.Equal(t, http.StatusBadRequest, status, page)
	require.Contains(t, page, "parameter day: required: give a value")
	require.Equal(t, before.NextRun, f.get(t, key).NextRun)
	status, page, _ = b.send(t, "POST", "/timers/"+keyPath(key)+"/run-now", url.Values{"csrf": {csrf}, "param.day": {"2026-11-02"}, "param.limit": {"5"}, "param.mode": {"full"}, "param.dry": {""}}, "")
	require.Equal(t, http.StatusSeeOther, status, page)
	require.JSONEq(t, `{"day":"2026-11-02","limit":5,"mode":"full"}`, f.get(t, key).RunParams)

	// The backfill form has the same fields; posted, the backfill carries the overrides.
	status, page, _ = b.send(t, "GET", "/timers/"+keyPath(key), nil, "")
	require.Equal(t, http.StatusOK, status, page)
	require.Contains(t, page, `<input id="bf-param-day" name="param.day" type="date" required>`)
	to := time.Now().UTC().Add(-time.Minute).Truncate(time.Second)
	bf := url.Values{"csrf": {csrf}, "from": {to.Add(-3 * time.Hour).Format(time.RFC3339)}, "to": {to.Format(time.RFC3339)}, "param.mode": {"half"}}
	status, page, _ = b.send(t, "POST", "/timers/"+keyPath(key)+"/backfill", bf, "")
	require.Equal(t, http.StatusBadRequest, status, page)
	require.Contains(t, page, `parameter mode: enum: &#34;half&#34; is not one of full, delta`)
	require.Contains(t, page, "parameter day: required: give a value")
	bf.Set("param.mode", "full")
	bf.Set("param.day", "2026-10-01")
	status, page, _ = b.send(t, "POST", "/timers/"+keyPath(key)+"/backfill", bf, "")
	require.Equal(t, http.StatusSeeOther, status, page)
	status, body, _ := f.do(t, "GET", apiTimerPath(key)+"/backfill", f.token, "")
	require.Equal(t, http.StatusOK, status, body)
	var st struct{ Parameters string }
	require.NoError(t, json.Unmarshal([]byte(body), &st))
	require.JSONEq(t, `{"day":"2026-10-01","mode":"full"}`, st.Parameters)

	// A timer without parameters keeps its one-click button.
	plain := f.create(t, "PlainForm", "every 1h", nil)
	status, page, _ = b.send(t, "GET", "/timers/"+keyPath(plain), nil, "")
	require.Equal(t, http.StatusOK, status, page)
	require.Contains(t, page, `<button type="submit" id="run-now" class="primary">Run Now</button>`)
	require.NotContains(t, page, `id="run-now-form"`)

	// The execution view shows a run's overrides.
	done := time.Now().UTC().Truncate(time.Millisecond)
	e := timer.Execution{Key: key, ExecutionID: "par-1", ScheduledAt: done, ShouldHaveRunAt: done, StartedAt: done, Duration: time.Second,
		ExecutedBy: "n", Attempt: 1, Outcome: timer.OutcomeSuccess, Parameters: map[string]any{"day": "2026-11-02", "limit": 5}}
	require.NoError(t, f.app.Store.PutExecution(context.Background(), e))
	status, body, _ = f.do(t, "GET", "/api/apps/"+key.AppName()+"/logs?timer="+url.QueryEscape(key.Timer), f.token, "")
	require.Equal(t, http.StatusOK, status, body)
	var lp struct {
		Items []struct {
			Ref        string
			Parameters map[string]any
		}
	}
	require.NoError(t, json.Unmarshal([]byte(body), &lp))
	require.Len(t, lp.Items, 1)
	require.Equal(t, map[string]any{"day": "2026-11-02", "limit": 5.0}, lp.Items[0].Parameters)
	status, page, _ = b.send(t, "GET", "/logs/entry?timer="+url.QueryEscape(key.String())+"&ref="+url.QueryEscape(lp.Items[0].Ref), nil, "")
	require.Equal(t, http.StatusOK, status, page)
	require.Contains(t, page, `<table id="entry-parameters"><tbody><tr><th>day</th><td><code>2026-11-02</code></td></tr><tr><th>limit</th><td><code>5</code></td></tr></tbody></table>`)
}

// A Run Now without overrides replaces a pending one's: its run gets the defaults.
func TestRunNowParametersReplaced(t *testing.T) {
	t.Parallel()
	f := setup(t)
	key := f.create(t, "Replaced", "every 1h", func(in *timer.Instance) {
		in.Parameters = timer.Params{{Name: "limit", Type: timer.ParamInteger, Default: strp("100")}}
	})
	status, body, _ := f.do(t, "POST", timerPath(key)+"/run-now", f.token, `{"parameters":{"limit":7}}`)
	require.Equal(t, http.StatusOK, status, body)
	require.JSONEq(t, `{"limit":7}`, f.get(t, key).RunParams)
	status, body, _ = f.do(t, "POST", timerPath(key)+"/run-now", f.token, "")
	require.Equal(t, http.StatusOK, status, body)
	in := f.get(t, key)
	require.Empty(t, in.RunOverrides())
	require.Equal(t, map[string]any{"limit": int64(100)}, in.Parameters.Values(in.RunOverrides()))
}
