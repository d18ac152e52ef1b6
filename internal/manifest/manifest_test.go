package manifest

import (
	"cmp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/timer"
)

const good = `timers:
  - name: Tick
    schedule: "every 2s"
    action: {http: {url: "http://127.0.0.1:9000/hook"}}
  - name: Nightly
    schedule: "02:00 10:00 18:00"
    timezone: Europe/Lisbon
    priority: 1
    timeout: 2h
    maxRetries: 5
    retryDelay: 1m
    active: false
    action: {lambda: {function: sundial-action-archive}}
    properties: {batch: "100"}
`

func TestParse(t *testing.T) {
	t.Parallel()

	t.Run("AppliesDefaults", func(t *testing.T) {
		t.Parallel()
		m, err := Parse(strings.NewReader(good))
		require.NoError(t, err)
		require.Len(t, m.Timers, 2)
		d := Defaults{MaxRetries: 3, RetryDelay: 10 * time.Second}
		tick := m.Timers[0].Settings(d)
		require.Equal(t, timer.DefaultPriority, tick.Priority)
		require.Equal(t, timer.DefaultTimeout, tick.Timeout)
		require.Equal(t, 3, tick.MaxRetries)
		require.Equal(t, 10*time.Second, tick.RetryDelay)
		require.True(t, m.Timers[0].IsActive())
		nightly := m.Timers[1].Settings(d)
		require.Equal(t, 1, nightly.Priority)
		require.Equal(t, 2*time.Hour, nightly.Timeout)
		require.Equal(t, 5, nightly.MaxRetries)
		require.Equal(t, time.Minute, nightly.RetryDelay)
		require.Equal(t, "100", nightly.Properties["batch"])
		require.False(t, m.Timers[1].IsActive())
	})

	t.Run("NamesTheTimerAndFieldOfEveryProblem", func(t *testing.T) {
		t.Parallel()
		entry := func(fields string) string {
			return "timers:\n  - name: T\n    action: {http: {url: \"http://h/\"}}\n" + fields
		}
		cases := map[string]struct{ yaml, want string }{
			"bad schedule":     {entry("    schedule: \"25:00\"\n"), `timers[0] "T": schedule: schedule "25:00": hour 25`},
			"missing schedule": {entry(""), `timers[0] "T": schedule:`},
			"bad zone":         {entry("    schedule: \"16:15\"\n    timezone: Mars/Base\n"), `timers[0] "T": timezone: unknown time zone "Mars/Base"`},
			"priority":         {entry("    schedule: \"16:15\"\n    priority: 5\n"), `priority: 5 is out of range 1 (highest) to 4 (lowest)`},
			"timeout":          {entry("    schedule: \"16:15\"\n    timeout: 0s\n"), `timeout: 0s is out of range`},
			"timeout syntax":   {entry("    schedule: \"16:15\"\n    timeout: soon\n"), `want a duration such as 20m or 10s, got "soon"`},
			"retries":          {entry("    schedule: \"16:15\"\n    maxRetries: -1\n"), `maxRetries: -1 is out of range`},
			"unknown field":    {entry("    schedule: \"16:15\"\n    shedule: x\n"), `timers[0] "T": unknown field "shedule"; did you mean "schedule"?`},
			"no action":        {"timers:\n  - name: T\n    schedule: \"16:15\"\n", `timers[0] "T": action:`},
			"bad name":         {"timers:\n  - name: \"<script>\"\n    schedule: \"16:15\"\n    action: {http: {url: \"http://h/\"}}\n", `name: "<script>" must match`},
			"duplicate":        {entry("    schedule: \"16:15\"\n  - name: T\n    schedule: \"16:15\"\n    action: {http: {url: \"http://h/\"}}\n"), `timers[1] "T": name: duplicate timer name`},
			"empty file":       {"", "empty manifest"},
			"not a list":       {"timers: 3\n", `line 1: timers: want a list, got "3"`},
			"misfire":          {entry("    schedule: \"16:15\"\n    misfire: replay\n"), `misfire: "replay"; expected "run-once" (default) or "skip"`},
			"overlap":          {entry("    schedule: \"16:15\"\n    overlap: queue\n"), `timers[0] "T": overlap: "queue"; expected "skip", "buffer-one", "buffer-all", "cancel-other" (skip is the default)`},
			"cancel async":     {entry("    schedule: \"16:15\"\n    overlap: cancel-other\n    async: true\n    timeout: 1h\n"), `overlap: "cancel-other" needs a synchronous action`},
			"dst":              {entry("    schedule: \"16:15\"\n    dst: Skip\n"), `timers[0] "T": dst "Skip": expected "shift" (a time the clocks skip fires at the instant the old offset gives; the default) or "skip"`},
			"dst unknown":      {entry("    schedule: \"16:15\"\n    dst: none\n"), `dst "none": expected "shift"`},
			"H backwards":      {entry("    schedule: \"H(5-2) * * * *\"\n"), `timers[0] "T": schedule: schedule "H(5-2) * * * *": minute field "H(5-2)": range "H(5-2)" runs backwards`},
			"H step 0":         {entry("    schedule: \"H/0 * * * *\"\n"), `minute field "H/0": step "0" must be a positive integer`},
			"H in year":        {entry("    schedule: \"cron(0 0 1 1 ? H)\"\n"), `year field "H": H cannot be used in the year field`},
		}
		for name, tc := range cases {
			_, err := Parse(strings.NewReader(tc.yaml))
			require.ErrorIs(t, err, errkind.Invalid, name)
			require.ErrorContains(t, err, tc.want, name)
		}
	})

	t.Run("DSTPolicy", func(t *testing.T) {
		t.Parallel()
		for dst, want := range map[string]string{"": "", "    dst: shift\n": "", "    dst: skip\n": "skip"} {
			m, err := Parse(strings.NewReader("timers:\n  - name: T\n    schedule: \"02:30\"\n    timezone: Europe/London\n" + dst +
				"    action: {http: {url: \"http://h/\"}}\n"))
			require.NoError(t, err, dst)
			require.Equal(t, want, m.Timers[0].Settings(Defaults{}).DST, "stored as the instance keeps it: %q", dst)
		}
	})

	t.Run("OverlapPolicy", func(t *testing.T) {
		t.Parallel()
		for field, want := range map[string]string{"": "", "    overlap: skip\n": "", "    overlap: buffer-one\n": timer.OverlapBufferOne,
			"    overlap: buffer-all\n": timer.OverlapBufferAll, "    overlap: cancel-other\n": timer.OverlapCancelOther} {
			m, err := Parse(strings.NewReader("timers:\n  - name: T\n    schedule: every 1m\n" + field + "    action: {http: {url: \"http://h/\"}}\n"))
			require.NoError(t, err, field)
			st := m.Timers[0].Settings(Defaults{})
			require.Equal(t, want, st.Overlap, "skip, the default, is stored as nothing: %q", field)
			require.Equal(t, cmp.Or(want, timer.OverlapSkip), st.OverlapPolicy())
		}
	})

	t.Run("SpreadIsValidForTheTimer", func(t *testing.T) {
		t.Parallel()
		for _, expr := range []string{"H H(2-4) * * *", "H/15 * * * * ?", "every 5m spread", "H:H Mon"} {
			_, err := Parse(strings.NewReader("app: billing\ntimers:\n  - name: T\n    schedule: \"" + expr + "\"\n    action: {http: {url: \"http://h/\"}}\n"))
			require.NoError(t, err, expr)
		}
	})

	t.Run("ReportsAllProblemsAtOnce", func(t *testing.T) {
		t.Parallel()
		_, err := Parse(strings.NewReader("timers:\n  - name: A\n    schedule: \"99:99\"\n    priority: 9\n    action: {http: {url: \"http://h/\"}}\n  - name: B\n    schedule: \"every 0s\"\n    action: {http: {url: \"http://h/\"}}\n"))
		require.ErrorContains(t, err, `timers[0] "A": schedule`)
		require.ErrorContains(t, err, `timers[0] "A": priority`)
		require.ErrorContains(t, err, `timers[1] "B": schedule`)
	})

	t.Run("RefusesOversizedFiles", func(t *testing.T) {
		t.Parallel()
		_, err := Parse(strings.NewReader("# " + strings.Repeat("x", MaxFileBytes)))
		require.ErrorContains(t, err, "larger than")
	})
}

