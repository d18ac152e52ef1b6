package manifest

import (
	"fmt"
	"maps"
	"slices"

	"github.com/sundialhq/sundial/internal/errkind"
	"github.com/sundialhq/sundial/internal/timer"
)

// WithSharedResources gives the manifest the default app's resources (read from the
// platform): a timer of another app may use one of them when its own manifest defines no
// resource of that name. The default app's own manifest ignores them.
func (m Manifest) WithSharedResources(res map[string]int) Manifest {
	m.sharedResources, m.sharedResourcesKnown = res, true
	return m
}

// SharedResourcesPending lists another app's uses of a resource its manifest does not
// define, when the default app's resources are not known (offline): a publish resolves them
// against the default app's resources, or refuses the manifest.
func (m Manifest) SharedResourcesPending() []string {
	if m.isDefaultApp() || m.sharedResourcesKnown {
		return nil
	}
	var out []string
	for i, t := range m.Timers {
		for _, u := range t.Uses {
			if _, own := m.Resources[u]; !own {
				out = append(out, fmt.Sprintf("timers[%d] %q: uses %q", i, t.Name, u))
			}
		}
	}
	return out
}

// resourceUse resolves the resource name a timer of the manifest uses: its app's own, or
// else the default app's (environment-wide); ok is false when neither defines it.
func (m Manifest) resourceUse(name string) (timer.ResourceUse, bool) {
	if n, own := m.Resources[name]; own {
		return timer.ResourceUse{Pool: timer.PoolName(m.App, name), Slots: n}, true
	}
	if !m.isDefaultApp() {
		if n, ok := m.sharedResources[name]; ok {
			return timer.ResourceUse{Pool: timer.PoolName("", name), Slots: n}, true
		}
	}
	return timer.ResourceUse{}, false
}

// resolveResources copies the resources t uses into it (ResourceUses), as a publish stores
// them.
func (m Manifest) resolveResources(t Timer) Timer {
	t.ResourceUses = nil
	for _, name := range t.Uses {
		if u, ok := m.resourceUse(name); ok {
			t.ResourceUses = append(t.ResourceUses, u)
		}
	}
	return t
}

// resourceProblems checks resources: (names, slot counts) and every timer's uses:.
func (m Manifest) resourceProblems() []error {
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(m.Resources)) {
		n := m.Resources[name]
		if !timer.ValidName(name) {
			errs = append(errs, fmt.Errorf("%w: resources: name %q must match [A-Za-z0-9_-]{1,128}", errkind.Invalid, name))
		}
		if n < 1 || n > timer.MaxResourceSlots {
			errs = append(errs, fmt.Errorf("%w: resources: %s: %d slots is out of range 1..%d (at most that many executions hold it at once)", errkind.Invalid, name, n, timer.MaxResourceSlots))
		}
	}
	deferred := !m.isDefaultApp() && !m.sharedResourcesKnown
	for i, t := range m.Timers {
		where := fmt.Sprintf("timers[%d]", i)
		if t.Name != "" {
			where += fmt.Sprintf(" %q", t.Name)
		}
		bad := func(format string, args ...any) {
			errs = append(errs, fmt.Errorf("%w: %s: %s", errkind.Invalid, where, fmt.Sprintf(format, args...)))
		}
		if len(t.Uses) > timer.MaxUses {
			bad("uses: %d resources; a timer uses at most %d", len(t.Uses), timer.MaxUses)
		}
		seen := map[string]bool{}
		for _, u := range t.Uses {
			if seen[u] {
				bad("uses: %q is listed twice", u)
				continue
			}
			seen[u] = true
			if _, ok := m.resourceUse(u); ok || (deferred && timer.ValidName(u)) {
				continue
			}
			known := "the manifest defines none (add a top-level resources: map, such as resources: {erp: 2})"
			if len(m.Resources) > 0 {
				known = fmt.Sprintf("the manifest defines %q", slices.Sorted(maps.Keys(m.Resources)))
			}
			if !m.isDefaultApp() {
				known += fmt.Sprintf(", the default app %q", slices.Sorted(maps.Keys(m.sharedResources)))
			}
			bad("uses: unknown resource %q; %s", u, known)
		}
	}
	return errs
}
