package timer

import "time"

// Tenant is a registered tenant: multi-tenant timers have one instance per tenant.
type Tenant struct {
	Name    string    `json:"name"`
	Source  string    `json:"source"` // TenantCLI or TenantListed
	AddedAt time.Time `json:"addedAt"`
}

// Where a tenant was registered (Tenant.Source). An operator's registration outlives the
// manifest's list; a tenant the manifest listed goes when the manifest no longer lists it.
const (
	TenantCLI    = "cli"      // added with `sundial tenants add`
	TenantListed = "manifest" // listed in the manifest's tenants
)
