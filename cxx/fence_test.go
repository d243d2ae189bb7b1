package cxx

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFenceSeesUnloggedStores: a lane's fence wakes every watcher only
// when some device store since the last such wake was not logged
// (capi's fenceWakesAll), and each kind of store no access log sees is
// known as such: a lane's call of the C library's memcpy or memset
// (emud c++ links the program with lane.c's wrappers) and a plain store
// in a unit built with -fno-sanitize=thread (hip_runtime.h's note). In
// testdata/fence/unlogged.cpp a poller parked on a flag must be woken by
// the fence after such a store, and acknowledge it, while the storing
// lane reads the clock for 10 µs; each case acknowledges 0 when its
// kind of store is not known (checked by breaking each by hand).
func TestFenceSeesUnloggedStores(t *testing.T) {
	needCxx(t)
	root := setupCxx(t)
	dir := t.TempDir()
	src := filepath.Join("testdata", "fence")
	run := func(args ...string) {
		t.Helper()
		var log bytes.Buffer
		require.NoError(t, Run(args, Options{Root: root, Library: lib.path, Stdout: &log, Stderr: &log}), "emud c++ %q:\n%s", args, log.String())
	}
	prog, obj, flag := filepath.Join(dir, "unlogged"), filepath.Join(dir, "unlogged.o"), filepath.Join(dir, "store_flag.o")
	run("-O1", "-c", filepath.Join(src, "unlogged.cpp"), "-o", obj)
	run("-O1", "-fno-sanitize=thread", "-c", filepath.Join(src, "store_flag.cpp"), "-o", flag)
	run(obj, flag, "-o", prog)
	for _, how := range []string{"memcpy", "memset", "plain"} {
		t.Run(how, func(t *testing.T) {
			stdout, stderr, code := runExample(t, prog, how)
			require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout, stderr)
			assert.Contains(t, stdout, "unlogged "+how+": PASS")
		})
	}
}
