package cxx

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAPIHeaders: a program whose host unit includes only
// hip/hip_runtime_api.h and rocm_smi/rocm_smi.h, as MORI's
// mori/application/utils/check.hpp does (its benchmarks include it, and
// before these two headers they did not compile: "hip/hip_runtime_api.h:
// No such file or directory"), builds beside a unit with hip/hip_runtime.h
// and runs: HIP's calls work through its own check macros and
// rsmi_status_string has words for each status. A call of ROCm SMI's
// device API, which emud does not emulate, fails the build naming it.
func TestAPIHeaders(t *testing.T) {
	plainLine(t) // its programs are no -race builds: .ci/run runs it in a plain one
	needCxx(t)
	root := setupCxx(t)
	dir, err := filepath.Abs(filepath.Join("testdata", "apiheaders"))
	require.NoError(t, err)
	prog := buildExample(t, filepath.Join(dir, "host.cpp"), "-O2", "-Wall", "-Werror", filepath.Join(dir, "kernel.cpp"))
	stdout, stderr, code := runExample(t, prog)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
	for _, want := range []string{
		"devices 8\n",
		"init error: RSMI_STATUS_INIT_ERROR: the library is not initialised\n",
		"0x1234: RSMI_STATUS_UNKNOWN_ERROR: an unknown status\n",
		"null text: 1\n",
		"sum 2016\n",
		"apiheaders: PASS\n",
	} {
		assert.Contains(t, stdout, want)
	}

	var log bytes.Buffer
	err = Run([]string{"-c", filepath.Join(dir, "smi_call.cpp"), "-o", filepath.Join(t.TempDir(), "smi_call.o")},
		Options{Root: root, Library: lib.path, Stdout: &log, Stderr: &log})
	require.Error(t, err, "rsmi_init is not emulated: the build must fail")
	assert.Contains(t, log.String(), "rsmi_init")
	assert.Contains(t, log.String(), "smi_call.cpp:5")
}
