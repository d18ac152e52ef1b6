package orders

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/sundialhq/sundial/actionkit"
)

// FunctionName is the example function's name in template.yaml (OrderPushFunction), which
// examples/orders.yaml's timers name in their lambda action.
const FunctionName = "sundial-example-orderpush"

// LogicalID is the function's logical ID in template.yaml: locally it runs with that
// function's role.
const LogicalID = "OrderPushFunction"

// TableEnv names the function's orders table (template.yaml gives it the OrdersTable), and
// TableOutput is the stack output holding that table's name.
const (
	TableEnv    = "ORDERS_TABLE"
	TableOutput = "OrdersTableName"
)

// Handler is the order-push action: one timer execution pushes one batch.
type Handler struct {
	DB    DynamoDBAPI // the orders table's client
	Table string      // the table when the timer sets none (ORDERS_TABLE)
	// Open returns the repository of a table; default NewStore(DB, table).
	Open func(table string) Repository
	// Pusher sends orders; default an HTTPPusher.
	Pusher Pusher
	// Now is the clock that decides what is due and when a delay ends; default time.Now.
	Now func() time.Time
	Log *slog.Logger // default: discard
}

// Summary is a run's outcome, the function's JSON response (and so the body Sundial's log
// keeps for the execution).
type Summary struct {
	Timer     string `json:"timer,omitempty"`
	Execution string `json:"executionId,omitempty"`
	Shard     string `json:"shard,omitempty"`
	Fetched   int    `json:"fetched"`
	Pushed    int    `json:"pushed"`
	Delayed   int    `json:"delayed"`
	Failed    int    `json:"failed"`
	// Conflicts are orders someone else changed between the read and the write: not counted
	// above, nothing written.
	Conflicts int `json:"conflicts"`
	// Left are fetched orders not attempted because the run's deadline was near.
	Left      int     `json:"left"`
	PushedIDs []int64 `json:"pushedIds"`
}

// ErrConfig wraps invalid timer properties.
var ErrConfig = errors.New("orderpush: invalid timer properties")

// Handle runs one execution of the timer that sent p: fetch up to batch due orders of the
// shard, push each, and record each outcome with a conditional write. A push that fails is
// that order's outcome (delayed or failed), not the run's: the run fails only when it cannot
// do its work (bad properties, the table unreachable).
func (h *Handler) Handle(ctx context.Context, p actionkit.Payload) (Summary, error) {
	sum := Summary{Timer: p.Timer, Execution: p.ExecutionID, PushedIDs: []int64{}}
	c, err := ParseConfig(p.Properties)
	if err != nil {
		return sum, fmt.Errorf("%w of %q: %w", ErrConfig, p.Timer, err)
	}
	sum.Shard = c.Shard.String()
	table := c.Table
	if table == "" {
		table = h.Table
	}
	if table == "" {
		return sum, fmt.Errorf("%w of %q: no orders table: set property %s, or %s for the function", ErrConfig, p.Timer, PropTable, TableEnv)
	}
	repo := h.open(table)
	log := h.log().With("timer", p.Timer, "execution", p.ExecutionID, "shard", sum.Shard)

	due, err := repo.Due(ctx, h.now(), c.Batch, c.Shard)
	if err != nil {
		return sum, err
	}
	sum.Fetched = len(due)
	for i, o := range due {
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < c.PushTimeout+time.Second {
			sum.Left = len(due) - i // the next run takes them; a push cut short would be a guess
			log.Warn("deadline near: leaving orders for the next run", "left", sum.Left)
			break
		}
		pctx, cancel := context.WithTimeout(ctx, c.PushTimeout)
		perr := h.pusher().Push(pctx, c.Endpoint, o, PushMeta{Timer: p.Timer, Execution: p.ExecutionID, Shard: c.Shard, Attempt: o.RetryCount + 1})
		cancel()
		if ctx.Err() != nil {
			// The run itself ends (deadline, shutdown): this push's outcome is unknown, so the
			// order is left as it is and pushed again later (the Idempotency-Key tells).
			sum.Left = len(due) - i
			return sum, fmt.Errorf("orderpush: run ended while pushing order %d: %w", o.ID, ctx.Err())
		}
		now := h.now()
		d := Decide(o, perr, now, c)
		if err := repo.Apply(ctx, o, d, now); errors.Is(err, ErrConflict) {
			sum.Conflicts++
			log.Warn("order changed meanwhile: not marked", "order", o.ID, "outcome", d.Outcome)
			continue
		} else if err != nil {
			return sum, err
		}
		switch d.Outcome {
		case Pushed:
			sum.Pushed++
			sum.PushedIDs = append(sum.PushedIDs, o.ID)
		case Delayed:
			sum.Delayed++
			log.Info("push failed: delayed", "order", o.ID, "attempt", o.RetryCount+1, "next", d.NextPush, "error", d.Error)
		case Failed:
			sum.Failed++
			log.Warn("push failed: given up", "order", o.ID, "attempts", o.RetryCount+1, "error", d.Error)
		}
	}
	return sum, nil
}

func (h *Handler) open(table string) Repository {
	if h.Open != nil {
		return h.Open(table)
	}
	return NewStore(h.DB, table)
}

func (h *Handler) pusher() Pusher {
	if h.Pusher != nil {
		return h.Pusher
	}
	return &HTTPPusher{}
}

func (h *Handler) now() time.Time {
	if h.Now != nil {
		return h.Now()
	}
	return time.Now()
}

func (h *Handler) log() *slog.Logger {
	if h.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return h.Log
}
