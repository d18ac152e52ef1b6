package console

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/cost"
	"github.com/sundialhq/sundial/internal/timer"
)

// requireSameHealth: the paged answers added up are the one-read answer's counts and lists.
func requireSameHealth(t *testing.T, want, got Health) {
	t.Helper()
	require.Equal(t, want.Counts, got.Counts)
	require.Equal(t, want.Apps, got.Apps)
	require.Equal(t, want.OrderTotal, got.OrderTotal)
	require.Equal(t, want.RunningTotal, got.RunningTotal)
	require.Equal(t, want.Processors, got.Processors)
	require.Equal(t, want.Order, got.Order, "the first %d scheduled of every page, in order", HealthShown)
	require.Equal(t, want.Running, got.Running)
	require.Equal(t, want.Fetcher, got.Fetcher)
	require.Equal(t, want.AlertsTotal, got.AlertsTotal)
	require.Empty(t, got.Next)
}

// TestHealthPageCountsAtMostItsBound: one GET /api/health counts at most HealthPageBound
// instances (at 50,000 one request counting them all was cut at API Gateway's 29 s) and
// answers next; the answers over 12,000 instances add up to the counts of one read of all.
func TestHealthPageCountsAtMostItsBound(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 18, 30, 0, 0, time.UTC)
	const n = 12_000
	st := &generatedStore{n: n, now: now}
	svc := &Service{Store: st, Clock: timer.NewManualClock(now), Tick: time.Minute, Stack: cost.DefaultStack()}
	whole, err := svc.HealthOf(context.Background(), "")
	require.NoError(t, err)
	require.Equal(t, n, whole.Counts.Timers)
	require.NotNil(t, whole.Estimate)

	var h Health
	requests, cursor := 0, ""
	for {
		st.read = 0
		part, err := svc.HealthPage(context.Background(), "", cursor)
		require.NoError(t, err)
		requests++
		require.LessOrEqual(t, st.read, HealthPageBound, "request %d counted at most the bound", requests)
		require.Equal(t, st.read, part.Counts.Timers, "its counts are what it read")
		require.Nil(t, part.Estimate, "a part is not priced alone")
		if requests == 1 {
			h = part
		} else {
			require.Empty(t, part.Alerts, "the alerts are the first answer's")
			MergeHealth(&h, part)
		}
		if part.Next == "" {
			break
		}
		cursor = part.Next
	}
	require.Equal(t, (n+HealthPageBound-1)/HealthPageBound, requests)
	requireSameHealth(t, whole, h)
	require.Equal(t, "app2:T011999@t", h.Order[0].Key, "the soonest, counted by the last request, first")
	require.Nil(t, h.Estimate)

	// At most the bound: one answer, whole, with its estimate.
	small := &generatedStore{n: HealthPageBound, now: now}
	one, err := (&Service{Store: small, Clock: timer.NewManualClock(now), Tick: time.Minute, Stack: cost.DefaultStack()}).HealthPage(context.Background(), "", "")
	require.NoError(t, err)
	require.Empty(t, one.Next)
	require.NotNil(t, one.Estimate)
	require.Equal(t, HealthPageBound, one.Counts.Timers)
}

// TestRemoteHealthFollowsPages: the CLI's and a remote console's Health (Remote.HealthOf)
// follows GET /api/health's next and adds the answers up, each request bounded.
func TestRemoteHealthFollowsPages(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 18, 30, 0, 0, time.UTC)
	const n = 12_000
	st := &generatedStore{n: n, now: now}
	svc := &Service{Store: st, Clock: timer.NewManualClock(now), Tick: time.Minute, Stack: cost.DefaultStack()}
	srv := &Server{svc: svc}
	requests := 0
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/health" {
			t.Logf("not served: %s", r.URL)
			http.Error(w, "not served", http.StatusNotFound)
			return
		}
		requests++
		st.read = 0
		h, err := srv.apiHealth(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		if st.read > HealthPageBound {
			http.Error(w, "read past the bound", http.StatusInternalServerError)
			return
		}
		_ = json.NewEncoder(w).Encode(h)
	}))
	defer api.Close()
	rm, err := NewRemote(api.URL+"/api/", credentials.NewStaticCredentialsProvider("AKID", "SECRET", ""), "us-east-1")
	require.NoError(t, err)
	got, err := rm.HealthOf(context.Background(), "")
	require.NoError(t, err)
	require.Equal(t, 3, requests, "every page followed")
	whole, err := svc.HealthOf(context.Background(), "")
	require.NoError(t, err)
	requireSameHealth(t, whole, got)

	// The console on the deployed API (sundial console --api) shows every instance counted.
	token := NewToken()
	page, err := New(Options{Backend: rm, Token: token, Log: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	requests = 0
	req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1:8089/", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	w := httptest.NewRecorder()
	page.Handler().ServeHTTP(w, req)
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	require.Equal(t, 3, requests, "the page followed every answer")
	require.Contains(t, w.Body.String(), fmt.Sprintf("%d timers</a>: %d active", n, whole.Counts.Active))
}
