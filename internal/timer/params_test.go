package timer_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/timer"
)

func ptr(s string) *string { return &s }

var declared = timer.Params{
	{Name: "limit", Type: timer.ParamInteger, Default: ptr("100")},
	{Name: "ratio", Type: timer.ParamNumber},
	{Name: "dry", Type: timer.ParamBoolean, Default: ptr("false")},
	{Name: "day", Type: timer.ParamDate, Required: true},
	{Name: "mode", Type: timer.ParamEnum, Values: []string{"full", "delta"}, Default: ptr("delta")},
	{Name: "note", Type: timer.ParamString},
}

// TestParamsResolve: overrides are typed from text (the CLI's) or JSON values (the API's),
// and every field's refusal comes at once.
func TestParamsResolve(t *testing.T) {
	t.Parallel()
	got, err := declared.Resolve(map[string]any{"limit": "7", "ratio": 0.5, "dry": true, "day": "2026-11-27", "mode": "full", "note": "x=y"})
	require.NoError(t, err)
	require.Equal(t, map[string]any{"limit": int64(7), "ratio": 0.5, "dry": true, "day": "2026-11-27", "mode": "full", "note": "x=y"}, got)
	got, err = declared.Resolve(map[string]any{"limit": float64(8), "dry": "false", "day": "2026-01-01"})
	require.NoError(t, err)
	require.Equal(t, map[string]any{"limit": int64(8), "dry": false, "day": "2026-01-01"}, got)

	for _, c := range []struct {
		in   map[string]any
		want []timer.ParamError
	}{
		{map[string]any{"day": "2026-01-01", "colour": "red"}, []timer.ParamError{{Name: "colour", Message: "not a parameter of this timer (declared: limit, ratio, dry, day, mode, note)"}}},
		{map[string]any{"day": "2026-01-01", "limit": "ten"}, []timer.ParamError{{Name: "limit", Message: `integer: "ten" is not an integer`}}},
		{map[string]any{"day": "2026-01-01", "limit": 1.5}, []timer.ParamError{{Name: "limit", Message: "integer: 1.5 is not an integer"}}},
		{map[string]any{"day": "2026-01-01", "ratio": true}, []timer.ParamError{{Name: "ratio", Message: "number: true is not of type number"}}},
		{map[string]any{"day": "2026-01-01", "dry": "maybe"}, []timer.ParamError{{Name: "dry", Message: `boolean: "maybe" is not a boolean (true or false)`}}},
		{map[string]any{"day": "27/11/2026"}, []timer.ParamError{{Name: "day", Message: `date: "27/11/2026" is not a date (YYYY-MM-DD)`}}},
		{map[string]any{"day": "2026-01-01", "mode": "half"}, []timer.ParamError{{Name: "mode", Message: `enum: "half" is not one of full, delta`}}},
		{map[string]any{"limit": "1"}, []timer.ParamError{{Name: "day", Message: "required: give a value"}}},
		{map[string]any{"mode": "x", "limit": "y"}, []timer.ParamError{
			{Name: "limit", Message: `integer: "y" is not an integer`}, {Name: "mode", Message: `enum: "x" is not one of full, delta`}, {Name: "day", Message: "required: give a value"}}},
	} {
		_, err := declared.Resolve(c.in)
		require.ErrorIs(t, err, errkind.Invalid)
		var pe timer.ParamErrors
		require.True(t, errors.As(err, &pe))
		require.Equal(t, timer.ParamErrors(c.want), pe, "%v", c.in)
	}
	_, err = timer.Params(nil).Resolve(map[string]any{"x": "1"})
	require.ErrorContains(t, err, "parameter x: not a parameter of this timer (it declares none)")
}

// TestParamsValues: a run gets the defaults overlaid with its overrides (as stored: JSON);
// a timer without parameters gets none.
func TestParamsValues(t *testing.T) {
	t.Parallel()
	require.Nil(t, timer.Params(nil).Values(map[string]any{"x": 1}))
	require.Equal(t, map[string]any{"limit": int64(100), "dry": false, "mode": "delta"}, declared.Values(nil))
	stored, err := timer.EncodeParams(map[string]any{"limit": int64(5), "day": "2026-02-01"})
	require.NoError(t, err)
	require.Equal(t, map[string]any{"limit": int64(5), "dry": false, "mode": "delta", "day": "2026-02-01"}, declared.Values(timer.DecodeParams(stored)))

	in := timer.Instance{RunParams: stored}
	require.Equal(t, map[string]any{"limit": float64(5), "day": "2026-02-01"}, in.RunOverrides())
	in.RunBackfill = "b1"
	require.Nil(t, in.RunOverrides(), "a backfill's run has its backfill's overrides, not a Run Now's")
	in.Backfill = &timer.BackfillCursor{ID: "b1", Params: `{"day":"2026-10-01"}`}
	require.Equal(t, map[string]any{"day": "2026-10-01"}, in.RunOverrides())
	in.Backfill.ID = "b0" // a cursor of another backfill
	require.Nil(t, in.RunOverrides())
}
