package dynamo_test

import (
	"testing"

	"github.com/sundialhq/sundial/internal/jobs"
	"github.com/sundialhq/sundial/internal/jobs/jobstest"
)

// TestJobsContract holds the DynamoDB job store to the contract inmem.Jobs passes.
func TestJobsContract(t *testing.T) {
	jobstest.Contract(t, func(t *testing.T) jobs.Store {
		s, _ := newStore(t)
		return s
	})
}
