package cxx

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Bad arguments are refused, each with words naming the call, the argument
// and the caller's line (cxx/testdata/bounds/bad_args.cpp): a double or
// wild hipFree, hipFree of host memory, hipMalloc(nullptr), hipMemset of
// pageable host memory, 2 GiB of dynamic shared memory, a null out-pointer
// to ccoCommCreate, ccoMemAlloc or ccoWindowRegister, and a switch
// (EMUD_RACE, MORI_ENABLE_SDMA) that reads as neither on nor off. Before,
// each was accepted silently (issue 45).
func TestBadArguments(t *testing.T) {
	needCxx(t)
	root := setupCxx(t)
	src := filepath.Join(root, "cxx", "testdata", "bounds", "bad_args.cpp")
	prog := buildExample(t, src, "-O2", "-Wall", "-Werror", "-fno-sanitize=thread")
	at := func(line string) string { return src + ":" + line + ": " }
	for _, c := range []struct {
		mode, env string
		code      int
		words     string
	}{
		{"double_free", "", 0, at("34") + "hipFree (host main thread): ptr 0x2008"},
		{"wild_free", "", 0, "is not a pointer hipMalloc returned, or it was freed already"},
		{"host_free", "", 0, at("40") + "hipFree (host main thread): ptr 0x"},
		{"malloc_null", "", 0, at("41") + "hipMalloc (host main thread): ptr is null"},
		{"memset_host", "", 0, at("42") + "hipMemset (host main thread): destination 0x"},
		{"dyn_shared", "", 0, at("44") + "kernel launch nop (host main thread): 2147483648 B of dynamic shared memory a block: a block's LDS holds 163840 B"},
		{"comm_null", "", 0, at("50") + "ccoCommCreate: comm is null"},
		{"memalloc_null", "", 0, at("55") + "ccoMemAlloc: ptr is null"},
		{"window_null", "", 0, at("60") + "ccoWindowRegister: win is null"},
		{"ok", "EMUD_RACE=maybe", 1, `EMUD_RACE: "maybe" is neither on nor off`},
		{"ok", "MORI_ENABLE_SDMA=ture", 1, `MORI_ENABLE_SDMA: "ture" is neither on nor off`},
		{"ok", "MORI_ENABLE_SDMA=0", 0, ""},
	} {
		t.Run(c.mode+" "+c.env, func(t *testing.T) {
			r := runFull(t, prog, c.mode, c.env)
			out, report, code := r.stdout, r.stderr, r.code
			require.Equal(t, c.code, code, "stdout:\n%s\nstderr:\n%s", out, report)
			assert.NotContains(t, out, "FAIL")
			assert.Contains(t, report, c.words)
			if c.code == 0 && c.mode != "ok" {
				assert.Contains(t, out, "bad_args "+c.mode+": refused")
			}
		})
	}
}
