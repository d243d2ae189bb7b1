package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/scenario"
)

// cliDoc is the generated CLI reference; TestCLIReference rewrites it
// under -update (the flag internal/golden registers for the package).
const cliDoc = "../../docs/cli.md"

func updating() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// machineDefault matches flag defaults that depend on the machine the help
// is printed on (the memory budget, the CPU count), so the reference is
// the same wherever it is generated.
var machineDefault = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`(--mem-budget [^\n]*?\(default )"?[0-9.]+[KMGT]i?B"?\)`), `${1}this machine's)`},
	{regexp.MustCompile(`(--(?:jobs|max-runs) [^\n]*?\(default )\d+\)`), `${1}this machine's CPU count)`},
}

// cliReference renders every command's help, as `emud CMD --help` prints
// it, into one Markdown page.
func cliReference(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("# Command-line reference\n\n")
	b.WriteString("Generated from the commands' own help by `go test ./cmd/emud -run TestCLIReference -update`;\n")
	b.WriteString("the test fails when the help and this page differ. Examples of use are in\n[commands.md](commands.md).\n")
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		var help bytes.Buffer
		c.SetOut(&help)
		c.SetErr(&help)
		c.HelpFunc()(c, nil)
		text := help.String()
		for _, m := range machineDefault {
			text = m.re.ReplaceAllString(text, m.repl)
		}
		fmt.Fprintf(&b, "\n## %s\n\n```text\n%s\n```\n", c.CommandPath(), strings.TrimRight(trimLines(text), "\n"))
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() {
				walk(sub)
			}
		}
	}
	walk(newRootCmd())
	return b.String()
}

// docs/cli.md is the commands' help, generated: a flag added, renamed or
// re-described without regenerating the page fails here (and in CI, which
// runs go test ./...).
func TestCLIReference(t *testing.T) {
	got := cliReference(t)
	for _, cmd := range []string{"emud run", "emud hunt", "emud farm slurm", "emud c++"} {
		require.Contains(t, got, "\n## "+cmd+"\n", "every command has its section")
	}
	if updating() {
		require.NoError(t, os.WriteFile(cliDoc, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(cliDoc)
	require.NoError(t, err, "no %s: go test ./cmd/emud -run TestCLIReference -update writes it", cliDoc)
	assert.Equal(t, string(want), got, "docs/cli.md is not the commands' help: go test ./cmd/emud -run TestCLIReference -update rewrites it")
}

// The machine-dependent defaults are blanked, and nothing else.
func TestCLIReferenceMachineDefaults(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`      --mem-budget bytesize   cap (default 5.88GiB)`, `      --mem-budget bytesize   cap (default this machine's)`},
		{`      --jobs int   hunts at a time (default 2)`, `      --jobs int   hunts at a time (default this machine's CPU count)`},
		{`      --bytes bytesize   size (default 1MiB)`, `      --bytes bytesize   size (default 1MiB)`},
	} {
		got := tc.in
		for _, m := range machineDefault {
			got = m.re.ReplaceAllString(got, m.repl)
		}
		assert.Equal(t, tc.want, got)
	}
}

// exitRow matches a row of docs/exit-status.md's table: | status | name | ...
var exitRow = regexp.MustCompile("(?m)^\\| (\\d+) \\| `(\\w+)` \\|")

// exitConsts returns package scenario's Exit* constants with integer
// values, read from its source so that a status added there is missed by
// the page and fails the test.
func exitConsts(t *testing.T) map[string]int {
	t.Helper()
	files, err := filepath.Glob("../../scenario/*.go")
	require.NoError(t, err)
	out := map[string]int{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		for _, d := range af.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, s := range gd.Specs {
				vs, ok := s.(*ast.ValueSpec)
				if !ok || len(vs.Values) != len(vs.Names) {
					continue
				}
				for i, n := range vs.Names {
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !strings.HasPrefix(n.Name, "Exit") || !ok || lit.Kind != token.INT {
						continue
					}
					v, err := strconv.Atoi(lit.Value)
					require.NoError(t, err)
					out[n.Name] = v
				}
			}
		}
	}
	return out
}

// docs/exit-status.md's table is scenario's exit statuses, no more and
// no fewer.
func TestExitStatusDoc(t *testing.T) {
	b, err := os.ReadFile("../../docs/exit-status.md")
	require.NoError(t, err)
	got := map[string]int{}
	for _, m := range exitRow.FindAllStringSubmatch(string(b), -1) {
		n, err := strconv.Atoi(m[1])
		require.NoError(t, err)
		got[m[2]] = n
	}
	want := exitConsts(t)
	require.Equal(t, scenario.ExitRace, want["ExitRace"], "the source reader finds the constants")
	assert.Equal(t, want, got, "docs/exit-status.md's table against scenario's constants")
}

// quickStart matches the README's quick-start block: the two commands a
// newcomer runs first.
var quickStart = regexp.MustCompile("(?s)## Quick start\n\n```sh\n([^\n]+)\n([^\n]+)\n```")

// The README's test command is what CI runs, word for word (.ci/run says
// to keep them identical), and its first command runs emud.
func TestREADMEQuickStartIsCI(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	m := quickStart.FindStringSubmatch(string(readme))
	require.NotNil(t, m, "the README has a Quick start block of two commands")
	assert.Equal(t, "go run ./cmd/emud run", m[1])
	ci, err := os.ReadFile("../../.ci/run")
	require.NoError(t, err)
	assert.Contains(t, strings.Split(string(ci), "\n"), m[2], "the README's test command is a line of .ci/run")
}

// corpusCount matches a page's count of the planted-bug corpus.
var corpusCount = regexp.MustCompile(`(\d+) small programs`)

// The pages that count the planted-bug corpus give the count run --help
// lists (issue 46: the README said 16 in one place and 21 in another).
func TestDocsCorpusCount(t *testing.T) {
	out, _, status := execute(t, "run", "--help")
	require.Zero(t, status)
	n := strings.Count(out, "PLANTED BUG (corpus)")
	require.Greater(t, n, 20, "run --help lists the corpus")
	counted := 0
	for _, page := range docPages(t) {
		b, err := os.ReadFile(page)
		require.NoError(t, err)
		for _, m := range corpusCount.FindAllStringSubmatch(string(b), -1) {
			counted++
			assert.Equal(t, strconv.Itoa(n), m[1], "%s counts the corpus", page)
		}
	}
	assert.Positive(t, counted, "the docs count the corpus somewhere")
}
