package doccheck

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	// hipCall matches a HIP runtime call the header declares or defines.
	hipCall = regexp.MustCompile(`\b(hip[A-Z][A-Za-z0-9_]*)\s*\(`)
	// hipUnsupported matches the header's list of calls that fail the
	// build by name.
	hipUnsupported = regexp.MustCompile(`(?m)^EMUD_UNSUPPORTED\((hip[A-Za-z0-9_]+)\)`)
	// ccoName matches a name of MORI's cco API.
	ccoName = regexp.MustCompile(`\b(cco[A-Z][A-Za-z0-9_]*)\b`)
	// apiSpan matches a code span of the page naming one HIP or cco name.
	apiSpan = regexp.MustCompile("`((?:hip|cco)[A-Z][A-Za-z0-9_]*)`")
)

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

// headerNames returns what emud's headers declare: the HIP calls
// emulated, the HIP calls refused by name, and MORI's cco names.
func headerNames(hip, cco string) (supported, unsupported, mori map[string]bool) {
	supported, unsupported, mori = map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, m := range hipUnsupported.FindAllStringSubmatch(hip, -1) {
		unsupported[m[1]] = true
	}
	for _, m := range hipCall.FindAllStringSubmatch(hip, -1) {
		if !unsupported[m[1]] {
			supported[m[1]] = true
		}
	}
	for _, m := range ccoName.FindAllStringSubmatch(cco, -1) {
		mori[m[1]] = true
	}
	return supported, unsupported, mori
}

// TestSubsetsMatchHeaders: docs/subsets.md names every cco name emud's
// cco.hpp declares, and no HIP or cco name the headers lack (a constant
// such as hipStreamNonBlocking counts where a header has it). The full
// HIP list is docs/hip.md's, which cxx's TestHIPCallsDocumented checks.
func TestSubsetsMatchHeaders(t *testing.T) {
	mod := root(t)
	hip := readFile(t, filepath.Join(mod, "include", "hip", "hip_runtime.h"))
	cco := readFile(t, filepath.Join(mod, "include", "mori", "cco", "cco.hpp"))
	supported, unsupported, mori := headerNames(hip, cco)
	require.Contains(t, supported, "hipMalloc", "the header reader found the HIP calls")
	require.Contains(t, unsupported, "hipMalloc3D")
	require.Contains(t, mori, "ccoSdma")
	page := readFile(t, filepath.Join(mod, "docs", "subsets.md"))
	named := map[string]bool{}
	for _, m := range apiSpan.FindAllStringSubmatch(page, -1) {
		named[m[1]] = true
	}
	var missing, extra []string
	for n := range mori {
		if !named[n] {
			missing = append(missing, n)
		}
	}
	for n := range named {
		// A constant (hipStreamNonBlocking) counts where a header has it.
		word := regexp.MustCompile(`\b` + n + `\b`)
		if !supported[n] && !unsupported[n] && !mori[n] && !word.MatchString(hip) && !word.MatchString(cco) {
			extra = append(extra, n)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	assert.Empty(t, missing, "names emud's headers declare that docs/subsets.md does not")
	assert.Empty(t, extra, "names docs/subsets.md gives that emud's headers do not declare")
}

// The header reader: a refused call is not an emulated one.
func TestHeaderNames(t *testing.T) {
	s, u, m := headerNames("hipError_t hipMalloc(void**);\nEMUD_UNSUPPORTED(hipMallocManaged)\nx = hipMallocManaged(p);\n", "struct ccoSdma { void put(); }; ccoTeam_t t;")
	assert.Equal(t, map[string]bool{"hipMalloc": true}, s)
	assert.Equal(t, map[string]bool{"hipMallocManaged": true}, u)
	assert.Equal(t, map[string]bool{"ccoSdma": true, "ccoTeam_t": true}, m)
}
