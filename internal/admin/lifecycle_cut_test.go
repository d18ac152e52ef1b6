package admin_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sundialhq/sundial/internal/timer"
)

var errPublishCut = errors.New("publish cut here")

// cutStore fails the first call of an armed read: a publish cut at that point (its function
// timed out, or was stopped), to be repeated.
type cutStore struct {
	store
	mu         sync.Mutex
	defs, list bool
}

func (c *cutStore) cut(armed *bool) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	was := *armed
	*armed = false
	return was
}

func (c *cutStore) Definitions(ctx context.Context) (map[string]string, error) {
	if c.cut(&c.defs) {
		return nil, errPublishCut
	}
	return c.store.Definitions(ctx)
}

func (c *cutStore) List(ctx context.Context) ([]timer.Instance, error) {
	if c.cut(&c.list) {
		return nil, errPublishCut
	}
	return c.store.List(ctx)
}

// A publish is safe to repeat after a cut between its tenant phase and the instances a
// tenant brings or takes in the other apps: the tenant's record is written last, so the
// publish repeated finds the tenant new (or leaving) again and writes those instances. Cut
// before, a tenant new to the environment was registered at once, and the publish repeated
// never created the other apps' instances for it; a tenant no app lists any more was
// removed at once, and the other apps' instances of it kept running.
func TestPublishRepeatedAfterACutInItsTenantPhases(t *testing.T) {
	eachStore(t, func(t *testing.T, f fixture) {
		cs := &cutStore{store: f.store}
		f = newFixture(cs, 4)
		s := f.svc
		ctx := context.Background()
		a, b := uniq(t, "a"), uniq(t, "b")
		tn := uniq(t, "tn")
		cleanupApps(t, s, a, b)
		kb := timer.Key{App: b, Timer: "Nightly", Tenant: tn}
		_, err := s.Sync(ctx, manifestOf(t, appDoc(b, nil, "Nightly: every 1h*")))
		require.NoError(t, err)

		// a lists a new tenant; the publish is cut before the other apps' instances.
		cs.defs = true
		_, err = s.Sync(ctx, manifestOf(t, appDoc(a, []string{tn}, "Nightly: every 1h*")))
		require.ErrorIs(t, err, errPublishCut)
		rep, err := s.Sync(ctx, manifestOf(t, appDoc(a, []string{tn}, "Nightly: every 1h*")))
		require.NoError(t, err)
		require.Equal(t, []string{tn}, rep.TenantsAdded, "repeated, the publish finds the tenant new again")
		require.Contains(t, rep.Created, kb.String(), "and b's multi-tenant timer runs for it")
		require.True(t, get(t, s, kb).Active)
		tenants, err := s.Store.Tenants(ctx)
		require.NoError(t, err)
		require.True(t, hasTenant(tenants, tn))

		// a drops it (no other app lists it); the publish is cut before the other apps'
		// instances of it are deactivated.
		cs.list = true
		_, err = s.Sync(ctx, manifestOf(t, appDoc(a, nil, "Nightly: every 1h*")))
		require.ErrorIs(t, err, errPublishCut)
		rep, err = s.Sync(ctx, manifestOf(t, appDoc(a, nil, "Nightly: every 1h*")))
		require.NoError(t, err)
		require.Equal(t, []string{tn}, rep.TenantsRemoved, "repeated, the publish finds the tenant leaving again")
		require.Contains(t, rep.Deactivated, kb.String())
		require.False(t, get(t, s, kb).Active, "b's instance of the removed tenant stops")
		tenants, err = s.Store.Tenants(ctx)
		require.NoError(t, err)
		require.False(t, hasTenant(tenants, tn))
	})
}

func hasTenant(ts []timer.Tenant, name string) bool {
	for _, t := range ts {
		if t.Name == name {
			return true
		}
	}
	return false
}
