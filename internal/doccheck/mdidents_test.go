package doccheck

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDocsPagesNameRealIdentifiers: every identifier the README or a page
// of docs/ names in code, qualified by one of the module's packages
// (`emutest.NewJob`, `cco.Sdma.Put`, in inline code or a Go block), exists,
// as TestDocsNameRealIdentifiers checks for Go comments: a guide that
// names a function after it was renamed fails here.
func TestDocsPagesNameRealIdentifiers(t *testing.T) {
	mod := root(t)
	pkgs := load(t, mod)
	pages, err := filepath.Glob(filepath.Join(mod, "docs", "*.md"))
	require.NoError(t, err)
	pages = append(pages, filepath.Join(mod, "README.md"))
	var bad []string
	checked := 0
	for _, page := range pages {
		src, err := os.ReadFile(page)
		require.NoError(t, err)
		rel, _ := filepath.Rel(mod, page)
		for _, code := range codeOf(string(src)) {
			for _, m := range qualified.FindAllStringSubmatch(code, -1) {
				// Not one of ours, or a scenario package whose name is also
				// the examples' variable (sdma.Put on a *cco.Sdma, gin.Put).
				if pkgs[m[1]] == nil || strings.Contains(filepath.ToSlash(pkgs[m[1]].dir), "/scenario/") {
					continue
				}
				checked++
				own := strings.ToUpper(m[1][:1]) + m[1][1:]
				if !has(pkgs, m[1], m[2], m[3], 0) && (m[3] != "" || !has(pkgs, m[1], own, m[2], 0)) {
					bad = append(bad, rel+": "+m[0])
				}
			}
		}
	}
	sort.Strings(bad)
	assert.Empty(t, bad, "pages name identifiers that do not exist")
	assert.Greater(t, checked, 30, "the pages' identifiers were found and checked")
}

// codeOf returns a Markdown page's code: its inline code spans and its
// fenced go blocks (other blocks are shell and output, where pkg.Name is
// not Go).
func codeOf(text string) []string {
	var out []string
	inGo, fenced := false, false
	var block strings.Builder
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "```") {
			if fenced {
				if inGo {
					out = append(out, block.String())
				}
				fenced, inGo = false, false
				block.Reset()
				continue
			}
			fenced, inGo = true, strings.TrimPrefix(l, "```") == "go"
			continue
		}
		if fenced {
			block.WriteString(l + "\n")
			continue
		}
		for _, m := range codeSpan.FindAllStringSubmatch(l, -1) {
			out = append(out, m[1])
		}
	}
	return out
}

func TestCodeOf(t *testing.T) {
	text := "see `cco.NewSdma` here\n```go\nj, _ := emutest.NewJob(1, 8)\n```\n```sh\n./emud run # cco.Nope\n```\n"
	assert.Equal(t, []string{"cco.NewSdma", "j, _ := emutest.NewJob(1, 8)\n"}, codeOf(text))
}
