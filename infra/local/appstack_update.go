package local

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/aws/aws-lambda-go/cfn"

	"github.com/sundialhq/sundial/infra/sam"
)

// An app stack's template changed while the platform runs is applied as CloudFormation applies
// a stack update (`sam deploy` of the changed template), for its custom resources:
//
//   - the template is translated and provisioned first (its intrinsics resolve against the
//     new resources); a change of a custom resource's Type or ServiceToken is refused before
//     any request, as CloudFormation refuses it;
//   - update phase, in the template's order: a new resource gets Create; a resource whose
//     properties changed gets Update with OldResourceProperties and its physical id; one
//     whose answer names another physical id is replaced (Custom::SundialTimers whose App
//     changed);
//   - if a request fails, the update rolls back: first every updated resource, the failed
//     one included, gets an Update back to its previous properties (newest first); then, in
//     the rollback's cleanup, the resources the update created (a failed Create included,
//     named by the physical id its answer gave) and the new physical ids of replacements get
//     Delete; the previous template is provisioned again (its roles and outputs);
//   - cleanup phase, once every request succeeded: a replaced resource's old physical id gets
//     Delete, then each resource the template no longer has, newest first.
//
// Tables and queues the new template adds are created and stay, also after a rollback;
// changed or removed ones are left as they are. Functions are not rebuilt or re-served
// (AppStackUpdate.Skipped says so: restart sundial up for them).

// AppStackChange is what a stack update did to one custom resource.
type AppStackChange struct {
	LogicalID, Type string
	// Action: Create, Update, Replace (Update answered a new physical id; the old one got
	// Delete in the cleanup), Delete (no longer in the template), or, during a rollback,
	// Rollback (Update back, or Delete of what the update created).
	Action string
	Data   map[string]any // the function's answer
}

// AppStackUpdate is what UpdateAppStack did.
type AppStackUpdate struct {
	Name    string
	Changes []AppStackChange
	// Applied: the update phase succeeded (an error is then the cleanup's). Failed names the
	// request that failed the update, which was then rolled back ("" when it did not fail).
	Applied bool
	Failed  string
	Skipped []string
}

// AppStackTemplateHash identifies an app stack's template's content, for a watcher to tell a
// change from a touch.
func AppStackTemplateHash(dir string) ([32]byte, error) {
	b, err := os.ReadFile(filepath.Join(dir, AppStackTemplate))
	if err != nil {
		return [32]byte{}, err
	}
	return sha256.Sum256(b), nil
}

// AppStackHash is the hash of the template the platform last deployed or tried to update for
// the app stack in dir (ok false: no such stack).
func (p *Platform) AppStackHash(dir string) (hash [32]byte, ok bool) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return hash, false
	}
	p.appMu.Lock()
	defer p.appMu.Unlock()
	hash, ok = p.appHashes[abs]
	return hash, ok
}

