package role

import (
	"runtime/debug"
	"strconv"
)

// memoryLimitShare is the share of the function's memory given to the Go runtime as its soft
// limit; the rest is for what the runtime does not count (the binary's text, the OS's own).
const memoryLimitShare = 0.8

// lambdaMemoryLimit is the Go runtime's soft memory limit for a function of
// AWS_LAMBDA_FUNCTION_MEMORY_SIZE MB (0: leave the runtime's, e.g. when GOMEMLIMIT is set).
// Lambda ends an invocation whose environment exceeds the function's memory, and Go's
// collector, paced by GOGC alone, lets the heap grow to twice the live data before it
// collects: a fetch of 50,000 firings peaked at 370 MB of a 128 MB function (bench
// fetch_window). With the limit the collector runs before the heap reaches it.
func lambdaMemoryLimit(getenv func(string) string) int64 {
	if getenv("GOMEMLIMIT") != "" {
		return 0
	}
	mb, err := strconv.Atoi(getenv("AWS_LAMBDA_FUNCTION_MEMORY_SIZE"))
	if err != nil || mb <= 0 {
		return 0
	}
	return int64(float64(mb) * memoryLimitShare * (1 << 20))
}

// setLambdaMemoryLimit applies lambdaMemoryLimit.
func setLambdaMemoryLimit(getenv func(string) string) {
	if limit := lambdaMemoryLimit(getenv); limit > 0 {
		debug.SetMemoryLimit(limit)
	}
}
