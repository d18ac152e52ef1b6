package timer

import "time"

// Tenant is a registered tenant: multi-tenant timers have one instance per tenant.
type Tenant struct {
	Name    string    `json:"name"`
	Source  string    `json:"source"` // TenantCLI, TenantAPI or TenantListed
	AddedAt time.Time `json:"addedAt"`
	// ListedBy are the apps whose manifests list the tenant (tenants are environment-wide;
	// a tenant the manifests registered is removed when none lists it any more). A tenant the
	// manifest registered before apps existed has none: ListedByApp counts it as the
	// default app's. The apps are written as outside the program (DefaultApp for the
	// default app): the list is stored as a string set, which holds no empty string.
	ListedBy []string `json:"listedBy,omitempty"`
}

// Legacy reports whether the tenant was registered by a manifest before apps existed (its
// manifest, the default app's, is not recorded).
func (t Tenant) Legacy() bool { return t.Source == TenantListed && len(t.ListedBy) == 0 }

// ListedByApp reports whether app's manifest lists the tenant (app as the program spells
// it: "" the default app).
func (t Tenant) ListedByApp(app string) bool {
	if t.Legacy() {
		return app == ""
	}
	app = AppName(app) // as ListedBy writes it
	for _, a := range t.ListedBy {
		if a == app {
			return true
		}
	}
	return false
}

// Where a tenant was registered (Tenant.Source). An operator's registration outlives the
// manifest's list; a tenant the manifest listed goes when the manifest no longer lists it.
const (
	TenantCLI    = "cli"      // added with `sundial tenants add`, straight to the tables
	TenantAPI    = "api"      // added through Service Center's API (POST /api/tenants; tenants add --api)
	TenantListed = "manifest" // listed in the manifest's tenants
)

// ByOperator reports whether a tenant source is an operator's registration (the CLI's or
// the API's), which outlives the manifests' lists and replaces a manifest's source.
func ByOperator(source string) bool { return source == TenantCLI || source == TenantAPI }