// UpdateAppStack applies the app stack in dir's current template to its deployed custom
// resources (see above). The error is the failed request's, after the rollback, or the
// cleanup's; a template that does not translate or provision, or changes a custom resource's
// Type or ServiceToken, changes nothing. A stack `sundial app-stack delete` deleted is not
// updated (restart sundial up to deploy it again).
func (p *Platform) UpdateAppStack(ctx context.Context, dir string) (AppStackUpdate, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return AppStackUpdate{}, err
	}
	p.appMu.Lock()
	defer p.appMu.Unlock()
	i := slices.IndexFunc(p.appStates, func(a AppStackState) bool { return a.Dir == abs })
	if i < 0 {
		return AppStackUpdate{}, fmt.Errorf("app stack %s is not deployed on this platform", dir)
	}
	state := p.appStates[i]
	up := AppStackUpdate{Name: state.Name}
	if p.state != "" {
		// `sundial app-stack delete` (another process) marks the stack deleted beside the state
		// file; the state file is this platform's own.
		if AppStackDeleted(filepath.Dir(p.state), state.Name) {
			p.appStates = slices.Delete(p.appStates, i, i+1)
			p.AppStacks = slices.Delete(p.AppStacks, i, i+1)
			delete(p.appHashes, abs) // nothing more to watch
			return up, errors.Join(fmt.Errorf("app stack %s was deleted (sundial app-stack delete): restart sundial up to deploy it again", state.Name), p.saveAppStates())
		}
	}
	if p.appHashes[abs], err = AppStackTemplateHash(abs); err != nil {
		return up, err
	}
	t, err := sam.TranslateFile(ctx, filepath.Join(abs, AppStackTemplate))
	if err != nil {
		return up, err
	}
	prev := p.appTemplates[state.Name]
	restore := func() error { // the previous template's roles and outputs
		if _, err := p.Local.ProvisionTemplate(ctx, prev, state.Name, nil, p.Stack.Exports); err != nil {
			return fmt.Errorf("provisioning the previous template again: %w", err)
		}
		return nil
	}
	st, err := p.Local.ProvisionTemplate(ctx, t, state.Name, nil, p.Stack.Exports)
	if err != nil {
		return up, errors.Join(fmt.Errorf("%w; no custom resource was sent a request", err), restore())
	}
	order, err := t.Order()
	if err != nil {
		return up, errors.Join(err, restore())
	}
	served, added := functionChanges(prev, t, slices.Sorted(maps.Keys(st.Functions)), p.appFunctions[state.Name])
	for _, id := range added {
		up.Skipped = append(up.Skipped, fmt.Sprintf("%s (AWS::Lambda::Function): added by the update, not served: restart sundial up", id))
	}
	if len(served) > 0 {
		up.Skipped = append(up.Skipped, fmt.Sprintf("functions %s: changed, not rebuilt by an update: restart sundial up for them", strings.Join(served, ", ")))
	}
	before := map[string]CustomResource{}
	for _, cr := range state.CustomResources {
		before[cr.LogicalID] = cr
	}
	wanted := customResources(st, order)
	for _, cr := range wanted {
		id := cr.LogicalID
		if old, had := before[id]; had {
			switch {
			case old.Type != cr.Type:
				return up, errors.Join(fmt.Errorf("%s: Update of resource type is not permitted (%s to %s); no custom resource was sent a request", id, old.Type, cr.Type), restore())
			case old.ServiceToken != cr.ServiceToken:
				return up, errors.Join(fmt.Errorf("%s (%s): Modifying service token is not allowed; no custom resource was sent a request", id, cr.Type), restore())
			}
		}
	}

	// Update phase.
	var done []appliedChange
	var after []CustomResource
	for _, cr := range wanted {
		old, had := before[cr.LogicalID]
		switch {
		case !had:
			ans, err := SendCustomResource(ctx, p.AWS, cfn.RequestCreate, state.StackID, cr, nil)
			if err != nil {
				cr.PhysicalID = ans.PhysicalResourceID // a FAILED answer's: its rollback Delete names it
				return up, p.rollBack(ctx, &up, i, state, done, appliedChange{now: cr, created: true}, err, restore)
			}
			cr.PhysicalID, cr.Data = ans.PhysicalResourceID, ans.Data
			done = append(done, appliedChange{now: cr, created: true})
			up.Changes = append(up.Changes, AppStackChange{LogicalID: cr.LogicalID, Type: cr.Type, Action: "Create", Data: ans.Data})
		case reflect.DeepEqual(old.Properties, cr.Properties):
			cr.PhysicalID, cr.Data = old.PhysicalID, old.Data
		default:
			cr.PhysicalID = old.PhysicalID
			ans, err := SendCustomResource(ctx, p.AWS, cfn.RequestUpdate, state.StackID, cr, old.Properties)
			if err != nil {
				return up, p.rollBack(ctx, &up, i, state, done, appliedChange{old: old, now: cr}, err, restore)
			}
			action := "Update"
			if ans.PhysicalResourceID != "" && ans.PhysicalResourceID != old.PhysicalID {
				action = "Replace"
			}
			cr.PhysicalID, cr.Data = cmp.Or(ans.PhysicalResourceID, old.PhysicalID), ans.Data
			done = append(done, appliedChange{old: old, now: cr})
			up.Changes = append(up.Changes, AppStackChange{LogicalID: cr.LogicalID, Type: cr.Type, Action: action, Data: ans.Data})
		}
		after = append(after, cr)
	}
	up.Applied = true
	p.appTemplates[state.Name] = t
	previous := state.CustomResources
	state.CustomResources = after
	p.appStates[i] = state
	rep := &p.AppStacks[i]
	rep.Published, rep.Outputs = after, st.Outputs

	// Cleanup phase: failures here do not roll the update back (CloudFormation reports them
	// and the stack stays updated).
	var errs []error
	for _, a := range done {
		if !a.created && a.now.PhysicalID != a.old.PhysicalID {
			if _, err := SendCustomResource(ctx, p.AWS, cfn.RequestDelete, state.StackID, a.old, nil); err != nil {
				errs = append(errs, fmt.Errorf("cleanup: %s (%s) Delete of %s: %w", a.old.LogicalID, a.old.Type, a.old.PhysicalID, err))
			}
		}
	}
	for j := len(previous) - 1; j >= 0; j-- {
		old := previous[j]
		if slices.ContainsFunc(wanted, func(cr CustomResource) bool { return cr.LogicalID == old.LogicalID }) {
			continue
		}
		ans, err := SendCustomResource(ctx, p.AWS, cfn.RequestDelete, state.StackID, old, nil)
		if err != nil {
			errs = append(errs, fmt.Errorf("cleanup: %s (%s) Delete: %w", old.LogicalID, old.Type, err))
			continue
		}
		up.Changes = append(up.Changes, AppStackChange{LogicalID: old.LogicalID, Type: old.Type, Action: "Delete", Data: ans.Data})
	}
	return up, errors.Join(append(errs, p.saveAppStates())...)
}

