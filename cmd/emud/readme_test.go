package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/internal/racebuild"
)

// readmeOutput is a fenced block of the README or a docs/ page that shows
// a command and what it prints: its first line is "$ ./emud ARGS",
// optionally piped through "| grep -E 'RE'" and followed by "  # exit N"
// for a command that must end with status N (a hang report, a race), and
// the rest is the output: stdout, and for a block with "# exit N" stdout
// then stderr, where a failed run says why in one line.
type readmeOutput struct {
	line   int // of the "$ ./emud" line, 1-based
	args   []string
	grep   *regexp.Regexp // nil: the whole output
	status int
	output string
}

var readmeCommand = regexp.MustCompile(`^\$ \./emud ([^|'#]+?)(?: \| grep -E '([^']+)')?(?:  # exit (\d+))?$`)

// docPages are the pages whose command blocks must stay true: the README
// and every page of docs/.
func docPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("../../docs/*.md")
	require.NoError(t, err)
	require.NotEmpty(t, pages, "docs/ has pages")
	return append([]string{"../../README.md"}, pages...)
}

// readmeOutputs finds the README's command-and-output blocks.
func readmeOutputs(t *testing.T, readme string) []readmeOutput {
	t.Helper()
	var out []readmeOutput
	ls := strings.Split(readme, "\n")
	for i := 0; i < len(ls); i++ {
		if ls[i] != "```" || i+1 >= len(ls) || !strings.HasPrefix(ls[i+1], "$ ./emud ") {
			continue
		}
		m := readmeCommand.FindStringSubmatch(ls[i+1])
		require.NotNil(t, m, "README line %d: a command block must be $ ./emud ARGS [| grep -E 'RE']: %q", i+2, ls[i+1])
		o := readmeOutput{line: i + 2, args: strings.Fields(m[1])}
		if m[2] != "" {
			o.grep = regexp.MustCompile(m[2])
		}
		if m[3] != "" {
			o.status, _ = strconv.Atoi(m[3]) // \d+: only an overflow fails, and then the status check does
		}
		j := i + 2
		for ; j < len(ls) && ls[j] != "```"; j++ {
			o.output += ls[j] + "\n"
		}
		out = append(out, o)
		i = j
	}
	return out
}

// goLine is a Go file:line a report names kernel code by.
var goLine = regexp.MustCompile(`\.go:\d+`)

// goLines blanks the line numbers of Go files (prog.go:157 → prog.go:N),
// as internal/golden does: a page showing a report stays true when the
// scenario's source moves by a line.
func goLines(s string) string { return goLine.ReplaceAllString(s, ".go:N") }

// trimLines drops trailing blanks of each line (editors strip them; the
// hunt table's columns end in them).
func trimLines(s string) string {
	ls := strings.Split(s, "\n")
	for i := range ls {
		ls[i] = strings.TrimRight(ls[i], " \t")
	}
	return strings.Join(ls, "\n")
}

// Every block of the README and docs/ that shows a command's output is
// what the command prints now, byte for byte (the hunt table had drifted
// by one cell): the test runs each one in-process. The commands run
// without -race, which would make them minutes long (.ci/run runs this
// test on its own).
func TestREADMEOutputs(t *testing.T) {
	type pageBlock struct {
		page string
		readmeOutput
	}
	var blocks []pageBlock
	for _, page := range docPages(t) {
		b, err := os.ReadFile(page)
		require.NoError(t, err)
		for _, o := range readmeOutputs(t, string(b)) {
			blocks = append(blocks, pageBlock{strings.TrimPrefix(page, "../../"), o})
		}
	}
	require.NotEmpty(t, blocks, "the docs show command output in $ ./emud blocks")
	var hunt bool
	for _, o := range blocks {
		hunt = hunt || o.args[0] == "hunt"
	}
	assert.True(t, hunt, "the hunt table is one of them")
	if racebuild.Enabled {
		t.Skip("the docs' commands take minutes under -race; .ci/run runs this test without it")
	}
	for _, o := range blocks {
		t.Run(o.page+"/"+strings.Join(o.args, "_"), func(t *testing.T) {
			out, errOut, status := execute(t, o.args...)
			require.Equal(t, o.status, status, "%s line %d: ./emud %s: %s", o.page, o.line, strings.Join(o.args, " "), errOut)
			if o.status != 0 {
				out += errOut
			}
			if o.grep != nil {
				var kept []string
				for _, l := range lines(out) {
					if o.grep.MatchString(l) {
						kept = append(kept, l)
					}
				}
				out = strings.Join(kept, "\n") + "\n"
			}
			assert.Equal(t, goLines(trimLines(o.output)), goLines(trimLines(out)), "%s line %d: ./emud %s prints something else now; paste its output into the page", o.page, o.line, strings.Join(o.args, " "))
		})
	}
}

// measured is the line a block of output no test runs carries just above
// it: the machine and the date it was measured on.
var measured = regexp.MustCompile(`(?i)measured on [\s\S]*?\b\d{4}-\d{2}-\d{2}\b`)

