package layering

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const module = "github.com/emud-dev/emud"

// floor is where a folder (or a package under it) stands.
type floor struct {
	path  string // a top-level folder, or a package path under one: the longest match wins
	level int
}

// floors is the house, bottom up (the layers of docs/architecture.md).
var floors = []floor{
	// 0, the core: the deterministic simulator and what it and everyone
	// build on. sim imports race (its vector clocks) and racebuild.
	{"sim", 0}, {"race", 0}, {"ring", 0}, {"signal", 0}, {"hostmem", 0},
	// racebuild (a build-flag constant), slab (objects made a few at a
	// time), peakrss (a process's peak memory) and fileio (bounded reads,
	// whole-or-absent writes of users' files) import only the standard
	// library; they stay in internal/, beside the harnesses, so that they
	// are not public API, and stand on the ground floor.
	{"internal/racebuild", 0}, {"internal/fileio", 0}, {"internal/slab", 0}, {"internal/peakrss", 0},
	// blocksum (a block hash: scenario checks with it, lsa sums landings).
	{"internal/blocksum", 0},
	// 1, address maps, links and the timing model.
	{"lsa", 1}, {"nic", 1}, {"model", 1},
	// 2, what runs device work: the issuer protocol, the emulated engines
	// and memory, SIMT lanes, the mlx5 NIC beneath MORI's ccoGda.
	{"issuer", 2}, {"engine", 2}, {"kernel", 2}, {"mlx5", 2},
	// 3, the device APIs.
	{"cco", 3}, {"fabric", 3},
	// 4, what hosts them: the real backend, the job chain, tracing.
	{"hw", 4}, {"job", 4}, {"trace", 4},
	// 5, every runnable collective and planted bug.
	{"scenario", 5},
	// 6, the users of scenarios and the native front end.
	{"emutest", 6}, {"calibrate", 6}, {"daemon", 6}, {"bench", 6}, {"capi", 6}, {"cxx", 6},
	// 7, the command line over everything.
	{"cmd", 7},
	// 8, test harnesses: only tests import them.
	{"internal", 8},
}

// upward lists the arrows allowed to run up a floor, each with the reason
// it must ("from -> to": why). None does today.
var upward = map[string]string{}

// levelOf is the floor of package rel (a path inside the module), and
// whether the table has one.
func levelOf(rel string) (floor, bool) {
	var best floor
	found := false
	for _, f := range floors {
		if (rel == f.path || strings.HasPrefix(rel, f.path+"/")) && (!found || len(f.path) > len(best.path)) {
			best, found = f, true
		}
	}
	return best, found
}

func top(rel string) string {
	if i := strings.IndexByte(rel, '/'); i >= 0 {
		return rel[:i]
	}
	return rel
}

// violations returns the arrows of imports (package → the module's
// packages it imports) that run up a floor, and the packages with no
// floor, each as a sentence.
func violations(imports map[string][]string) []string {
	var bad []string
	for from, tos := range imports {
		ff, ok := levelOf(from)
		if !ok {
			bad = append(bad, fmt.Sprintf("%s has no floor: add its folder to floors", from))
			continue
		}
		for _, to := range tos {
			if top(from) == top(to) {
				continue
			}
			tf, ok := levelOf(to)
			if !ok {
				continue // reported as a package of its own
			}
			if tf.level > ff.level && upward[from+" -> "+to] == "" {
				bad = append(bad, fmt.Sprintf("%s (floor %d, %s) imports %s (floor %d, %s): an arrow up the house",
					from, ff.level, ff.path, to, tf.level, tf.path))
			}
		}
	}
	sort.Strings(bad)
	return bad
}

// readImports parses the module at root: each package directory (relative
// path) and the module's packages its non-test files import.
func readImports(root string) (map[string][]string, error) {
	out := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			n := d.Name()
			if path != root && (strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_") || n == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if _, seen := out[rel]; !seen {
			out[rel] = nil
		}
		for _, im := range f.Imports {
			p, err := strconv.Unquote(im.Path.Value)
			if err != nil {
				return fmt.Errorf("%s: import %s: %w", path, im.Path.Value, err)
			}
			if to, ok := strings.CutPrefix(p, module+"/"); ok && !slices.Contains(out[rel], to) {
				out[rel] = append(out[rel], to)
			}
		}
		return nil
	})
	return out, err
}

// TestNoArrowRunsUp: no package imports one on a floor above its own.
func TestNoArrowRunsUp(t *testing.T) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(root, "go.mod"))
	require.NoError(t, err, "the module root is two levels up")
	imports, err := readImports(root)
	require.NoError(t, err)
	require.Contains(t, imports, "cco", "the walk found the module's packages")
	require.Contains(t, imports["cco"], "kernel", "and their imports")
	assert.Empty(t, violations(imports))
	for arrow := range upward {
		from, to, _ := strings.Cut(arrow, " -> ")
		assert.Contains(t, imports[from], to, "upward lists %s, which is no longer an import: drop it", arrow)
	}
}

// TestViolations: the check itself, on small houses.
func TestViolations(t *testing.T) {
	tests := []struct {
		name    string
		imports map[string][]string
		want    []string
	}{
		{"down and sideways", map[string][]string{"cco": {"kernel", "engine", "fabric"}, "sim": {"race"}}, nil},
		{"within a folder", map[string][]string{"internal/testmain": {"internal/racebuild"}, "scenario/all": {"scenario/cft"}}, nil},
		{"up", map[string][]string{"engine": {"scenario"}},
			[]string{"engine (floor 2, engine) imports scenario (floor 5, scenario): an arrow up the house"}},
		{"a harness from below", map[string][]string{"engine": {"internal/hostmem"}},
			[]string{"engine (floor 2, engine) imports internal/hostmem (floor 8, internal): an arrow up the house"}},
		{"the longest prefix", map[string][]string{"kernel": {"internal/racebuild"}, "model": {"internal/fileio"}}, nil},
		{"no floor", map[string][]string{"newpkg/x": {"sim"}}, []string{"newpkg/x has no floor: add its folder to floors"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, violations(tc.imports))
		})
	}
}
