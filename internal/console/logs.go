package console

import (
	"context"
	"fmt"
	"strings"

	"github.com/sundialhq/sundial/internal/errkind"
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

// MaxLogLimit bounds a log page.
const MaxLogLimit = 500

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
	page := LogPage{Entries: make([]LogEntry, 0, len(execs)), Next: next}
	for _, e := range execs {
		page.Entries = append(page.Entries, entryOf(e))
	}
	return page, nil
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
