package console

import (
	"context"
	"fmt"
	"strings"

	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/page"
	"github.com/sundialhq/sundial/internal/timer"
)

// LogFilter selects a page of the log.
type LogFilter struct {
	App        string // "": every app; with Timer, the app of a Timer without one
	Timer      string // Timer, Timer@tenant, app:Timer or app:Timer@tenant; "" for all
	Tenant     string // with Timer "": only this tenant's executions
	ErrorsOnly bool
	After      string // cursor: the Next of the previous page
	Limit      int
}

// DefaultLogLimit and MaxLogLimit are a log page's size.
const (
	DefaultLogLimit = 50
	MaxLogLimit     = 500
)

// Logs reads a page of the log, newest first.
func (s *Service) Logs(ctx context.Context, f LogFilter) (LogPage, error) {
	q := timer.LogPageQuery{ErrorsOnly: f.ErrorsOnly, After: f.After, Limit: f.Limit, Tenant: f.Tenant, App: f.App}
	if err := timer.ValidateApp(f.App); err != nil {
		return LogPage{}, err
	}
	if f.Tenant != "" && !timer.ValidName(f.Tenant) {
		return LogPage{}, fmt.Errorf("%w: tenant %q must match [A-Za-z0-9_-]{1,128}", errkind.Invalid, f.Tenant)
	}
	if q.Limit < 0 || q.Limit > MaxLogLimit {
		return LogPage{}, fmt.Errorf("%w: limit must be in 1..%d", errkind.Invalid, MaxLogLimit)
	}
	if f.After != "" && !timer.ValidRef(f.After) {
		return LogPage{}, fmt.Errorf("%w: cursor %q is not a log reference", errkind.Invalid, f.After)
	}
	if f.Timer != "" {
		key, err := timer.ParseKey(f.Timer)
		if err != nil {
			return LogPage{}, err
		}
		if f.App != "" {
			if strings.Contains(f.Timer, ":") && !timer.SelectsApp(f.App, key.App) {
				return LogPage{}, fmt.Errorf("%w: timer %s and app %s disagree", errkind.Invalid, f.Timer, f.App)
			}
			key.App = timer.NormApp(f.App)
		}
		q.Key = &key
		if f.Tenant != "" && key.Tenant != f.Tenant {
			return LogPage{}, fmt.Errorf("%w: timer %s and tenant %s disagree", errkind.Invalid, key, f.Tenant)
		}
	}
	execs, next, err := s.Store.LogPage(ctx, q)
	if err != nil {
		return LogPage{}, err
	}
	b := page.NewBuilder[LogEntry](len(execs))
	for _, e := range execs {
		if b.Full() {
			// Cut at the byte bound: the next page starts after the last entry kept.
			p := b.Page("")
			return LogPage{Items: p.Items, Next: p.Items[len(p.Items)-1].Ref}, nil
		}
		if err := b.Add(entryOf(e)); err != nil {
			return LogPage{}, err
		}
	}
	return LogPage{Items: b.Page("").Items, Next: next}, nil
}

// Entry reads one log entry.
func (s *Service) Entry(ctx context.Context, key timer.Key, ref string) (LogEntry, error) {
	if !timer.ValidRef(ref) {
		return LogEntry{}, fmt.Errorf("%w: %q is not a log reference", errkind.Invalid, ref)
	}
	e, err := s.Store.Execution(ctx, key, ref)
	if err != nil {
		return LogEntry{}, err
	}
	return entryOf(e), nil
}
