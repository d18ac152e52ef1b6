package console

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/page"
	"github.com/sundialhq/sundial/internal/queue"
	"github.com/sundialhq/sundial/internal/timer"
)

// Page sizes of the environment's short lists (tenants, alerts, the DLQ).
const (
	DefaultListPage = 100
	MaxListPage     = 1000
)

// tenantPager is a store that reads the tenants a page at a time (dynamo.Store: a Query of
// the tenants' partition from the cursor's key, inmem.Store).
type tenantPager interface {
	TenantsAfter(ctx context.Context, after string, limit int) ([]timer.Tenant, bool, error)
}

const tenantScope = "tenants"

// TenantPage is a page of up to limit registered tenants by name (0: DefaultListPage), from
// the previous page's Next.
func (s *Service) TenantPage(ctx context.Context, limit int, cursor string) (page.Page[timer.Tenant], error) {
	n, err := page.Size(limit, DefaultListPage, MaxListPage)
	if err != nil {
		return page.Page[timer.Tenant]{}, err
	}
	return page.Keyed(n, tenantScope, cursor, func(after string, n int) ([]timer.Tenant, bool, error) {
		tp, ok := s.Admin.Store.(tenantPager)
		if !ok {
			return nil, false, fmt.Errorf("%w: this store lists no tenants by page", errkind.Unavailable)
		}
		return tp.TenantsAfter(ctx, after, n)
	}, func(t timer.Tenant) string { return t.Name })
}

func (s *Server) apiTenants(r *http.Request) (any, error) {
	q := r.URL.Query()
	n, err := page.ParseSize(q.Get("limit"), DefaultListPage, MaxListPage)
	if err != nil {
		return nil, err
	}
	return s.svc.TenantPage(r.Context(), n, q.Get("cursor"))
}

// TenantPage reads a page of GET /api/tenants.
func (rm *Remote) TenantPage(ctx context.Context, limit int, cursor string) (page.Page[timer.Tenant], error) {
	var p page.Page[timer.Tenant]
	return p, rm.get(ctx, "/api/tenants", pageQuery(limit, cursor), &p)
}

// Tenants reads every page of GET /api/tenants.
func (rm *Remote) Tenants(ctx context.Context) ([]timer.Tenant, error) {
	return Every(ctx, rm.TenantPage)
}

// alertPager is a store that reads the open alerts a page at a time (dynamo.Store: the
// alerts partition from the cursor's key; inmem.Store).
type alertPager interface {
	AlertsAfter(ctx context.Context, app, after string, limit int) ([]timer.Alert, bool, error)
}

// alertKey is an alert's place in the listing: its instance, then rule.
func alertKey(a timer.Alert) string { return a.Key.String() + "|" + a.Rule }

// AlertPage is a page of up to limit open alerts of app ("": every app's) by instance and
// rule (0: DefaultListPage), from the previous page's Next.
func (s *Service) AlertPage(ctx context.Context, app string, limit int, cursor string) (page.Page[timer.Alert], error) {
	scope, n, err := appListing("alerts", app, limit)
	if err != nil {
		return page.Page[timer.Alert]{Items: []timer.Alert{}}, err
	}
	return page.Keyed(n, scope, cursor, func(after string, n int) ([]timer.Alert, bool, error) {
		ap, ok := s.Store.(alertPager)
		if !ok {
			return nil, false, fmt.Errorf("%w: this store lists no alerts by page", errkind.Unavailable)
		}
		return ap.AlertsAfter(ctx, app, after, n)
	}, alertKey)
}

func (s *Server) apiAlerts(r *http.Request) (any, error) { return apiAppPage(r, s.svc.AlertPage) }

// AlertPage reads a page of GET /api/alerts (or the app's).
func (rm *Remote) AlertPage(ctx context.Context, app string, limit int, cursor string) (page.Page[timer.Alert], error) {
	return remoteAppPage[timer.Alert](ctx, rm, "alerts", app, limit, cursor)
}

// backfillPager is a store that reads the timers' latest backfills a page at a time
// (dynamo.Store: the backfills' partition from the cursor's key).
type backfillPager interface {
	BackfillsAfter(ctx context.Context, app, after string, limit int) ([]timer.Backfill, bool, error)
}

// BackfillPage is a page of up to limit timers' latest backfills of app ("": every app's)
// by app and timer (0: DefaultListPage), from the previous page's Next; each is the record
// (range, state, who, when), its progress per instance being BackfillStatus's.
func (s *Service) BackfillPage(ctx context.Context, app string, limit int, cursor string) (page.Page[timer.Backfill], error) {
	scope, n, err := appListing("backfills", app, limit)
	if err != nil {
		return page.Page[timer.Backfill]{Items: []timer.Backfill{}}, err
	}
	return page.Keyed(n, scope, cursor, func(after string, n int) ([]timer.Backfill, bool, error) {
		bp, ok := s.Store.(backfillPager)
		if !ok {
			return nil, false, fmt.Errorf("%w: this store keeps no backfills (they live in the stack's timers table)", errkind.Unavailable)
		}
		return bp.BackfillsAfter(ctx, app, after, n)
	}, func(bf timer.Backfill) string { return timer.AppName(bf.App) + "#" + bf.Timer })
}

func (s *Server) apiBackfills(r *http.Request) (any, error) { return apiAppPage(r, s.svc.BackfillPage) }

