package rocm_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The backend shares the layout and the address space with the emulator
// through package lsa, not by importing the emulator: no non-test file,
// under any build tag, imports engine.
func TestNoEngineImport(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	seen := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		af, err := parser.ParseFile(token.NewFileSet(), f, src, parser.ImportsOnly)
		require.NoError(t, err)
		for _, im := range af.Imports {
			p, err := strconv.Unquote(im.Path.Value)
			require.NoError(t, err)
			assert.NotEqual(t, "github.com/emud-dev/emud/engine", p, "%s imports the emulator", f)
		}
		seen++
	}
	assert.Greater(t, seen, 5, "the package's files were read")
}
