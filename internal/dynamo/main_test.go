package dynamo_test

import (
	"testing"

	"github.com/sundialhq/sundial/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }
