package admin

import (
	"context"
	"errors"
	"fmt"

	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/timer"
)

// validStackApp checks an app a stack may own: a valid name, not the default app (Sundial's
// own stack publishes that one, and deleting an app's stack deactivates its timers).
func validStackApp(app string) error {
	if err := timer.ValidateApp(app); err != nil {
		return err
	}
	if app == "" {
		return fmt.Errorf("%w: app %q is the app of Sundial's own stack; an app's stack names its own app", errkind.Invalid, timer.DefaultApp)
	}
	return nil
}

// ClaimApp makes the stack owner the app's owner, or confirms that it is, and records resource
// (the logical id of the stack's Custom::SundialTimers) as the one that publishes it: what a
// Create or Update does before it publishes. created says the claim is new (a publish that
// fails then releases it: UnclaimApp). Another stack's app is refused with
// timer.ErrAppOwned, naming that stack, and nothing changes.
func (s *Service) ClaimApp(ctx context.Context, app, owner, resource string) (held timer.AppOwner, created bool, err error) {
	if err := validStackApp(app); err != nil {
		return timer.AppOwner{}, false, err
	}
	if owner == "" {
		return timer.AppOwner{}, false, fmt.Errorf("%w: the owning stack's id is required", errkind.Invalid)
	}
	held, created, err = s.Store.ClaimApp(ctx, app, owner, resource, s.Clock.Now())
	if errors.Is(err, timer.ErrAppOwned) {
		return held, false, fmt.Errorf("%w: app %s belongs to stack %s (since %s); one stack owns an app's timers: "+
			"delete that stack's Custom::SundialTimers resource, or release the app with `sundial apps release %s`",
			timer.ErrAppOwned, app, held.Owner, held.Since.UTC().Format("2006-01-02 15:04:05Z"), app)
	}
	return held, created, err
}

// UnclaimApp undoes a new claim whose publish failed (the manifest rejected, the tables
// unavailable): the stack published nothing, and the Delete CloudFormation sends for its
// failed Create names no app, so the claim would otherwise outlive the stack.
func (s *Service) UnclaimApp(ctx context.Context, app, owner string) error {
	_, err := s.Store.ReleaseApp(ctx, app, owner)
	return err
}

// DeleteAppStack is a Custom::SundialTimers Delete: when the stack owner's resource (the
// logical id that published the app last) is deleted, the app's timers are deactivated
// (DeactivateApp, history kept), then its owner record is removed, so that another stack may
// publish the app. An app another stack owns, or that another resource of the same stack
// publishes now (a renamed resource: CloudFormation creates the new one, then deletes the
// old), is left alone (owned is false). An app with no record (released by an operator, or
// published before owners were recorded) is deactivated, as before. Deactivating before
// releasing makes a retried Delete safe: until the record is removed, no other stack can
// publish the app (short of an operator's release meanwhile).
func (s *Service) DeleteAppStack(ctx context.Context, app, owner, resource string) (rep SyncReport, owned bool, err error) {
	if err := validStackApp(app); err != nil {
		return rep, false, err
	}
	held, ok, err := s.Store.AppOwner(ctx, app)
	if err != nil {
		return rep, false, err
	}
	if ok && (held.Owner != owner || (held.Resource != "" && held.Resource != resource)) {
		return rep, false, nil
	}
	if rep, err = s.DeactivateApp(ctx, app); err != nil {
		return rep, true, err
	}
	if _, err := s.Store.ReleaseApp(ctx, app, owner); err != nil && !errors.Is(err, timer.ErrAppOwned) {
		return rep, true, fmt.Errorf("release app %s: %w", app, err)
	}
	return rep, true, nil
}

// ReleaseApp removes an app's owner record whoever holds it, leaving its timers as they are:
// for an owning stack that is gone without its resource's Delete (deleted with the resource
// retained, or its Delete failed), or to move an app to another stack. held is the record
// removed; timer.ErrNotFound if there was none.
func (s *Service) ReleaseApp(ctx context.Context, app string) (timer.AppOwner, error) {
	if err := validStackApp(app); err != nil {
		return timer.AppOwner{}, err
	}
	held, err := s.Store.ReleaseApp(ctx, app, "")
	if err != nil {
		return held, err
	}
	if held.Owner == "" {
		return held, fmt.Errorf("%w: app %s has no owning stack", errkind.NotFound, app)
	}
	return held, nil
}

// AppOwners lists which stack owns each app its stack published, by app.
func (s *Service) AppOwners(ctx context.Context) ([]timer.AppOwner, error) {
	return s.Store.AppOwners(ctx)
}
