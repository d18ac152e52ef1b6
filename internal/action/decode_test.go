package action

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/actionkit"
	"github.com/sundialhq/sundial/internal/timer"
)

func TestDecodeResult(t *testing.T) {
	t.Parallel()
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name    string
		body    string
		want    *time.Time
		wantErr string
	}{
		{"empty", "", nil, ""},
		{"plain text", "ok", nil, ""},
		{"broken json", `{"nextRun":`, nil, ""},
		{"array", `["nextRun"]`, nil, ""},
		{"string", `"2030-01-02T03:04:05Z"`, nil, ""},
		{"no key", `{"status":"done"}`, nil, ""},
		{"wrong case is not the key", `{"NextRun":"2030-01-02T03:04:05Z"}`, nil, ""},
		{"null", `{"nextRun":null}`, nil, ""},
		{"utc", ` {"nextRun":"2030-01-02T03:04:05Z"} `, &at, ""},
		{"offset normalised", `{"nextRun":"2030-01-02T05:04:05+02:00"}`, &at, ""},
		{"fraction", `{"nextRun":"2030-01-02T03:04:05.5Z"}`, ptr(at.Add(500 * time.Millisecond)), ""},
		{"not a time", `{"nextRun":"tomorrow"}`, nil, `invalid nextRun "tomorrow"`},
		{"no zone", `{"nextRun":"2030-01-02T03:04:05"}`, nil, "must be an RFC3339 time"},
		{"empty string", `{"nextRun":""}`, nil, "invalid nextRun"},
		{"number", `{"nextRun":1893553445}`, nil, "must be an RFC3339 string"},
		{"object", `{"nextRun":{}}`, nil, "must be an RFC3339 string"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := decodeResult([]byte(tc.body))
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				require.Nil(t, got)
				return
			}
			require.NoError(t, err)
			if tc.want == nil {
				require.Nil(t, got)
				return
			}
			require.NotNil(t, got)
			require.True(t, tc.want.Equal(*got), "got %v", got)
			require.Equal(t, time.UTC, got.Location())
		})
	}
}

func TestExcerpt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"short", "boom", "boom"},
		{"trimmed", "  Internal Server Error\n", "Internal Server Error"},
		{"exact limit", strings.Repeat("a", 512), strings.Repeat("a", 512)},
		{"ascii cut", strings.Repeat("a", 600), strings.Repeat("a", 512)},
		// 171 three-byte runes = 513 bytes: the last one must go whole, not be split.
		{"rune boundary", strings.Repeat("€", 171), strings.Repeat("€", 170)},
		{"invalid bytes replaced", "a\xffb", "a\uFFFDb"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := Excerpt([]byte(tc.in))
			require.Equal(t, tc.want, got)
			require.True(t, utf8.ValidString(got))
			require.LessOrEqual(t, len(got), excerptMax)
		})
	}
}

// FuzzDecodeResult: any response body must decode without panicking, and its excerpt must be
// bounded, valid UTF-8 and faithful to valid input.
func FuzzDecodeResult(f *testing.F) {
	for _, seed := range []string{
		"", "ok", `{"nextRun":"2030-01-02T03:04:05Z"}`, `{"nextRun":"x"}`, `{"nextRun":1}`,
		`{"nextRun":null}`, `{"a":[1,{"b":2}]}`, "\xff\xfe", strings.Repeat("€", 200), `{"nextRun":"` + strings.Repeat("9", 100) + `"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		next, err := decodeResult(body)
		if err != nil {
			require.Nil(t, next)
			require.True(t, utf8.ValidString(err.Error()))
		}
		if next != nil {
			require.Equal(t, time.UTC, next.Location())
		}
		ex := Excerpt(body)
		require.LessOrEqual(t, len(ex), excerptMax)
		require.True(t, utf8.ValidString(ex))
		if utf8.Valid(body) {
			require.Contains(t, string(body), ex)
		}
	})
}

func ptr[T any](v T) *T { return &v }

func TestOutput(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("ab", 600)
	for _, tc := range []struct {
		name, body string
		cut        bool
		want       string
	}{
		{"kept whole, trimmed", " {\"sent\":3}\n", false, `{"sent":3}`},
		{"no answer", "  \n", false, ""},
		{"a Go Lambda function's nil answer", "null", false, ""},
		{"plain text is an answer too", "done", false, "done"},
		{"exactly the bound", long[:actionkit.OutputMaxBytes], false, long[:actionkit.OutputMaxBytes]},
		{"over the bound: cut and marked", long, false, long[:actionkit.OutputMaxBytes-len(actionkit.OutputTruncated)] + actionkit.OutputTruncated},
		{"a body the reader cut is marked", "{\"a\":", true, "{\"a\":" + actionkit.OutputTruncated},
		{"invalid UTF-8 replaced", "ok \xff", false, "ok \uFFFD"},
	} {
		got := output([]byte(tc.body), tc.cut)
		require.Equal(t, tc.want, got, tc.name)
		require.LessOrEqual(t, len(got), actionkit.OutputMaxBytes, tc.name)
		require.True(t, utf8.ValidString(got), tc.name)
	}
}

func TestDecodeAnswerReport(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body string
		want       timer.Report
		err        string
	}{
		{name: "none", body: `{"sent":3}`},
		{name: "all", body: `{"summary":" 1200 rows ","counters":{"rows":1200,"skipped":0.5},"warnings":["late feed"]}`,
			want: timer.Report{Summary: "1200 rows", Counters: map[string]float64{"rows": 1200, "skipped": 0.5}, Warnings: []string{"late feed"}}},
		{name: "one warning as a string", body: `{"warnings":"late feed"}`, want: timer.Report{Warnings: []string{"late feed"}}},
		{name: "nulls", body: `{"summary":null,"counters":null,"warnings":null}`},
		{name: "empty warnings dropped", body: `{"warnings":["", "  "]}`},
		{name: "long summary cut", body: `{"summary":"` + strings.Repeat("a", 2000) + `"}`,
			want: timer.Report{Summary: strings.Repeat("a", timer.SummaryMaxBytes-len(timer.Truncated)) + timer.Truncated}},
		{name: "summary not a string", body: `{"summary":42}`, err: `invalid "summary" 42: must be a string`},
		{name: "counter not a number", body: `{"counters":{"rows":"many"}}`, err: `invalid "counters"`},
		{name: "bad counter name", body: `{"counters":{"row count":1}}`, err: `counter name "row count" must match`},
		{name: "warnings not strings", body: `{"warnings":[1]}`, err: `invalid "warnings"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a, err := decodeAnswer([]byte(tc.body))
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, a.Report)
		})
	}
	many := `{"warnings":[` + strings.TrimSuffix(strings.Repeat(`"w",`, 15), ",") + `]}`
	a, err := decodeAnswer([]byte(many))
	require.NoError(t, err)
	require.Len(t, a.Report.Warnings, timer.MaxWarnings)
	require.Equal(t, "…and 6 more warnings", a.Report.Warnings[timer.MaxWarnings-1])
}
