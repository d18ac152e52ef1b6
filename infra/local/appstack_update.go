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

	"github.com/aws/aws-lambda-go/cfn"

	"github.com/sundialhq/sundial/infra/sam"
)

// An app stack's template changed while the platform runs is applied as CloudFormation applies
// a stack update (`sam deploy` of the changed template), for its custom resources:
//
//   - update phase, in the template's order: a new resource gets Create; a resource whose
//     properties changed gets Update with OldResourceProperties and its physical id; one
//     whose answer names another physical id is replaced (Custom::SundialTimers whose App
//     changed);
//   - if a request fails, the update rolls back, newest first: a created resource gets
//     Delete, an updated one Update back to its previous properties, a replacement Delete
//     of its new physical id; the stack stands as before;
//   - cleanup phase, once every request succeeded: a replaced resource's old physical id
//     gets Delete, and so does each resource the template no longer has, newest first.
//
// Tables the template adds are created (provisioning keeps the existing ones); functions are
// not rebuilt or re-served (AppStackUpdate.Skipped says so: restart sundial up for them).

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
	// Failed is the request that failed the update, which was then rolled back ("" when the
	// update succeeded).
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

// UpdateAppStack applies the app stack in dir's current template to its deployed custom
// resources (see above). The error is the failed request's, after the rollback; a template
// that does not translate or resolve changes nothing.
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
	t, err := sam.TranslateFile(ctx, filepath.Join(abs, AppStackTemplate))
	if err != nil {
		return up, err
	}
	st, err := p.Local.ProvisionTemplate(ctx, t, state.Name, nil, p.Stack.Exports)
	if err != nil {
		return up, err
	}
	order, err := t.Order()
	if err != nil {
		return up, err
	}
	for _, id := range slices.Sorted(maps.Keys(st.Functions)) {
		up.Skipped = append(up.Skipped, fmt.Sprintf("%s (AWS::Lambda::Function): not rebuilt by an update; restart sundial up for a changed function", id))
	}
	var wanted []CustomResource
	for _, id := range order {
		if res := st.Resources[id]; res != nil && isCustomResource(res.Type) {
			cr := CustomResource{LogicalID: id, Type: res.Type, Properties: cfnProperties(res.Properties).(map[string]any)}
			cr.ServiceToken, _ = cr.Properties["ServiceToken"].(string)
			wanted = append(wanted, cr)
		}
	}
	before := map[string]CustomResource{}
	for _, cr := range state.CustomResources {
		before[cr.LogicalID] = cr
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
				return p.rollBack(ctx, up, state, done, cr, nil, err)
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
				return p.rollBack(ctx, up, state, done, cr, &old, err)
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
	for j := len(state.CustomResources) - 1; j >= 0; j-- {
		old := state.CustomResources[j]
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
	state.CustomResources = after
	p.appStates[i] = state
	return up, errors.Join(append(errs, p.saveAppStates())...)
}

// appliedChange is a request of an update's update phase that succeeded: a Create (created)
// or an Update of old into now.
type appliedChange struct {
	old, now CustomResource
	created  bool
}

// rollBack undoes an update's applied requests, newest first, after cr's request failed
// with cause. A failed Update (failedOld: the resource before) is rolled back too, as
// CloudFormation does: it gets an Update back to its previous properties. A failed Create
// gets nothing: its Delete would name the request id, which no handler of ours acts on.
func (p *Platform) rollBack(ctx context.Context, up AppStackUpdate, state AppStackState, done []appliedChange, cr CustomResource, failedOld *CustomResource, cause error) (AppStackUpdate, error) {
	up.Failed = fmt.Sprintf("%s (%s): %v", cr.LogicalID, cr.Type, cause)
	errs := []error{fmt.Errorf("%s (%s): %w; the update was rolled back", cr.LogicalID, cr.Type, cause)}
	if failedOld != nil {
		done = append(done, appliedChange{old: *failedOld, now: cr})
	}
	for j := len(done) - 1; j >= 0; j-- {
		a := done[j]
		var err error
		var ans cfn.Response
		switch {
		case a.created, a.now.PhysicalID != a.old.PhysicalID:
			ans, err = SendCustomResource(ctx, p.AWS, cfn.RequestDelete, state.StackID, a.now, nil)
		default:
			back := a.old
			back.PhysicalID = a.now.PhysicalID
			ans, err = SendCustomResource(ctx, p.AWS, cfn.RequestUpdate, state.StackID, back, a.now.Properties)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("rollback: %s (%s): %w", a.now.LogicalID, a.now.Type, err))
			continue
		}
		up.Changes = append(up.Changes, AppStackChange{LogicalID: a.now.LogicalID, Type: a.now.Type, Action: "Rollback", Data: ans.Data})
	}
	return up, errors.Join(errs...)
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
