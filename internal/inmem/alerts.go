package inmem

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/sundialhq/sundial/internal/timer"
)

// The alerts' side of the store (alerts.Store, asserted in internal/alerts' tests), with the
// DynamoDB adapter's conditions: an alert is opened by the one raise that finds it absent
// (or, after a crash, by its own raiser before it was announced) and closed by the one
// resolve that finds it open.

// alertState is the open alerts, by instance and rule, and the noSuccessWithin deadlines.
type alertState struct {
	open  map[string]openAlert
	watch map[timer.Key]time.Time
}

type openAlert struct {
	alert     timer.Alert
	by        string
	announced bool
}

func alertID(k timer.Key, rule string) string { return k.String() + "|" + rule }

func (s *Store) alertMaps() *alertState {
	if s.al.open == nil {
		s.al = alertState{open: map[string]openAlert{}, watch: map[timer.Key]time.Time{}}
	}
	return &s.al
}

// Alerts implements alerts.Store.
func (s *Store) Alerts(_ context.Context, app string) ([]timer.Alert, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []timer.Alert
	for _, id := range slices.Sorted(maps.Keys(s.alertMaps().open)) {
		if a := s.al.open[id].alert; timer.SelectsApp(app, a.App) {
			out = append(out, a)
		}
	}
	return out, nil
}

// AlertsOf implements alerts.Store.
func (s *Store) AlertsOf(_ context.Context, ks []timer.Key) ([]timer.Alert, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.alertMaps()
	seen := map[string]bool{}
	var out []timer.Alert
	for _, k := range ks {
		for _, rule := range timer.AlertRuleNames {
			id := alertID(k, rule)
			if o, ok := st.open[id]; ok && !seen[id] {
				seen[id] = true
				out = append(out, o.alert)
			}
		}
	}
	return out, nil
}

// RaiseAlert implements alerts.Store.
func (s *Store) RaiseAlert(_ context.Context, a timer.Alert, by string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.alertMaps()
	id := alertID(a.Key, a.Rule)
	if o, ok := st.open[id]; ok && (o.by != by || o.announced) {
		return false, nil
	}
	st.open[id] = openAlert{alert: a, by: by}
	return true, nil
}

// AnnounceAlert implements alerts.Store.
func (s *Store) AnnounceAlert(_ context.Context, k timer.Key, rule, by string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.alertMaps()
	id := alertID(k, rule)
	if o, ok := st.open[id]; ok && o.by == by {
		o.announced = true
		st.open[id] = o
	}
	return nil
}

// ResolveAlert implements alerts.Store.
func (s *Store) ResolveAlert(_ context.Context, k timer.Key, rule string) (timer.Alert, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.alertMaps()
	id := alertID(k, rule)
	o, ok := st.open[id]
	if !ok {
		return timer.Alert{}, false, nil
	}
	delete(st.open, id)
	return o.alert, true, nil
}

// Watch implements alerts.Store.
func (s *Store) Watch(_ context.Context, k timer.Key, deadline time.Time, reset bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.alertMaps()
	if _, ok := st.watch[k]; reset || !ok {
		st.watch[k] = deadline
	}
	return nil
}

// Unwatch implements alerts.Store.
func (s *Store) Unwatch(_ context.Context, k timer.Key) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.alertMaps().watch, k)
	return nil
}

// Overdue implements alerts.Store.
func (s *Store) Overdue(_ context.Context, now time.Time) (map[timer.Key]time.Time, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[timer.Key]time.Time{}
	for k, d := range s.alertMaps().watch {
		if !d.After(now) {
			out[k] = d
		}
	}
	return out, nil
}

// AlertsAfter lists up to limit open alerts of app ("": every app's) after the alert whose
// key (timer.AlertID) is after, by that key; more says there may be more.
func (s *Store) AlertsAfter(ctx context.Context, app, after string, limit int) ([]timer.Alert, bool, error) {
	all, err := s.Alerts(ctx, app)
	if err != nil {
		return nil, false, err
	}
	var out []timer.Alert
	for _, a := range all {
		if alertID(a.Key, a.Rule) > after {
			if len(out) == limit {
				return out, true, nil
			}
			out = append(out, a)
		}
	}
	return out, false, nil
}
