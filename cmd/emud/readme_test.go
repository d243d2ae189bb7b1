package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/internal/racebuild"
)

// readmeOutput is a fenced block of the README that shows a command and
// what it prints: its first line is "$ ./emud ARGS", optionally piped
// through "| grep -E 'RE'", and the rest is the output.
type readmeOutput struct {
	line   int // of the "$ ./emud" line, 1-based
	args   []string
	grep   *regexp.Regexp // nil: the whole output
	output string
}

var readmeCommand = regexp.MustCompile(`^\$ \./emud ([^|']+?)(?: \| grep -E '([^']+)')?$`)

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
		j := i + 2
		for ; j < len(ls) && ls[j] != "```"; j++ {
			o.output += ls[j] + "\n"
		}
		out = append(out, o)
		i = j
	}
	return out
}

// trimLines drops trailing blanks of each line (editors strip them; the
// hunt table's columns end in them).
func trimLines(s string) string {
	ls := strings.Split(s, "\n")
	for i := range ls {
		ls[i] = strings.TrimRight(ls[i], " \t")
	}
	return strings.Join(ls, "\n")
}

// Every README block that shows a command's output is what the command
// prints now, byte for byte (the hunt table had drifted by one cell): the
// test runs each one in-process. The commands run without -race, which
// would make them minutes long (.ci/run runs this test on its own).
func TestREADMEOutputs(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	blocks := readmeOutputs(t, string(b))
	require.NotEmpty(t, blocks, "the README shows command output in $ ./emud blocks")
	var hunt bool
	for _, o := range blocks {
		hunt = hunt || o.args[0] == "hunt"
	}
	assert.True(t, hunt, "the hunt table is one of them")
	if racebuild.Enabled {
		t.Skip("the README's commands take minutes under -race; .ci/run runs this test without it")
	}
	for _, o := range blocks {
		t.Run(strings.Join(o.args, "_"), func(t *testing.T) {
			out, errOut, status := execute(t, o.args...)
			require.Zero(t, status, "README line %d: ./emud %s: %s", o.line, strings.Join(o.args, " "), errOut)
			if o.grep != nil {
				var kept []string
				for _, l := range lines(out) {
					if o.grep.MatchString(l) {
						kept = append(kept, l)
					}
				}
				out = strings.Join(kept, "\n") + "\n"
			}
			assert.Equal(t, trimLines(o.output), trimLines(out), "README line %d: ./emud %s prints something else now; paste its output into the README", o.line, strings.Join(o.args, " "))
		})
	}
}

// The block format is read as the README writes it.
func TestReadmeOutputsParse(t *testing.T) {
	got := readmeOutputs(t, "text\n```\n$ ./emud hunt --seeds 5\na  \nb\n```\n```sh\n./emud run\n```\n```\n$ ./emud calibrate | grep -E '^(max|fit)'\nmax 1\n```\n")
	require.Len(t, got, 2)
	assert.Equal(t, []string{"hunt", "--seeds", "5"}, got[0].args)
	assert.Equal(t, "a  \nb\n", got[0].output)
	assert.Nil(t, got[0].grep)
	assert.Equal(t, []string{"calibrate"}, got[1].args)
	assert.Equal(t, "^(max|fit)", got[1].grep.String())
	assert.Equal(t, 11, got[1].line)
}

// The README's fault example draws a fault, as its comment says (seed 7,
// shown before, drew none: --faults seed gives a run a fault with chance
// 0.1).
func TestREADMEFaultExampleDrawsAFault(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	m := regexp.MustCompile(`\./emud (run relay --perturb 1 --faults seed --seed \d+) +# .*a fault drawn from the seed`).FindStringSubmatch(string(b))
	require.NotNil(t, m, "the README's fault example")
	out, errOut, status := execute(t, strings.Fields(m[1])...)
	require.Zero(t, status, errOut)
	assert.Regexp(t, `(?m)^faults: seed; [1-9]\d* injected$`, out)
	assert.Contains(t, out, "  injected INJECTED_")
}
