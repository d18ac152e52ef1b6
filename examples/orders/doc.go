// Package orders is a worked example of Sundial: the five scenarios of the order-push design
// note ("Timer Programming Sharing"), where a timer pushes completed orders to a third-party system.
//
//  1. Push completed orders (order_state 100, order_push_state 0), each exactly once: the mark
//     order_push_state = 100 is a conditional write (order_push_state = 0).
//  2. A failed push delays that order's next attempt by retryDelay (10 minutes in the note):
//     scheduled_push_time moves, and a run fetches only orders whose scheduled_push_time has come.
//  3. At most maxAttempts attempts (3): then order_push_state = 90 (failed), retry_count kept.
//  4. A run fetches up to batch orders (100) and pushes each.
//  5. Several timers share the work: shard tt_index of tt_total takes the orders with
//     order_id % tt_total == tt_index, so no order is pushed by two of them.
//
// One Lambda action (functions/orderpush, Handler.Handle) covers all five; the timer's
// properties choose the scenario (see ParseConfig): batch, retryDelay, maxAttempts,
// tt_index/tt_total, endpoint, table. examples/orders.yaml declares the five timers.
//
// # Fetching without WHERE … LIMIT
//
// DynamoDB has no "select … where order_state = 100 and order_push_state = 0 and now >=
// scheduled_push_time limit 100". The orders table has a sparse global secondary index, toPush:
// its partition key push_bucket is set only while an order is pushable (completed, not pushed,
// not failed) and removed by the write that marks it pushed or failed, so the index holds
// pushable orders only, and its sort key scheduled_push_time lets a Query read just the due
// ones ("scheduled_push_time <= now"), oldest first, with Limit = the batch. A run costs reads
// of what it pushes, not of the table.
//
// push_bucket is order_id % Buckets (10): it spreads index writes over ten partitions, and it
// is the shard key. A FilterExpression cannot compute order_id % tt_total, so the shard is
// stored instead: when tt_total divides Buckets (1, 2, 5, 10), shard tt_index reads exactly
// the buckets b with b % tt_total == tt_index (order_id % tt_total equals push_bucket %
// tt_total), and every item it reads is its own. Any other tt_total works too, but no key can
// serve every modulus at once: such a shard reads all ten buckets and keeps the orders with
// order_id % tt_total == tt_index in code, paying reads for the other shards' orders.
//
// The index is eventually consistent and projects keys only: a run re-reads its batch from
// the table with a consistent BatchGetItem, and skips an order that is no longer pushable or
// due (an index lagging behind the write that just marked it), so a stale index entry never
// causes a second push.
//
// # Exactly once
//
// Sundial never runs two executions of one timer at once, and shards are disjoint, so no two
// runs push the same order. Every state change is conditional (order_push_state = 0; a delay
// or a failure also on the retry_count read), so a late duplicate can never mark an order
// twice. What no timer can close alone is a run that pushed and then died before its mark
// (a crash, the function's timeout): the order is pushed again later. Each push therefore
// carries Idempotency-Key: order-<id>, for the third party to recognise a repeat; ThirdParty
// counts repeats as duplicates. The function's timeout (60 s) stays below the timers'
// timeout, so a run has ended before Sundial could hand its lease to the next run.
package orders
