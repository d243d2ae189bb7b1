package cxx

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestLaneDivideByZero: an integer division by zero, or of INT_MIN by
// -1, in a kernel goes on as on a GPU with gpu_divide's values (register
// and memory divisors: -O2 and -O0), said once on stderr; on the host it
// traps as on any CPU.
func TestLaneDivideByZero(t *testing.T) {
	needCxx(t)
	want := strings.Join([]string{
		"0 0xffffffff", "1 0x12d687", "2 0xffffffff", "3 0xee6b2800",
		"4 0xffffffffffffffff", "5 0xfffffffdb34fe916", "6 0xffffffffffffffff", "7 0xf9ccd8a1c5080000",
		"8 0x80000000", "9 0", "10 0x8000000000000000", "11 0", "12 0x2a", ""}, "\n")
	for _, opt := range []string{"-O2", "-O0"} {
		prog := buildExample(t, "testdata/hip/divzero.cpp", opt)
		r := runProgram(t, runOpts{}, prog)
		require.Equal(t, 0, r.code, "%s: %s", opt, r.stderr)
		assert.Equal(t, want, r.stdout, opt)
		assert.Equal(t, 1, strings.Count(r.stderr, "integer division by zero or of INT_MIN by -1"), "%s: said once:\n%s", opt, r.stderr)
		h := runProgram(t, runOpts{}, prog, "host")
		assert.Equal(t, -1, h.code, "the host's division traps (a signal ends it): %s", h.stderr)
		assert.Empty(t, h.stdout)
	}
}
