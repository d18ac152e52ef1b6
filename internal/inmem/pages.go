package inmem

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/timer"
)

// Instances implements admin.InstanceStore with the DynamoDB adapter's pages: by name then
// tenant, an opaque cursor valid only for the same app and timer.
func (s *Store) Instances(_ context.Context, q timer.InstanceQuery) (timer.InstancePage, error) {
	if err := q.Validate(); err != nil {
		return timer.InstancePage{}, err
	}
	limit, _ := timer.PageSize(q.Limit)
	app, _ := timer.SelectedApp(q.App)
	scope := "s"
	switch {
	case q.Timer != "":
		scope = "t:" + timer.Key{App: app, Timer: q.Timer}.Name()
	case q.App != "":
		scope = "a:" + q.App
	}
	var after *timer.Key
	if q.Cursor != "" {
		k, err := decodeCursor(q.Cursor, scope)
		if err != nil {
			return timer.InstancePage{}, err
		}
		after = &k
	}
	all := s.query(func(in timer.Instance) bool {
		return timer.SelectsApp(q.App, in.App) && (q.Timer == "" || in.Timer == q.Timer) &&
			(after == nil || timer.CompareKeys(in.Key, *after) > 0)
	})
	slices.SortFunc(all, func(a, b timer.Instance) int { return timer.CompareKeys(a.Key, b.Key) })
	page := timer.InstancePage{Items: all}
	if len(all) > limit {
		page.Items = slices.Clone(all[:limit]) // not the rest's copies with it
	}
	s.mu.Lock()
	for _, in := range page.Items {
		if _, ok := s.op.edits[in.Key]; ok {
			if page.Edited == nil {
				page.Edited = map[timer.Key]bool{}
			}
			page.Edited[in.Key] = true
		}
	}
	s.mu.Unlock()
	if len(all) <= limit {
		return page, nil
	}
	b, err := json.Marshal(cursor{Scope: scope, Key: all[limit-1].Key})
	if err != nil {
		return timer.InstancePage{}, err
	}
	page.Next = base64.RawURLEncoding.EncodeToString(b)
	return page, nil
}

type cursor struct {
	Scope string    `json:"s"`
	Key   timer.Key `json:"k"`
}

func decodeCursor(s, scope string) (timer.Key, error) {
	bad := fmt.Errorf("%w: cursor %q is not one this listing gave", errkind.Invalid, s)
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return timer.Key{}, bad
	}
	var c cursor
	if err := json.Unmarshal(b, &c); err != nil || c.Scope != scope || c.Key.Validate() != nil {
		return timer.Key{}, bad
	}
	return c.Key, nil
}

// TenantsAfter lists up to limit registered tenants by name after the name after ("": from
// the first); more says there may be more.
func (s *Store) TenantsAfter(ctx context.Context, after string, limit int) ([]timer.Tenant, bool, error) {
	all, err := s.Tenants(ctx)
	if err != nil {
		return nil, false, err
	}
	i, _ := slices.BinarySearchFunc(all, after, func(t timer.Tenant, name string) int { return cmp.Compare(t.Name, name) })
	if i < len(all) && all[i].Name == after {
		i++
	}
	all = all[i:]
	if len(all) > limit {
		return all[:limit], true, nil
	}
	return all, false, nil
}
