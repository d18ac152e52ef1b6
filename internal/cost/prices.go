// Package cost turns what the benchmark counted (AWS requests by operation, Lambda
// invocations and their durations, item and log sizes) into AWS usage and dollars, and prices
// the alternatives the report compares Sundial with.
package cost

// Prices are AWS list prices in USD for one region, without free tiers: on-demand, and
// DynamoDB's provisioned capacity.
//
// CHECK THESE BEFORE QUOTING THEM. They were taken on AsOf from AWS's public pricing pages as
// known to us and cross-checked against secondary sources; this machine cannot reach
// aws.amazon.com, so they were not read live. AWS changes prices (DynamoDB on-demand was
// halved in November 2024); a stale table silently skews every dollar figure in the report.
type Prices struct {
	Region string
	AsOf   string // the date the prices were taken
	Source string

	// DynamoDB on-demand, Standard table class.
	DynamoWriteRequestUnit float64 // per write request unit (1 KB of item, per table or index write)
	DynamoReadRequestUnit  float64 // per read request unit (4 KB strongly consistent; half for eventually consistent)
	DynamoStorageGBMonth   float64 // per GB-month, table and index storage

	// DynamoDB provisioned capacity, Standard table class: per write capacity unit-hour (one
	// 1 KB write a second for an hour) and read capacity unit-hour (one strongly consistent
	// 4 KB read a second, or two eventually consistent, for an hour).
	DynamoWCUHour float64
	DynamoRCUHour float64

	// SQS standard queues; each 64 KB chunk of a request's payload is billed as one request.
	SQSRequest float64

	// Lambda: requests, and duration for arm64 (the template's Architectures), first tier.
	LambdaRequest          float64
	LambdaGBSecondARM64    float64
	CloudWatchLogsIngestGB float64 // standard log class, per GB ingested

	// EventBridge custom events put (PutEvents), per 64 KB chunk of an entry.
	EventBridgeEvent float64

	// EventBridge Scheduler, per scheduled invocation (what Sundial's cost is compared with).
	SchedulerInvocation float64
}

// USEast1 is the price table the report uses.
var USEast1 = Prices{
	Region: "us-east-1",
	AsOf:   "2026-11-21",
	Source: "aws.amazon.com/{dynamodb,sqs,lambda,cloudwatch,eventbridge}/pricing (on-demand and DynamoDB provisioned, Standard table class, no free tier)",

	DynamoWriteRequestUnit: 0.625 / 1e6,
	DynamoReadRequestUnit:  0.125 / 1e6,
	DynamoStorageGBMonth:   0.25,
	DynamoWCUHour:          0.00065,
	DynamoRCUHour:          0.00013,

	SQSRequest: 0.40 / 1e6,

	LambdaRequest:          0.20 / 1e6,
	LambdaGBSecondARM64:    0.0000133334,
	CloudWatchLogsIngestGB: 0.50,

	EventBridgeEvent:    1.00 / 1e6,
	SchedulerInvocation: 1.00 / 1e6,
}
