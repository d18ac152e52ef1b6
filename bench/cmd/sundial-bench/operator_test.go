package main

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The operator phase at a small size, end to end (the API, audit writer and recovery
// bootstraps behind the local endpoint, on fresh engines): every page listed, both bulk
// jobs answered 202 and worked to done by recovery's sweeps, every step within the API's
// limits. The recovery schedule is shortened to 5 s (a minute in the template).
func TestOperatorScaleSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds three functions and starts the engines")
	}
	t.Chdir("../../..") // buildFunction and the template are the repository's
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	out := t.TempDir()
	bins, err := operatorBootstraps(ctx, out)
	require.NoError(t, err)
	e, err := startEnv(ctx, "template.yaml", nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	defer func() { require.NoError(t, e.stop()) }()
	recoveryEvery = 5 * time.Second
	defer func() { recoveryEvery = time.Minute }()

	r, err := e.operatorScale(ctx, out, bins, 150, nil)
	require.NoError(t, err)
	require.Equal(t, 150, r.Instances)
	require.Equal(t, 3, r.Tenants)
	require.NotEmpty(t, r.Steps)
	byName := map[string]operatorStep{}
	for _, s := range r.Steps {
		require.True(t, s.WithinLimits, "%s: %+v", s.Name, s)
		require.Positive(t, s.PeakRSSMB, s.Name)
		byName[s.Name] = s
	}
	require.Equal(t, 150, byName["list the app's timers"].Items)
	require.Equal(t, 150, byName["list every app's timers"].Items)
	require.Equal(t, 150, byName["every app's health"].Items, "the instances counted")
	require.Equal(t, 150, byName["the app's health"].Items)
	for _, name := range []string{"bulk pause every timer", "bulk resume every timer"} {
		s := byName[name]
		require.Equal(t, 202, s.Status, "%s: a job", name)
		require.Equal(t, "done", s.JobState, "%s: worked to its end", name)
	}
	require.Positive(t, r.Sweeps, "recovery's sweeps ran")
	require.True(t, r.WithinLimits)
	require.LessOrEqual(t, r.PhaseSeconds, (30 * time.Minute).Seconds())
}

// TestParseOperatorSteps: -operator-steps chooses steps by name; an unknown one is refused.
func TestParseOperatorSteps(t *testing.T) {
	only, err := parseOperatorSteps("health, calendar")
	require.NoError(t, err)
	require.Equal(t, map[string]bool{"health": true, "calendar": true}, only)
	only, err = parseOperatorSteps("")
	require.NoError(t, err)
	require.Nil(t, only, "every step")
	_, err = parseOperatorSteps("health,heath")
	require.ErrorContains(t, err, `unknown step "heath"`)
}