func FuzzParse(f *testing.F) {
	f.Add(good)
	f.Add("timers:\n  - name: x\n")
	f.Fuzz(func(t *testing.T, doc string) {
		m, err := Parse(strings.NewReader(doc))
		if err != nil {
			require.ErrorIs(t, err, errkind.Invalid)
			return
		}
		require.NoError(t, m.Validate(), "a parsed manifest is valid")
	})
}

func TestParseRetryCycle(t *testing.T) {
	t.Parallel()
	good := map[string]struct {
		n int
		d time.Duration
	}{
		"R3/PT10M":     {3, 10 * time.Minute},
		"R5/PT30S":     {5, 30 * time.Second},
		"R1/P1D":       {1, 24 * time.Hour},
		"R2/PT1H30M":   {2, 90 * time.Minute},
		"R0/PT1S":      {0, time.Second},
		"R10/PT1H1M1S": {10, time.Hour + time.Minute + time.Second},
	}
	for s, want := range good {
		n, d, err := ParseRetryCycle(s)
		require.NoError(t, err, s)
		require.Equal(t, want.n, n, s)
		require.Equal(t, want.d, d, s)
	}
	for _, s := range []string{"", "R3", "R3/10M", "R/PT10M", "3/PT10M", "R3/PT", "R3/P", "R3/PT10X", "R101/PT1M", "R3/P2D", "r3/pt10m"} {
		_, _, err := ParseRetryCycle(s)
		require.Error(t, err, s)
	}
	m, err := Parse(strings.NewReader("timers:\n  - name: T\n    schedule: \"16:15\"\n    retry: R3/PT10M\n    retryBackoff: exponential\n    action: {http: {url: \"http://h/\"}}\n"))
	require.NoError(t, err)
	st := m.Timers[0].Settings(Defaults{MaxRetries: 1, RetryDelay: time.Second})
	require.Equal(t, 3, st.MaxRetries)
	require.Equal(t, 10*time.Minute, st.RetryDelay)
	require.Equal(t, "exponential", st.RetryBackoff)
	_, err = Parse(strings.NewReader("timers:\n  - name: T\n    schedule: \"16:15\"\n    retry: R3/PT10M\n    maxRetries: 2\n    action: {http: {url: \"http://h/\"}}\n"))
	require.ErrorContains(t, err, "not both")
}

