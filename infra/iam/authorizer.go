package iam

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// Authorizer decides calls for the identities it knows, by access key ID, and remembers
// what it decided: the denials and which grants the allowed calls used. It holds each
// key's secret, for the endpoint to verify the request's signature with (Credential). A key
// it does not know is refused (ErrUnknownKey); an administrator's key is allowed
// everything and not recorded.
type Authorizer struct {
	Env Env

	mu     sync.Mutex
	creds  map[string]Credential // by access key ID
	roles  map[string]*Role      // by access key ID
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
	return &Authorizer{Env: env, creds: map[string]Credential{}, roles: map[string]*Role{}, used: map[string]map[Grant]int{}, calls: map[string]int{}}
}

// Credential is what an access key ID stands for: its secret and its principal.
type Credential struct {
	Secret string
	// Principal names the caller: a role's name, or the administrator's.
	Principal string
	// Admin: allowed everything (the platform's administrator), else the role's policies.
	Admin bool
}

// ErrUnknownKey is a request signed with an access key ID the authorizer does not know.
var ErrUnknownKey = errors.New("the security token included in the request is invalid")

// Credential returns what accessKeyID stands for.
func (a *Authorizer) Credential(accessKeyID string) (Credential, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	c, ok := a.creds[accessKeyID]
	return c, ok
}

// AddAdmin makes calls signed with accessKeyID and secret the administrator's (named name):
// allowed everything.
func (a *Authorizer) AddAdmin(accessKeyID, secret, name string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.creds[accessKeyID] = Credential{Secret: secret, Principal: name, Admin: true}
	delete(a.roles, accessKeyID)
}

// AddRole makes calls signed with accessKeyID and secret the role's.
func (a *Authorizer) AddRole(accessKeyID, secret string, r *Role) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.creds[accessKeyID] = Credential{Secret: secret, Principal: r.Name}
	a.roles[accessKeyID] = r
	if a.used[r.Name] == nil {
		a.used[r.Name] = map[Grant]int{}
	}
}

// Authorize checks the request signed with accessKeyID (its signature verified by the
// caller). It returns the principal's name and, when a role may not make it, the first call
// refused; an administrator may make any call.
func (a *Authorizer) Authorize(accessKeyID string, r Request) (principal string, refused *Call, err error) {
	a.mu.Lock()
	cred, known := a.creds[accessKeyID]
	rl := a.roles[accessKeyID]
	a.mu.Unlock()
	if !known {
		return "", nil, ErrUnknownKey
	}
	if cred.Admin {
		return cred.Principal, nil, nil
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
