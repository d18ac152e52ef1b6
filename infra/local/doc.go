// Package local is Sundial's local platform, and the entry point to it: Up runs the stack of
// template.yaml's SAM translation locally — or at an endpoint the user names — publishes the
// manifest, and runs the functions as Lambda would run them, each with the environment,
// timeout, schedule, event sources and IAM role the translation gives it. Its parts, by what
// is emulated (docs/local.md has the map):
//
//   - the AWS: the embedded engines and the endpoint in front of them with the stack
//     provisioned on them (embedded.go, over infra/localaws), or an endpoint given
//     (endpoint.go); the engines' supervision (supervise.go), EventBridge's and SNS's
//     deliveries (events.go);
//   - the functions: configured from the stack (functions.go), in this process or as
//     processes behind an emulated Runtime API (processes.go), and the Lambda Invoke API of
//     the action functions and the audit writer (actions.go);
//   - the event sources: the schedules, the SQS and the DynamoDB stream event source
//     mappings (sources.go, over infra/lambdarun);
//   - the stacks: the apps' own stacks and their custom resources (appstack.go,
//     appstack_update.go), the state file (state.go, lock.go) and sam local's environment
//     (samenv.go).
//
// Options has a part for each: AWSOptions and FunctionOptions; Up is their steps in order
// (platform.go).
package local