// BackfillPage reads a page of GET /api/backfills (or the app's).
func (rm *Remote) BackfillPage(ctx context.Context, app string, limit int, cursor string) (page.Page[timer.Backfill], error) {
	return remoteAppPage[timer.Backfill](ctx, rm, "backfills", app, limit, cursor)
}

// appListing is the cursor scope of listing name of app ("": every app's, name alone) and
// its page size (limit; 0: DefaultListPage), or why app or limit is refused.
func appListing(name, app string, limit int) (string, int, error) {
	n, err := page.Size(limit, DefaultListPage, MaxListPage)
	if err != nil {
		return "", 0, err
	}
	if err := timer.ValidateApp(app); err != nil {
		return "", 0, err
	}
	if app == "" {
		return name, n, nil
	}
	return name + ":" + timer.NormApp(app), n, nil
}

// apiAppPage answers a request for a page of a listing of every app (/api/NAME) or of the
// path's app (/api/apps/{app}/NAME), by its limit and cursor.
func apiAppPage[T any](r *http.Request, read func(ctx context.Context, app string, limit int, cursor string) (page.Page[T], error)) (any, error) {
	app, err := appOf(r)
	if err != nil {
		return nil, err
	}
	n, err := page.ParseSize(r.URL.Query().Get("limit"), DefaultListPage, MaxListPage)
	if err != nil {
		return nil, err
	}
	return read(r.Context(), app, n, r.URL.Query().Get("cursor"))
}

// remoteAppPage reads a page of GET /api/NAME (app ""), or of the app's listing.
func remoteAppPage[T any](ctx context.Context, rm *Remote, name, app string, limit int, cursor string) (page.Page[T], error) {
	p := "/api/" + name
	if app != "" {
		p = appPath(app) + "/" + name
	}
	var out page.Page[T]
	return out, rm.get(ctx, p, pageQuery(limit, cursor), &out)
}

const dlqScope = "dlq"

// DLQPage is a page of up to limit dead-lettered messages (0: DefaultListPage), not
// consumed. SQS has no cursor: a listing keeps the messages of its pages hidden until its
// deadline (queue.ListHold from its first page), which the cursor holds, so that the next
// page receives others; a cursor past its deadline is refused. A listing that ends on its
// first page hides nothing after it. An *queue.IncompleteError comes with what was seen.
func (s *Service) DLQPage(ctx context.Context, limit int, cursor string) (page.Page[queue.Dead], error) {
	none := page.Page[queue.Dead]{Items: []queue.Dead{}}
	if s.DLQ == nil {
		return none, fmt.Errorf("%w: the stack has no dead-letter queue", errkind.NotFound)
	}
	n, err := page.Size(limit, DefaultListPage, MaxListPage)
	if err != nil {
		return none, err
	}
	var pos queue.ListPosition
	if cursor != "" {
		if err := page.Decode(cursor, dlqScope, &pos); err != nil {
			return none, err
		}
		if pos.Until.IsZero() || pos.Seen < 1 {
			return none, fmt.Errorf("%w: cursor %q holds no listing", errkind.Invalid, cursor)
		}
	}
	msgs, next, more, err := s.DLQ.ListPage(ctx, n, pos, s.Clock.Now())
	if errors.Is(err, queue.ErrListingExpired) {
		return none, fmt.Errorf("%w: %v", errkind.Invalid, err)
	}
	b := page.NewBuilder[queue.Dead](n)
	for i, m := range msgs {
		if b.Full() {
			// Cut at the byte bound: the rest are visible again for the next page.
			s.DLQ.Release(ctx, msgs[i:])
			next.Seen -= len(msgs) - i
			more = true
			break
		}
		if aerr := b.Add(m); aerr != nil {
			return none, aerr
		}
	}
	if !more {
		return b.Page(""), err
	}
	return b.Page(page.Cursor(dlqScope, next)), err
}

// nextURL is the request's page with cursor next (the same filters and size).
func nextURL(r *http.Request, next string) string {
	q := r.URL.Query()
	q.Set("cursor", next)
	return r.URL.Path + "?" + q.Encode()
}

// pageQuery is a page's query parameters.
func pageQuery(limit int, cursor string) url.Values {
	q := url.Values{}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	set(q, "cursor", cursor)
	return q
}

// Each reads a listing page after page (read(ctx, size, cursor); size 0: the listing's
// default), calling fn with each page's items, until the last page or fn's error.
func Each[T any](ctx context.Context, size int, read func(ctx context.Context, limit int, cursor string) (page.Page[T], error), fn func([]T) error) error {
	cursor := ""
	for {
		p, err := read(ctx, size, cursor)
		if err != nil {
			return err
		}
		if err := fn(p.Items); err != nil {
			return err
		}
		if p.Next == "" {
			return nil
		}
		if p.Next == cursor {
			return fmt.Errorf("%w: the listing answered the same cursor twice", errkind.Unavailable)
		}
		cursor = p.Next
	}
}

// Every is every page's items, for the short lists the pages show whole.
func Every[T any](ctx context.Context, read func(ctx context.Context, limit int, cursor string) (page.Page[T], error)) ([]T, error) {
	out := []T{}
	err := Each(ctx, 0, read, func(items []T) error { out = append(out, items...); return nil })
	return out, err
}
