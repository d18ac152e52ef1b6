package console

import (
	"fmt"
	"time"

	"github.com/sundialhq/sundial/internal/timer"
)

// OperationMessage says what Run Now, activate or deactivate did to in, for the console and
// the CLI alike: an inactive timer is "not scheduled (inactive)", whatever instant it kept.
func OperationMessage(op string, in timer.Instance) string {
	return operationMessage(op, in, time.Now())
}

func operationMessage(op string, in timer.Instance, now time.Time) string {
	switch {
	case op == "stop" && in.Stop != nil:
		return fmt.Sprintf("%s: stop requested of execution %s (running since %s); %s", in.Key, in.ExecutionID, clock(in.IsRunningSince), stopWhen(in))
	case op == "deactivate" && in.Running() && in.IsRunningSince.After(now):
		// A firing claimed ahead of its instant (the processor holds it until then): it has
		// not started yet, and "running since" a time to come reads as a wrong clock.
		return fmt.Sprintf("%s deactivated: not scheduled (inactive); the execution claimed for %s (it starts then) is not stopped", in.Key, clock(in.IsRunningSince))
	case op == "run-now" && in.Running():
		return fmt.Sprintf("%s is running (by %s); it runs again as soon as that execution finishes", in.Key, in.IsRunningBy)
	case op == "run-now":
		return fmt.Sprintf("%s: firing sent; it runs now", in.Key)
	case op == "deactivate" && in.Running():
		return fmt.Sprintf("%s deactivated: not scheduled (inactive); the execution running since %s is not stopped", in.Key, clock(in.IsRunningSince))
	case op == "deactivate":
		return fmt.Sprintf("%s deactivated: not scheduled (inactive)", in.Key)
	case in.NextRun.IsZero():
		return fmt.Sprintf("%s activated; not scheduled (no next run)", in.Key)
	}
	return fmt.Sprintf("%s activated; next run %s", in.Key, clock(in.NextRun))
}

// stopWhen says when a stopped execution ends.
func stopWhen(in timer.Instance) string {
	if in.Async {
		return "it ends at its next heartbeat, or at " + clock(in.LeaseExpiresAt) + " if none comes"
	}
	return "its action is aborted within seconds (at " + clock(in.LeaseExpiresAt) + " at the latest)"
}
