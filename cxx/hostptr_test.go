package cxx

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A HIP copy or memset given a null, wild or freed host pointer fails with
// hipErrorInvalidValue and words naming the call, the argument and the
// caller's line (examples/cxx/errors/host_pointer.cpp); before, touching
// the pointer crashed the program with a Go runtime dump (exit 131).
func TestHostPointerErrors(t *testing.T) {
	needCxx(t)
	root := setupCxx(t)
	prog := buildExample(t, filepath.Join(root, "examples", "cxx", "errors", "host_pointer.cpp"), "-O2", "-Wall", "-Werror", "-fno-sanitize=thread")
	for _, c := range []struct{ mode, words string }{
		{"null", "host_pointer.cpp:23: hipMemcpy (host main thread): hipMemcpy destination is a null host pointer"},
		{"wild", "host_pointer.cpp:25: hipMemcpy (host main thread): hipMemcpy source 0x10 (4096 bytes) is not mapped host memory"},
		{"freed", "host_pointer.cpp:32: hipMemcpyAsync (host main thread): hipMemcpyAsync destination 0x"},
		{"memset", "host_pointer.cpp:35: hipMemset (host main thread): hipMemset destination 0x1000 (64 bytes) is not mapped host memory"},
	} {
		t.Run(c.mode, func(t *testing.T) {
			out, report, code := runExample(t, prog, c.mode)
			require.Equal(t, 1, code, "stdout:\n%s\nstderr:\n%s", out, report)
			assert.Contains(t, report, c.words)
			assert.Contains(t, report, "failed: hipErrorInvalidValue")
			assert.NotContains(t, out, "FAIL")
		})
	}
}
