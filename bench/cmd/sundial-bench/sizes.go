package main

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/sundialhq/sundial/internal/cost"
	"github.com/sundialhq/sundial/internal/dynamo"
	"github.com/sundialhq/sundial/internal/timer"
)

// itemSizes sizes a timer item and a log item of a stack as DynamoDB bills them. A write is
// billed on the larger of the item before and after, and a timer item is largest while it
// runs, so one timer is claimed here (after the run) and read back in that state; the log
// item is the largest of a sample.
func (e *env) itemSizes(ctx context.Context, d deployed) (cost.ItemSizes, error) {
	ddb := dynamodb.NewFromConfig(e.aws)
	logs, err := ddb.Scan(ctx, &dynamodb.ScanInput{TableName: &d.cfg.LogTable, Limit: aws.Int32(25)})
	if err != nil {
		return cost.ItemSizes{}, fmt.Errorf("scan log table: %w", err)
	}
	var sizes cost.ItemSizes
	for _, it := range logs.Items {
		sizes.Log = max(sizes.Log, cost.ItemSize(it))
	}
	store := dynamo.New(ddb, d.cfg.TimersTable, d.cfg.LogTable, d.cfg.LogRetention)
	timers, err := store.List(ctx)
	if err != nil {
		return cost.ItemSizes{}, err
	}
	for _, in := range timers {
		if in.Running() || in.NextRun.IsZero() || !in.Active {
			continue
		}
		if _, err := store.Claim(ctx, in.Key, timer.Claim{Due: in.NextRun, ScheduledAt: in.NextRun, Attempt: 1,
			ExecutionID: "SIZEPROBE00000000000", By: "local-processor@bench-host-name:123456", Now: time.Now().UTC().Truncate(time.Millisecond)}); err != nil {
			continue // it fired meanwhile; try another
		}
		// The claimed item is now the largest: it holds the lease attributes too.
		sizes.Timer, err = largestItem(ctx, ddb, d.cfg.TimersTable)
		if err != nil {
			return cost.ItemSizes{}, err
		}
		break
	}
	if sizes.Timer == 0 || sizes.Log == 0 {
		return sizes, fmt.Errorf("item sizes: found no timer (%d) or log item (%d) to size", sizes.Timer, sizes.Log)
	}
	return sizes, nil
}

func largestItem(ctx context.Context, ddb *dynamodb.Client, table string) (int, error) {
	largest := 0
	p := dynamodb.NewScanPaginator(ddb, &dynamodb.ScanInput{TableName: &table})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return 0, fmt.Errorf("scan %s: %w", table, err)
		}
		for _, it := range page.Items {
			largest = max(largest, cost.ItemSize(it))
		}
	}
	return largest, nil
}
