package actionkit_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/actionkit"
)

// TestParams: an action reads the parameters of a payload as it arrives (JSON-decoded:
// numbers are float64) into a struct or one by one, typed.
func TestParams(t *testing.T) {
	t.Parallel()
	p, err := actionkit.Decode([]byte(`{"timer":"Digest","tenant":"","scheduledAt":"2026-11-27T10:00:00Z","attempt":1,"executionId":"e","properties":{},
		"parameters":{"limit":7,"ratio":0.5,"dry":true,"day":"2026-11-02","mode":"full"}}`))
	require.NoError(t, err)

	var got struct {
		Limit int     `json:"limit"`
		Ratio float64 `json:"ratio"`
		Dry   bool    `json:"dry"`
		Day   string  `json:"day"`
		Mode  string  `json:"mode"`
		Other string  `json:"other"`
	}
	got.Other = "kept"
	require.NoError(t, actionkit.ReadParams(p, &got))
	require.Equal(t, 7, got.Limit)
	require.Equal(t, 0.5, got.Ratio)
	require.True(t, got.Dry)
	require.Equal(t, "2026-11-02", got.Day)
	require.Equal(t, "full", got.Mode)
	require.Equal(t, "kept", got.Other)

	n, ok, err := actionkit.ParamInt(p, "limit")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, int64(7), n)
	_, _, err = actionkit.ParamInt(p, "ratio")
	require.ErrorContains(t, err, "parameter ratio is 0.5, not an integer")
	b, ok, err := actionkit.ParamBool(p, "dry")
	require.NoError(t, err)
	require.True(t, ok && b)
	d, ok, err := actionkit.ParamDate(p, "day")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC), d)
	_, _, err = actionkit.ParamString(p, "limit")
	require.ErrorContains(t, err, "parameter limit is float64, not a string")
	_, ok, err = actionkit.ParamString(p, "absent")
	require.NoError(t, err)
	require.False(t, ok)

	var none struct{ Limit int }
	require.NoError(t, actionkit.ReadParams(actionkit.Payload{}, &none))
}
