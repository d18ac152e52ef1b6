package iam

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// Authorizer decides calls for the identities it knows, by access key ID, and remembers
// what it decided: the denials and which grants the allowed calls used. Keys it does not
// know are the operator's (the CLI, tests, a developer's shell): allowed everything and
// not recorded, as an administrator's credentials would be.
type Authorizer struct {
	Env Env

	mu     sync.Mutex
	roles  map[string]*Role // by access key ID
	denied []Denial
	used   map[string]map[Grant]int // role name → grant → calls
	calls  map[string]int           // role name → calls checked
}

// Denial is a call a role was refused.
type Denial struct {
	Role string
	Call Call
}

func (d Denial) String() string { return fmt.Sprintf("%s may not %s", d.Role, d.Call) }

// NewAuthorizer returns an authorizer with no roles.
func NewAuthorizer(env Env) *Authorizer {
	return &Authorizer{Env: env, roles: map[string]*Role{}, used: map[string]map[Grant]int{}, calls: map[string]int{}}
}

// AddRole makes calls signed with accessKeyID the role's.
func (a *Authorizer) AddRole(accessKeyID string, r *Role) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.roles[accessKeyID] = r
	if a.used[r.Name] == nil {
		a.used[r.Name] = map[Grant]int{}
	}
}

// Authorize checks the request signed with accessKeyID. It returns the role's name ("" for
// the operator) and, when the role may not make it, the first call refused.
func (a *Authorizer) Authorize(accessKeyID string, r Request) (role string, refused *Call, err error) {
	a.mu.Lock()
	rl := a.roles[accessKeyID]
	a.mu.Unlock()
	if rl == nil {
		return "", nil, nil
	}
	calls, err := a.Env.Calls(r)
	if err != nil {
		return rl.Name, nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls[rl.Name]++
	for _, c := range calls {
		ok, matched := rl.Decide(c)
		if !ok {
			a.denied = append(a.denied, Denial{Role: rl.Name, Call: c})
			return rl.Name, &c, nil
		}
		for _, g := range matched {
			a.used[rl.Name][g]++
		}
	}
	return rl.Name, nil, nil
}

// Report is what the authorizer saw.
type Report struct {
	Denied []Denial
	// Unused are the grants of the template's own policies (managed policies excluded) that
	// no allowed call used, by role.
	Unused map[string][]Grant
	// Calls are the calls checked, by role.
	Calls map[string]int
}

// Report returns the denials so far and the grants no call has used.
func (a *Authorizer) Report() Report {
	a.mu.Lock()
	defer a.mu.Unlock()
	rep := Report{Denied: slices.Clone(a.denied), Unused: map[string][]Grant{}, Calls: maps.Clone(a.calls)}
	seen := map[string]bool{}
	for _, r := range a.roles {
		if seen[r.Name] {
			continue
		}
		seen[r.Name] = true
		for _, g := range r.Grants() {
			if a.used[r.Name][g] == 0 {
				rep.Unused[r.Name] = append(rep.Unused[r.Name], g)
			}
		}
	}
	return rep
}

// String renders the report for a test log or a console.
func (r Report) String() string {
	var b strings.Builder
	if len(r.Denied) == 0 {
		b.WriteString("IAM: no call was denied\n")
	} else {
		fmt.Fprintf(&b, "IAM: %d calls denied (AWS would answer AccessDenied):\n", len(r.Denied))
		for _, d := range r.Denied {
			fmt.Fprintf(&b, "  %s\n", d)
		}
	}
	for _, role := range slices.Sorted(maps.Keys(r.Calls)) {
		fmt.Fprintf(&b, "IAM: %s made %d checked calls\n", role, r.Calls[role])
	}
	for _, role := range slices.Sorted(maps.Keys(r.Unused)) {
		for _, g := range r.Unused[role] {
			fmt.Fprintf(&b, "IAM: unused grant of %s: %s\n", role, g)
		}
	}
	return b.String()
}
