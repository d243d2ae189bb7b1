package rocm_test

import (
	"testing"

	"github.com/emud-dev/emud/internal/testmain"
)

func TestMain(m *testing.M) { testmain.Run(m) }
