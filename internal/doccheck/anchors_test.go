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
	// anchorLink matches a Markdown link with a fragment: (docs/env.md#frag)
	// or (#frag) within the page.
	anchorLink = regexp.MustCompile(`\]\(([^)#:\s]*)#([^)\s]+)\)`)
	// notSlug is what GitHub drops from a heading to make its anchor.
	notSlug = regexp.MustCompile(`[^\p{L}\p{N}_\- ]`)
)

// slug is GitHub's anchor for a heading: lower case, punctuation dropped,
// spaces to hyphens.
func slug(heading string) string {
	return strings.ReplaceAll(notSlug.ReplaceAllString(strings.ToLower(strings.TrimSpace(heading)), ""), " ", "-")
}

// anchors returns the anchors of a Markdown page's headings (outside code
// blocks).
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	code := false
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "```") {
			code = !code
		}
		if !code && strings.HasPrefix(l, "#") {
			out[slug(strings.TrimLeft(l, "#"))] = true
		}
	}
	return out
}

// TestDocAnchorsResolve: every link of the README and docs/ to a section
// (#anchor, in the page or another) names a heading that exists, so that
// moving or renaming a section fails here rather than in a reader's
// browser.
func TestDocAnchorsResolve(t *testing.T) {
	mod := root(t)
	pages, err := filepath.Glob(filepath.Join(mod, "docs", "*.md"))
	require.NoError(t, err)
	pages = append(pages, filepath.Join(mod, "README.md"))
	var bad []string
	links := 0
	for _, page := range pages {
		src, err := os.ReadFile(page)
		require.NoError(t, err)
		for _, m := range anchorLink.FindAllStringSubmatch(string(src), -1) {
			links++
			target := page
			if m[1] != "" {
				target = filepath.Join(filepath.Dir(page), m[1])
			}
			tsrc, err := os.ReadFile(target)
			if err != nil {
				continue // a missing file is TestCitationsStayInRepo's to report
			}
			if !anchors(string(tsrc))[m[2]] {
				rel, _ := filepath.Rel(mod, page)
				bad = append(bad, rel+": links to "+m[1]+"#"+m[2]+", no such heading")
			}
		}
	}
	sort.Strings(bad)
	assert.Empty(t, bad)
	assert.Greater(t, links, 5, "the README's start-here links were read")
}

func TestSlug(t *testing.T) {
	for _, tc := range []struct{ heading, want string }{
		{" A MORI C++ kernel, from clone to a passing test", "a-mori-c-kernel-from-clone-to-a-passing-test"},
		{" NCCL (Go: package `fabric`)", "nccl-go-package-fabric"},
		{" Exploring: timing perturbation, PCT, faults, planted bugs", "exploring-timing-perturbation-pct-faults-planted-bugs"},
		{" The daemon (`emud serve`)", "the-daemon-emud-serve"},
	} {
		assert.Equal(t, tc.want, slug(tc.heading))
	}
}
