package fileio

import (
	"testing"

	"github.com/emud-dev/emud/internal/testmain"
)

// TestMain fails the binary if its peak RSS passes testmain's limit.
func TestMain(m *testing.M) { testmain.RSSOnly(m) }
