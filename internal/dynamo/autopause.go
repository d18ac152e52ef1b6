package dynamo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/sundialhq/sundial/internal/timer"
)

// autoPauseItem is the stored form of timer.AutoPause on an instance item.
type autoPauseItem struct {
	After int   `dynamodbav:"after"`
	ForMs int64 `dynamodbav:"forMs,omitempty"`
}

func autoPauseToItem(a timer.AutoPause) *autoPauseItem {
	if a.After <= 0 {
		return nil
	}
	return &autoPauseItem{After: a.After, ForMs: a.For.Milliseconds()}
}

func (a *autoPauseItem) settings() timer.AutoPause {
	if a == nil {
		return timer.AutoPause{}
	}
	return timer.AutoPause{After: a.After, For: time.Duration(a.ForMs) * time.Millisecond}
}

// AutoPause is the platform's pause of an instance after failures in a row (p, from
// timer.Instance.AutoPauseDue): applied only while the instance is active, not paused and
// still has at least failures failed executions in a row, so a stream record delivered
// again, or read after a success or an operator's pause, changes nothing (false, with the
// instance as it is, or a zero one when it is gone). Like an
// operator's pause, a publish keeps it, and an end (p.Until) is listed for recovery.
func (s *Store) AutoPause(ctx context.Context, key timer.Key, p timer.Pause, failures int) (timer.Instance, bool, error) {
	n := expression.Name
	cond := n("pk").AttributeExists().And(n("active").Equal(expression.Value(true))).
		And(n("pausedAt").AttributeNotExists()).And(n("numberOfTries").GreaterThanEqual(expression.Value(failures)))
	in, err := s.pause(ctx, key, p, cond)
	if isConditionFailed(err) {
		cur, err := s.Get(ctx, key)
		if errors.Is(err, timer.ErrNotFound) {
			return timer.Instance{}, false, nil
		}
		return cur, false, err
	}
	if err != nil {
		return in, false, fmt.Errorf("pause %s after failures: %w", key, err)
	}
	return in, true, nil
}
