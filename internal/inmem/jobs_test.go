package inmem_test

import (
	"testing"

	"github.com/sundialhq/sundial/internal/inmem"
	"github.com/sundialhq/sundial/internal/jobs"
	"github.com/sundialhq/sundial/internal/jobs/jobstest"
)

func TestJobsContract(t *testing.T) {
	jobstest.Contract(t, func(*testing.T) jobs.Store { return inmem.NewJobs() })
}
