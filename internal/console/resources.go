package console

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/sundialhq/sundial/internal/timer"
	"github.com/sundialhq/sundial/internal/view"
)

// SlotWaits reads the pools the instances use (one BatchGetItem per 100 pools; nothing
// when none uses one) and returns the waits of the instances that wait for a slot, by key:
// shown from the pools' own waiter records, so a waiting firing writes nothing for display.
func SlotWaits(ctx context.Context, r PoolReader, ins []timer.Instance, now time.Time) (map[timer.Key][]view.SlotWait, error) {
	names := timer.PoolsOf(ins)
	if len(names) == 0 {
		return nil, nil
	}
	pools, err := r.SlotPools(ctx, names)
	if err != nil {
		return nil, err
	}
	out := map[timer.Key][]view.SlotWait{}
	for _, in := range ins {
		if ws := view.SlotWaitsOf(timer.PoolWaitsOf(in.Key.String(), in.Resources, pools, now)); len(ws) > 0 {
			out[in.Key] = ws
		}
	}
	return out, nil
}

// withSlotWaits adds their waits to rows (rows[i] shows ins[i]).
func (s *Service) withSlotWaits(ctx context.Context, rows []TimerRow, ins []timer.Instance) error {
	waits, err := SlotWaits(ctx, s.Store, ins, s.Clock.Now())
	if err != nil {
		return err
	}
	for i := range rows {
		rows[i].WaitingForSlot = waits[ins[i].Key]
	}
	return nil
}

// Resources lists every declared shared resource's pool: one Query of the apps' declared
// resources (an item per app) and one BatchGetItem per 100 pools, by app then name.
func (s *Service) Resources(ctx context.Context) ([]view.Pool, error) {
	apps, err := s.Store.AppResources(ctx)
	if err != nil {
		return nil, err
	}
	type decl struct {
		app, name string
		slots     int
	}
	var decls []decl
	var names []string
	for _, a := range apps {
		for _, name := range slices.Sorted(maps.Keys(a.Resources)) {
			decls = append(decls, decl{a.App, name, a.Resources[name]})
			names = append(names, timer.PoolName(a.App, name))
		}
	}
	pools, err := s.Store.SlotPools(ctx, names)
	if err != nil {
		return nil, err
	}
	now := s.Clock.Now()
	out := make([]view.Pool, 0, len(decls))
	for _, d := range decls {
		var usedBy []string
		if d.app == "" {
			for _, a := range apps {
				if a.App != "" && slices.Contains(a.SharedUses, d.name) {
					usedBy = append(usedBy, a.App)
				}
			}
		}
		out = append(out, view.OfPool(d.app, d.name, d.slots, usedBy, pools[timer.PoolName(d.app, d.name)], now))
	}
	return out, nil
}

// apiResources is GET /api/resources: every declared pool (every app's, as the pools are
// environment-wide state; one partition read and one batch of pool reads).
func (s *Server) apiResources(r *http.Request) (any, error) {
	return s.svc.Resources(r.Context())
}

// Resources reads GET /api/resources.
func (rm *Remote) Resources(ctx context.Context) ([]view.Pool, error) {
	var out []view.Pool
	return out, rm.get(ctx, "/api/resources", nil, &out)
}

// resourcesPage lists the pools (GET /resources).
func (s *Server) resourcesPage(w http.ResponseWriter, r *http.Request) error {
	pools, err := s.be.Resources(r.Context())
	if err != nil {
		return err
	}
	s.render(w, r, http.StatusOK, "resources", pageData{Title: "Shared resources", Nav: "resources", Data: struct{ Pools []view.Pool }{pools}})
	return nil
}
