package message

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func sample() Firing {
	at := time.Date(2026, 11, 21, 18, 30, 0, 0, time.UTC)
	return Firing{V: 1, Timer: "Tick", Tenant: "acme", ScheduledAt: at, DueAt: at.Add(10 * time.Second), Attempt: 2, Reason: ReasonRetry}
}

func TestFiring(t *testing.T) {
	t.Parallel()

	t.Run("RoundTrips", func(t *testing.T) {
		t.Parallel()
		body, err := Encode(sample())
		require.NoError(t, err)
		got, err := Decode(body)
		require.NoError(t, err)
		require.Equal(t, sample(), got)
	})

	t.Run("RefusesBadInput", func(t *testing.T) {
		t.Parallel()
		good, err := Encode(sample())
		require.NoError(t, err)
		cases := map[string]struct{ body, want string }{
			"empty":          {"", "want a JSON object: EOF"},
			"not json":       {"hello", "want a JSON object: invalid character"},
			"array":          {"[]", "want a JSON object"},
			"other version":  {strings.Replace(good, `"v":1`, `"v":2`, 1), "version 2"},
			"no version":     {strings.Replace(good, `"v":1,`, ``, 1), "version 0"},
			"unknown field":  {strings.Replace(good, `{`, `{"x":1,`, 1), `unknown field "x"`},
			"bad timer name": {strings.Replace(good, `"Tick"`, `"<script>"`, 1), "timer name"},
			"attempt zero":   {strings.Replace(good, `"attempt":2`, `"attempt":0`, 1), "attempt must be >= 1"},
			"bad reason":     {strings.Replace(good, `"retry"`, `"because"`, 1), "unknown reason"},
			"bad time":       {strings.Replace(good, `2026-11-21T18:30:00Z"`, `yesterday"`, 1), "parsing time"},
			"trailing":       {good + `{}`, "unexpected data after the JSON object"},
			"oversized":      {strings.Repeat(" ", MaxBodyBytes+1), "limit"},
			"missing dueAt":  {`{"v":1,"timer":"T","scheduledAt":"2026-01-01T00:00:00Z","attempt":1,"reason":"schedule"}`, "dueAt is required"},
		}
		for name, tc := range cases {
			_, err := Decode(tc.body)
			require.ErrorIs(t, err, ErrMalformed, name)
			require.ErrorContains(t, err, tc.want, name)
		}
	})

	// The attack: the decoder kept the last of duplicate keys (and matched keys in any case)
	// while the console's PATCH refuses them: two readers could take one message for two
	// firings. It refuses them too now, with the same strict decoding.
	t.Run("RefusesDuplicateAndCaseVariantKeys", func(t *testing.T) {
		t.Parallel()
		good, err := Encode(sample())
		require.NoError(t, err)
		cases := map[string]struct{ body, want string }{
			"duplicate key":     {strings.Replace(good, `"timer":"Tick"`, `"timer":"Tick","timer":"Other"`, 1), `field "timer" given twice`},
			"duplicate dueAt":   {strings.Replace(good, `{`, `{"dueAt":"9999-12-31T00:00:00Z",`, 1), `field "dueAt" given twice`},
			"case-variant key":  {strings.Replace(good, `"timer":"Tick"`, `"Timer":"Tick"`, 1), `unknown field "Timer"`},
			"case-variant twin": {strings.Replace(good, `{`, `{"TIMER":"Other",`, 1), `unknown field "TIMER"`},
		}
		for name, tc := range cases {
			_, err := Decode(tc.body)
			require.ErrorIs(t, err, ErrMalformed, name)
			require.ErrorContains(t, err, tc.want, name)
		}
	})
}

func FuzzDecode(f *testing.F) {
	good, _ := Encode(sample())
	f.Add(good)
	f.Add(`{"v":1}`)
	f.Add(`{"v":1,"timer":"a","scheduledAt":"2026-01-01T00:00:00Z","dueAt":"2026-01-01T00:00:00Z","attempt":1,"reason":"run-now"}`)
	f.Fuzz(func(t *testing.T, body string) {
		fr, err := Decode(body)
		if err != nil {
			require.ErrorIs(t, err, ErrMalformed)
			return
		}
		again, err := Encode(fr)
		require.NoError(t, err, "a decoded firing must re-encode")
		back, err := Decode(again)
		require.NoError(t, err)
		require.True(t, back.ScheduledAt.Equal(fr.ScheduledAt) && back.DueAt.Equal(fr.DueAt))
	})
}
