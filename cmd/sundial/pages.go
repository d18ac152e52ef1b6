package main

import (
	"context"
	"flag"
	"io"

	"github.com/sundialhq/sundial/internal/console"
	"github.com/sundialhq/sundial/internal/page"
)

// listPages writes a listing as its pages come (read follows the cursor): with --json one
// JSON object a line, each page written before the next is read, so the CLI holds one page
// whatever the listing's size; else the rows go to table once every page is read (its
// columns are aligned over every row).
func listPages[T any](ctx context.Context, read func(ctx context.Context, limit int, cursor string) (page.Page[T], error), size int, asJSON bool, w io.Writer, table func([]T) error) error {
	var rows []T
	err := console.Each(ctx, size, read, func(items []T) error {
		if asJSON {
			return writeJSONLines(w, items)
		}
		rows = append(rows, items...)
		return nil
	})
	if err != nil || asJSON {
		return err
	}
	return table(rows)
}

// pageSizeFlag is a list command's --page-size: the items it asks for a page (0: the
// listing's default; the API bounds it and answers a bad one with a 400).
func pageSizeFlag(fs *flag.FlagSet) *int {
	return fs.Int("page-size", 0, "read `N` items a page (default: the listing's; every page is read either way)")
}
