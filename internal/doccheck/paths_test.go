package doccheck

import (
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
	// codeSpan matches an inline code span of Markdown.
	codeSpan = regexp.MustCompile("`([^`\n]+)`")
	// pathLike matches a word that reads as a relative path: segments
	// joined by slashes, with an optional leading ./ and trailing slash.
	pathLike = regexp.MustCompile(`^(?:\./)?[\w-][\w.-]*(?:/[\w-][\w.-]*)+/?$`)
	// publicRepo matches a paragraph about a public repository's files
	// (a link to one on GitHub): its paths are that repository's.
	publicRepo = regexp.MustCompile(`\]\(https://github\.com/`)
)

// repoPaths returns the paths of the repository that text's code spans
// name: a word with a slash whose first segment is a top-level entry of
// the module at mod (so a public repository's path, projects/rocr-runtime/…,
// or a URL is not one), outside paragraphs that link a public GitHub
// repository (whose paths name its files: MORI's include/mori/…). Trailing
// punctuation and a :line suffix are cut.
func repoPaths(mod, text string) []string {
	var out []string
	for _, para := range strings.Split(text, "\n\n") {
		if !publicRepo.MatchString(para) {
			out = append(out, spanPaths(mod, para)...)
		}
	}
	return out
}

func spanPaths(mod, text string) []string {
	var out []string
	for _, m := range codeSpan.FindAllStringSubmatch(text, -1) {
		for _, w := range strings.Fields(m[1]) {
			w = strings.TrimRight(w, ".,;:)")
			if i := strings.IndexByte(w, ':'); i > 0 {
				w = w[:i]
			}
			if !pathLike.MatchString(w) {
				continue
			}
			w = strings.TrimPrefix(w, "./")
			first, _, _ := strings.Cut(w, "/")
			if exists(filepath.Join(mod, first)) {
				out = append(out, strings.TrimSuffix(w, "/"))
			}
		}
	}
	return out
}

// TestDocsNameRealPaths: every repository path the README or a page of
// docs/ names in code (`cco/sdma.go`, `ring/testdata`) exists, so that a
// page such as docs/architecture.md or a guide stays true when files move.
func TestDocsNameRealPaths(t *testing.T) {
	mod := root(t)
	pages, err := filepath.Glob(filepath.Join(mod, "docs", "*.md"))
	require.NoError(t, err)
	require.NotEmpty(t, pages)
	pages = append(pages, filepath.Join(mod, "README.md"))
	var bad []string
	named := 0
	for _, page := range pages {
		src, err := os.ReadFile(page)
		require.NoError(t, err)
		for _, p := range repoPaths(mod, string(src)) {
			named++
			if !exists(filepath.Join(mod, p)) {
				bad = append(bad, filepath.Base(page)+": names "+p+", not a path of the repository")
			}
		}
	}
	sort.Strings(bad)
	assert.Empty(t, bad)
	assert.Greater(t, named, 20, "docs/architecture.md's paths were read")
}

// The path finder itself.
func TestRepoPaths(t *testing.T) {
	mod := root(t)
	tests := []struct {
		text string
		want []string
	}{
		{"read `cco/sdma.go` and `engine/exec.go:126`.", []string{"cco/sdma.go", "engine/exec.go"}},
		{"`go doc ./cco/...`", nil}, // a package pattern, not a path
		{"Sources: [ROCm/mori](https://github.com/ROCm/mori) `include/mori/x.hpp`\n\nhere `include/nosuch.h`", []string{"include/nosuch.h"}},
		{"`ring/testdata/` holds them", []string{"ring/testdata"}},
		{"`nosuch/file.go` and `sim/nosuch.go`", []string{"sim/nosuch.go"}},
		{"`projects/rocr-runtime/x.h`, `https://example.com/a/b`", nil},
		{"`kernel.Call[A]`, `Wave.main`, `EMUD_TEST_MAX_RSS`", nil},
		{"`scenario/all` of `scenario`", []string{"scenario/all"}},
	}
	for _, tc := range tests {
		t.Run(tc.text, func(t *testing.T) {
			assert.Equal(t, tc.want, repoPaths(mod, tc.text))
		})
	}
}
