package chaos

import (
	"log/slog"
	"time"

	"github.com/sundialhq/sundial/internal/dynamo"
	"github.com/sundialhq/sundial/internal/timer"
)

// Clock is a clock running Offset ahead of Base (behind, when negative).
type Clock struct {
	Base   timer.Clock
	Offset time.Duration
}

// Now implements timer.Clock.
func (c Clock) Now() time.Time { return c.Base.Now().Add(c.Offset) }

// Setup is what chaos changes in one process.
type Setup struct {
	Injector *Injector
	DynamoDB *DynamoDB
	SQS      *SQS
	// Clock is the system clock offset by Skew(seed, node, ClockSkew).
	Clock Clock
}

// New wraps the clients of the process named node and skews its clock; log receives one
// record per injected fault.
func New(c Config, node string, ddb dynamo.API, sq SQSAPI, log *slog.Logger) Setup {
	in := NewInjector(c, node, log)
	return Setup{
		Injector: in,
		DynamoDB: WrapDynamoDB(ddb, in),
		SQS:      WrapSQS(sq, in),
		Clock:    Clock{Base: timer.SystemClock{}, Offset: Skew(c.Seed, node, c.ClockSkew)},
	}
}
