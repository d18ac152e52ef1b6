package console

import (
	"fmt"
	"net/http"

	"github.com/sundialhq/sundial/internal/audit"
	"github.com/sundialhq/sundial/internal/timer"
)

// operate runs Run Now, activate or deactivate for the page and the API alike.
func (s *Server) operate(r *http.Request, key timer.Key, op string) (timer.Instance, string, error) {
	ctx := r.Context()
	var (
		in  timer.Instance
		err error
	)
	switch op {
	case "run-now":
		in, err = s.svc.Admin.RunNow(ctx, key)
	case "activate":
		in, err = s.svc.Admin.SetActive(ctx, key, true)
	case "deactivate":
		in, err = s.svc.Admin.SetActive(ctx, key, false)
	default:
		return in, "", errNoRoute
	}
	if err != nil {
		return in, "", err
	}
	s.log.Info("operator action", "op", op, "app", key.AppName(), "timer", key.Timer, "tenant", key.Tenant, "by", by(r))
	if err := s.svc.record(ctx, audit.Record{Who: by(r), Action: op}.ForKey(key)); err != nil {
		return in, "", err
	}
	return in, OperationMessage(op, in), nil
}

// OperationMessage says what Run Now, activate or deactivate did to in, for the console and
// the CLI alike: an inactive timer is "not scheduled (inactive)", whatever instant it kept.
func OperationMessage(op string, in timer.Instance) string {
	switch {
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