func TestExpand(t *testing.T) {
	t.Parallel()
	d := Defaults{MaxRetries: 3, RetryDelay: time.Second}
	parse := func(y string) Timer {
		m, err := Parse(strings.NewReader(y))
		require.NoError(t, err)
		return m.Timers[0]
	}
	keys := func(ds []Desired) []string {
		var out []string
		for _, x := range ds {
			out = append(out, x.Key.String())
		}
		return out
	}
	for name, tc := range map[string]struct {
		yaml    string
		tenants []string
		want    []string
	}{
		"plain":                      {"timers:\n  - {name: T, schedule: \"every 1m\", action: {http: {url: \"http://h/\"}}}\n", []string{"a"}, []string{"T"}},
		"multi-tenant":               {"timers:\n  - {name: T, schedule: \"every 1m\", multiTenant: true, action: {http: {url: \"http://h/\"}}}\n", []string{"a", "b"}, []string{"T@a", "T@b"}},
		"multi-tenant and no tenant": {"timers:\n  - {name: T, schedule: \"every 1m\", multiTenant: true, action: {http: {url: \"http://h/\"}}}\n", nil, nil},
		"shards":                     {"timers:\n  - {name: T, schedule: \"every 1m\", shards: 3, action: {http: {url: \"http://h/\"}}}\n", nil, []string{"T-0", "T-1", "T-2"}},
		"shards per tenant":          {"timers:\n  - {name: T, schedule: \"every 1m\", shards: 2, multiTenant: true, action: {http: {url: \"http://h/\"}}}\n", []string{"a", "b"}, []string{"T-0@a", "T-0@b", "T-1@a", "T-1@b"}},
	} {
		t.Run(name, func(t *testing.T) {
			got := parse(tc.yaml).Expand(tc.tenants, d)
			require.Equal(t, tc.want, keys(got))
		})
	}
	// Each shard gets its own properties map with its index; the entry's map is untouched.
	tm := parse("timers:\n  - {name: T, schedule: \"every 1m\", shards: 2, properties: {batch: \"100\"}, action: {http: {url: \"http://h/\"}}}\n")
	got := tm.Expand(nil, d)
	require.Equal(t, map[string]string{"batch": "100", "tt_index": "0", "tt_total": "2"}, got[0].Settings.Properties)
	require.Equal(t, map[string]string{"batch": "100", "tt_index": "1", "tt_total": "2"}, got[1].Settings.Properties)
	require.Equal(t, map[string]string{"batch": "100"}, tm.Properties)
	require.Equal(t, "T", got[1].Entry)
}

// Bad lifecycle fields: each error names the entry (or tenants) and the field.
func TestLifecycleValidation(t *testing.T) {
	t.Parallel()
	const a = `action: {http: {url: "http://h/"}}`
	for yaml, want := range map[string]string{
		"timers:\n  - {name: T, schedule: \"every 1m\", shards: -1, " + a + "}\n":                                                    `timers[0] "T": shards: -1 is out of range 1..100`,
		"timers:\n  - {name: T, schedule: \"every 1m\", shards: 101, " + a + "}\n":                                                   `timers[0] "T": shards: 101 is out of range`,
		"timers:\n  - {name: T, schedule: \"every 1m\", shards: 2, properties: {tt_total: \"9\"}, " + a + "}\n":                      `timers[0] "T": properties: tt_total is set by shards: 2`,
		"timers:\n  - {name: T, schedule: \"every 1m\", shards: 2, " + a + "}\n  - {name: T-0, schedule: \"every 1m\", " + a + "}\n": `timers[1] "T-0": name: runtime timer "T-0" is also made by timers[0] "T"`,
		"timers:\n  - {name: " + strings.Repeat("x", 127) + ", schedule: \"every 1m\", shards: 10, " + a + "}\n":                     `shards: instance name`,
		"tenants: [\"\"]\ntimers: []\n": `tenants[0]: "" must match`,
		"tenants: [a, a]\ntimers: []\n": `tenants[1]: duplicate tenant "a"`,
		"timers:\n  - {name: T, schedule: \"every 1m\", multiTenant: yes-please, " + a + "}\n": `line 2: timers[0] "T": multiTenant: want true or false, got "yes-please"`,
	} {
		_, err := Parse(strings.NewReader(yaml))
		require.ErrorIs(t, err, errkind.Invalid, yaml)
		require.ErrorContains(t, err, want, yaml)
	}
}