// uncheckedOutputs returns the 1-based lines of text's output blocks (a
// fence with no language or "text") that are neither a "$ ./emud" block
// nor preceded, in the paragraph just above, by a "measured on MACHINE,
// DATE" line.
func uncheckedOutputs(text string) []int {
	var bad []int
	ls := strings.Split(text, "\n")
	for i := 0; i < len(ls); i++ {
		fence, ok := strings.CutPrefix(ls[i], "```")
		if !ok {
			continue
		}
		j := i + 1
		for ; j < len(ls) && ls[j] != "```"; j++ {
		}
		output := fence == "" || fence == "text"
		if output && !(i+1 < len(ls) && strings.HasPrefix(ls[i+1], "$ ./emud ")) {
			k := i - 1
			for k >= 0 && strings.TrimSpace(ls[k]) == "" {
				k--
			}
			para := ""
			for ; k >= 0 && strings.TrimSpace(ls[k]) != "" && !strings.HasPrefix(ls[k], "```"); k-- {
				para = ls[k] + "\n" + para
			}
			if !measured.MatchString(para) {
				bad = append(bad, i+1)
			}
		}
		i = j
	}
	return bad
}

// Every output block of the README and docs/ is either run by
// TestREADMEOutputs or says where and when it was measured (issue 46:
// figures that stay true). Generated pages (docs/cli.md) are checked by their
// own test.
func TestDocsOutputsCheckedOrDated(t *testing.T) {
	for _, page := range docPages(t) {
		if filepath.Base(page) == "cli.md" {
			continue
		}
		b, err := os.ReadFile(page)
		require.NoError(t, err)
		for _, line := range uncheckedOutputs(string(b)) {
			t.Errorf("%s line %d: an output block that no test runs says above it where and when it was measured (\"Measured on MACHINE, YYYY-MM-DD\"), or is a $ ./emud block", strings.TrimPrefix(page, "../../"), line)
		}
	}
}

func TestGoLines(t *testing.T) {
	assert.Equal(t, "(planted/prog.go:N) and memset_async.cpp:53", goLines("(planted/prog.go:157) and memset_async.cpp:53"))
}

func TestUncheckedOutputs(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		want       []int
	}{
		{"checked", "a\n\n```\n$ ./emud run\nx\n```\n", nil},
		{"dated", "Measured on the 2-core machine, 2026-12-05:\n\n```\nx\n```\n", nil},
		{"dated over two lines", "Measured on the 2-core\nmachine, 2026-12-05:\n\n```\nx\n```\n", nil},
		{"undated", "Output:\n\n```\nx\n```\n", []int{3}},
		{"text fence", "Output:\n```text\nx\n```\n", []int{2}},
		{"date two paragraphs up", "Measured on m, 2026-12-05.\n\nOutput:\n\n```\nx\n```\n", []int{5}},
		{"code is not output", "```go\nx := 1\n```\n```sh\n./emud run\n```\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, uncheckedOutputs(tc.text))
		})
	}
}

// The block format is read as the README writes it.
func TestReadmeOutputsParse(t *testing.T) {
	got := readmeOutputs(t, "text\n```\n$ ./emud hunt --seeds 5\na  \nb\n```\n```sh\n./emud run\n```\n```\n$ ./emud calibrate | grep -E '^(max|fit)'\nmax 1\n```\n```\n$ ./emud run nosuch  # exit 2\n```\n")
	require.Len(t, got, 3)
	assert.Equal(t, []string{"run", "nosuch"}, got[2].args)
	assert.Equal(t, 2, got[2].status)
	assert.Zero(t, got[0].status)
	assert.Equal(t, []string{"hunt", "--seeds", "5"}, got[0].args)
	assert.Equal(t, "a  \nb\n", got[0].output)
	assert.Nil(t, got[0].grep)
	assert.Equal(t, []string{"calibrate"}, got[1].args)
	assert.Equal(t, "^(max|fit)", got[1].grep.String())
	assert.Equal(t, 11, got[1].line)
}

// The fault example of docs/commands.md draws a fault, as its comment says
// (seed 7, shown before, drew none: --faults seed gives a run a fault with
// chance 0.1).
func TestREADMEFaultExampleDrawsAFault(t *testing.T) {
	b, err := os.ReadFile("../../docs/commands.md")
	require.NoError(t, err)
	m := regexp.MustCompile(`\./emud (run relay --perturb 1 --faults seed --seed \d+) +# .*a fault drawn from the seed`).FindStringSubmatch(string(b))
	require.NotNil(t, m, "docs/commands.md's fault example")
	out, errOut, status := execute(t, strings.Fields(m[1])...)
	require.Zero(t, status, errOut)
	assert.Regexp(t, `(?m)^faults: seed; [1-9]\d* injected$`, out)
	assert.Contains(t, out, "  injected INJECTED_")
}

// The block scanner reads any text without panicking and names only lines
// that open a fence.
func FuzzUncheckedOutputs(f *testing.F) {
	f.Add("Output:\n\n```\nx\n```\n")
	f.Add("```\n$ ./emud run\n```\n```text\n")
	f.Add("Measured on m, 2026-12-05.\n```")
	f.Fuzz(func(t *testing.T, text string) {
		ls := strings.Split(text, "\n")
		for _, n := range uncheckedOutputs(text) {
			require.True(t, n >= 1 && n <= len(ls), "line %d of %d", n, len(ls))
			require.True(t, strings.HasPrefix(ls[n-1], "```"), "line %d opens a fence", n)
		}
	})
}