// appliedChange is a request of an update's update phase: a Create (created) or an Update of
// old into now.
type appliedChange struct {
	old, now CustomResource
	created  bool
}

// rollBack rolls the update back after failed's request failed with cause (see above), and
// records in the state what stands: the previous resources, except those whose rollback
// failed (CloudFormation's UPDATE_ROLLBACK_FAILED), which stay as the update left them.
func (p *Platform) rollBack(ctx context.Context, up *AppStackUpdate, i int, state AppStackState, done []appliedChange,
	failed appliedChange, cause error, restore func() error) error {
	up.Failed = fmt.Sprintf("%s (%s): %v", failed.now.LogicalID, failed.now.Type, cause)
	stands := slices.Clone(state.CustomResources)
	var errs []error
	record := func(a appliedChange, action string, ans cfn.Response, err error) {
		if err != nil {
			errs = append(errs, fmt.Errorf("%s (%s) %s: %w", a.now.LogicalID, a.now.Type, action, err))
			if a.created {
				stands = append(stands, a.now)
			} else if k := slices.IndexFunc(stands, func(cr CustomResource) bool { return cr.LogicalID == a.now.LogicalID }); k >= 0 {
				stands[k] = a.now
			}
			return
		}
		up.Changes = append(up.Changes, AppStackChange{LogicalID: a.now.LogicalID, Type: a.now.Type, Action: "Rollback", Data: ans.Data})
	}
	all := append(slices.Clone(done), failed)
	// Updates back, newest first (the failed Update included)...
	for j := len(all) - 1; j >= 0; j-- {
		if a := all[j]; !a.created && a.now.PhysicalID == a.old.PhysicalID {
			back := a.old
			back.PhysicalID = a.now.PhysicalID
			ans, err := SendCustomResource(ctx, p.AWS, cfn.RequestUpdate, state.StackID, back, a.now.Properties)
			record(a, "Update back", ans, err)
		}
	}
	// ...then the rollback's cleanup: what the update created, and replacements' new ids.
	for j := len(all) - 1; j >= 0; j-- {
		a := all[j]
		if (a.created || a.now.PhysicalID != a.old.PhysicalID) && a.now.PhysicalID != "" {
			ans, err := SendCustomResource(ctx, p.AWS, cfn.RequestDelete, state.StackID, a.now, nil)
			record(a, "Delete", ans, err)
		}
	}
	state.CustomResources = stands
	p.appStates[i] = state
	outcome := fmt.Errorf("%s (%s): %w; the update was rolled back", failed.now.LogicalID, failed.now.Type, cause)
	if len(errs) > 0 {
		outcome = fmt.Errorf("%s (%s): %w; the rollback failed (UPDATE_ROLLBACK_FAILED): %w", failed.now.LogicalID, failed.now.Type, cause, errors.Join(errs...))
	}
	return errors.Join(outcome, restore(), p.saveAppStates())
}

// saveAppStates records the app stacks in the state file, for `sundial app-stack delete`.
func (p *Platform) saveAppStates() error {
	if p.state == "" {
		return nil
	}
	s, ok := ReadState(p.state)
	if !ok {
		return fmt.Errorf("state %s: unreadable", p.state)
	}
	s.AppStacks = p.appStates
	return WriteState(p.state, s)
}

// functionChanges sorts an update's functions (ids, of the new template next) into the served
// ones (in running) whose definition differs from the previous template's, which the update
// does not rebuild, and the added ones, which it does not serve. A function the update left
// alone is neither: an update of timers only says nothing about functions.
func functionChanges(prev, next *sam.Template, ids []string, running map[string]bool) (changed, added []string) {
	for _, id := range ids {
		if !running[id] {
			added = append(added, id)
		} else if prev == nil || !reflect.DeepEqual(prev.Resources[id], next.Resources[id]) {
			changed = append(changed, id)
		}
	}
	return changed, added
}
