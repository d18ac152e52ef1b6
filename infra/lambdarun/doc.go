// Package lambdarun runs Sundial's Lambda handlers the way Lambda does: an invocation is a
// JSON payload decoded into the handler's event type under a deadline, and the response is
// JSON. Its parts:
//
//   - the functions (Invoker): a handler in this process (function.go), or a function's
//     built bootstrap as processes behind an emulated Runtime API (process.go, instance.go,
//     dispatch.go, runtimeapi.go, control.go); reserved concurrency (Reserve);
//   - the Lambda Invoke API that timers' lambda actions and apps' custom resources reach,
//     with asynchronous invocations and their retries (invokeapi.go);
//   - the event sources around them: EventBridge schedules (schedule.go), SQS event source
//     mappings sharing the processor's slots in priority order (sqs.go, slots.go) with
//     Lambda's recursive loop detection (lineage.go), and DynamoDB stream event source
//     mappings (StreamSource: streams.go; reading the shards, streams_shard.go; failures
//     and the on-failure destination, streams_failure.go; the records as Lambda sends them,
//     streams_event.go; positions kept across restarts, positions.go).
//
// infra/local wires them to the stack's functions (docs/local.md has the map).
package lambdarun
