package doccheck

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	// outside matches a citation of the project's working files, which a
	// clone of the repository does not have.
	outside = regexp.MustCompile(`\bshared/(?:spec|seeds|calibration|hooks)\b|/work/|\bDESIGN\.md\b`)
	// docPath matches a file path ending in .md that starts a word (a URL
	// does not: its scheme's colon stops the match).
	docPath = regexp.MustCompile(`(?:^|[\s(\x60"'])((?:[\w.-]+/)*[\w-]+\.md)\b`)
	// ownerRepo ends the text before a path that names a public
	// repository's file ("NVIDIA/nccl-tests doc/PERFORMANCE.md").
	ownerRepo = regexp.MustCompile(`\b[A-Za-z0-9_-]+/[A-Za-z0-9_.-]+\s*$`)
	// mdLink matches a relative link of a Markdown file.
	mdLink = regexp.MustCompile(`\]\(([^)#:\s]+)(?:#[^)]*)?\)`)
)

// citationProblems returns what is wrong with the citations of text, the
// comments of a Go file in dir of module mod: a path outside the
// repository, or a .md file that neither the module nor dir has and that
// no public repository's name qualifies.
func citationProblems(mod, dir, text string) []string {
	var bad []string
	for _, m := range outside.FindAllString(text, -1) {
		bad = append(bad, "cites "+m+", outside the repository")
	}
	for _, loc := range docPath.FindAllStringSubmatchIndex(text, -1) {
		p := text[loc[2]:loc[3]]
		if exists(filepath.Join(mod, p)) || exists(filepath.Join(dir, p)) {
			continue
		}
		if ownerRepo.MatchString(text[max(0, loc[2]-80):loc[2]]) {
			continue // a public repository's file
		}
		bad = append(bad, "cites "+p+", not a file of the repository")
	}
	return bad
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// TestCitationsStayInRepo: no Go file's comments (tests included) and no
// string (a parameter's printed source) cites the project's working files,
// every .md file a comment names exists in the repository (or is named
// with its public repository), and every relative link of the repository's
// Markdown files resolves.
func TestCitationsStayInRepo(t *testing.T) {
	mod := root(t)
	var bad []string
	goFiles, mdFiles := 0, 0
	err := filepath.WalkDir(mod, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != mod && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(mod, path)
		if rel == filepath.Join("internal", "doccheck", "citations_test.go") {
			return nil // this file spells the patterns it refuses
		}
		switch filepath.Ext(path) {
		case ".go":
			src, err := os.ReadFile(path)
			require.NoError(t, err)
			goFiles++
			for _, m := range outside.FindAllString(string(src), -1) {
				bad = append(bad, rel+": cites "+m+", outside the repository")
			}
			for _, p := range citationProblems(mod, filepath.Dir(path), comments(string(src))) {
				if !strings.Contains(p, "outside the repository") { // counted above, over the whole file
					bad = append(bad, rel+": "+p)
				}
			}
		case ".md":
			src, err := os.ReadFile(path)
			require.NoError(t, err)
			mdFiles++
			for _, m := range outside.FindAllString(string(src), -1) {
				bad = append(bad, rel+": cites "+m+", outside the repository")
			}
			for _, m := range mdLink.FindAllStringSubmatch(string(src), -1) {
				if !exists(filepath.Join(filepath.Dir(path), m[1])) {
					bad = append(bad, rel+": links to "+m[1]+", not a file of the repository")
				}
			}
		}
		return nil
	})
	require.NoError(t, err)
	sort.Strings(bad)
	assert.Empty(t, bad)
	assert.Greater(t, goFiles, 100, "the module's Go files were read")
	assert.GreaterOrEqual(t, mdFiles, 4, "the README and docs/ were read")
	for _, d := range []string{"sdma-hardware.md", "cco-semantics.md", "cft-semantics.md"} {
		assert.FileExists(t, filepath.Join(mod, "docs", d), "the specification the code cites is in the repository")
	}
}

// The checker itself: what it must refuse and what it must let pass.
func TestCitationProblems(t *testing.T) {
	mod := root(t)
	for _, tc := range []struct {
		text string
		bad  bool
	}{
		{"see shared/spec/sdma-hardware.md §3", true},
		{"the seed (shared/seeds/cco-sdma-device-api.txt)", true},
		{"rows of /work/shared/calibration/x.csv", true},
		{"see sdma-hardware.md §3", true}, // no such file at the root or here
		{"see nosuch/file.md", true},
		{"see docs/sdma-hardware.md §3", false},
		{"see README.md", false},
		{"https://github.com/NVIDIA/nccl-tests/blob/master/doc/PERFORMANCE.md", false},
		{"(NVIDIA/nccl-tests\n doc/PERFORMANCE.md: all-reduce)", false},
		{"the ROCm/mori .claude/skills/cco-sdma-api/SKILL.md document", false},
	} {
		got := citationProblems(mod, filepath.Join(mod, "internal", "doccheck"), tc.text)
		assert.Equal(t, tc.bad, len(got) > 0, "%q: %v", tc.text, got)
	}
}
