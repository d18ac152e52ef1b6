package lambdarun_test

import (
	"testing"

	"github.com/sundialhq/sundial/internal/testenv"
)

// The real processor bootstrap needs a deployed stack; testenv starts the emulator only if a
// test asks for it.
func TestMain(m *testing.M) { testenv.Main(m) }
