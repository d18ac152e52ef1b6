package timer

import (
	"fmt"

	"github.com/sundialhq/sundial/internal/errkind"
)

// Page sizes of a bounded listing: a caller asks for up to MaxPageSize items a page
// (DefaultPageSize when it does not say). At ~640 bytes an instance as JSON, MaxPageSize keeps
// a page well under 1 MB.
const (
	DefaultPageSize = 100
	MaxPageSize     = 1000
)

// PageSize is limit validated: DefaultPageSize for 0, an error outside 1..MaxPageSize.
func PageSize(limit int) (int, error) {
	switch {
	case limit == 0:
		return DefaultPageSize, nil
	case limit < 0 || limit > MaxPageSize:
		return 0, fmt.Errorf("%w: limit must be between 1 and %d, not %d", errkind.Invalid, MaxPageSize, limit)
	}
	return limit, nil
}

// InstanceQuery selects a page of instances. A read of one app or one timer costs what that
// app or timer holds (an index or a partition); only App "" reads the whole table, for the
// administrator's views of every app.
type InstanceQuery struct {
	// App selects the app, as a selector does (SelectsApp): "" every app, else one app as
	// written outside the program (DefaultApp for the default app), as the CLI's --app and the
	// API's paths give it and the byApp index holds it. AppQuery builds it from an app.
	App string
	// Timer, with App, is one timer's instances (every tenant).
	Timer string
	// Limit is the page size (0: DefaultPageSize; at most MaxPageSize).
	Limit int
	// Cursor is the previous page's Next ("": the first page). It is opaque and valid only
	// for the same App and Timer.
	Cursor string
}

// OneApp is the selector of app alone (app as the program spells it: "" the default app).
func OneApp(app string) string { return AppName(app) }

// AppQuery is the query of app's instances (app as the program spells it: "" the default app).
func AppQuery(app string) InstanceQuery { return InstanceQuery{App: OneApp(app)} }

// SelectsApp reports whether the app selector sel (InstanceQuery.App, LogQuery.App,
// LogPageQuery.App: "" every app, else one app as written outside the program) selects app
// (as the program spells it: "" the default app).
func SelectsApp(sel, app string) bool { return sel == "" || sel == AppName(app) }

// SelectedApp is the app the selector sel selects, as the program spells it ("" the default
// app); ok is false for every app ("").
func SelectedApp(sel string) (app string, ok bool) { return NormApp(sel), sel != "" }

// Validate rejects a query no store could answer, with the reason.
func (q InstanceQuery) Validate() error {
	if q.Timer != "" && q.App == "" {
		return fmt.Errorf("%w: a timer's instances need its app", errkind.Invalid)
	}
	if q.Timer != "" && !ValidName(q.Timer) {
		return fmt.Errorf("%w: timer name %q must match [A-Za-z0-9_-]{1,128}", errkind.Invalid, q.Timer)
	}
	if _, err := PageSize(q.Limit); err != nil {
		return err
	}
	return ValidateApp(q.App)
}

// InstancePage is a page of instances, by name then tenant within an app (an every-app page is
// in the table's order), and the cursor of the next page ("" after the last).
type InstancePage struct {
	Items []Instance
	Next  string
	// Edited holds the page's instances that run an operator's edit (timer.EditRecord), read
	// with them: a listing needs no second read of every edit.
	Edited map[Key]bool
}
