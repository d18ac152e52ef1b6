// Package localaws is Sundial's local AWS: the embedded engines (DynamoDB Local and fauxqs,
// run by infra/emulator, restarted when one dies: supervise.go), the stacks created on them
// from a template's SAM translation (infra/provision), and one endpoint in front of both
// (infra/gateway) that checks every call against the caller's IAM role, each function's role
// being given credentials of its own (Config). It runs no function: the local platform
// (infra/local) runs the functions and event sources on it, and the integration tests
// (internal/testenv) and the benchmarks use it alone. docs/local.md has the map.
package localaws
