package console

import (
	"context"

	"github.com/sundialhq/sundial/internal/timer"
)

// Store is what Service Center reads; its changes go through admin.Service. dynamo.Store and
// inmem.Store implement it.
type Store interface {
	// Get reads an instance: timer.ErrNotFound.
	Get(ctx context.Context, key timer.Key) (timer.Instance, error)
	// List returns every instance, ordered by name then tenant.
	List(ctx context.Context) ([]timer.Instance, error)
	// Instances reads a page of instances: one timer's or one app's costs what it holds;
	// every app's (App "") reads the table a page at a time.
	Instances(ctx context.Context, q timer.InstanceQuery) (timer.InstancePage, error)
	// EditOf reads the edit in force on an instance; ok is false when it runs its defaults.
	EditOf(ctx context.Context, key timer.Key) (rec timer.EditRecord, ok bool, err error)
	// Edits returns every edit in force, by instance.
	Edits(ctx context.Context) (map[timer.Key]timer.EditRecord, error)
	// FetchState reads the fetch's watermark and last tick (zero: it never ran).
	FetchState(ctx context.Context) (timer.FetchState, error)
	// LogPage reads a page of the execution log, newest first, and the next page's cursor
	// ("" at the end).
	LogPage(ctx context.Context, q timer.LogPageQuery) ([]timer.Execution, string, error)
	// Execution reads one log entry by its instance and timer.Execution.Ref:
	// timer.ErrNotFound.
	Execution(ctx context.Context, key timer.Key, ref string) (timer.Execution, error)
	PoolReader
}

// PoolReader reads shared resources' pools by name (holders and waiters; a pool never
// written is left out).
type PoolReader interface {
	SlotPools(ctx context.Context, pools []string) (map[string]timer.Pool, error)
	// AppResources lists what each app's last publish declared (admin.ResourceStore).
	AppResources(ctx context.Context) ([]timer.AppResources, error)
}
