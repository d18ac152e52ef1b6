//go:build unix

package local_test

import "testing"

// The processor runs as bootstrap processes: SUNDIAL_LAMBDA_ENDPOINT reaches them through
// their environment, and their Lambda client invokes the platform's Invoke API.
func TestLambdaActionsFromProcesses(t *testing.T) {
	testLambdaActions(t, true)
}
