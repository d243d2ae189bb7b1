package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/cxx"
)

// A C++ program's seeds in warm seed servers give what a process per
// seed gives: the same report (the lowest failing seed and its output),
// the same shard record seed for seed (each passing seed's end and
// digest), and the passing seeds did run in the servers, not as
// processes after a silent fallback.
func TestExploreProgramSeedServer(t *testing.T) {
	if !haveCxx() {
		t.Skip("no C++ compiler (g++, clang++ or $EMUD_CXX): the C++ program is not built")
	}
	prog := buildProgram(t, "examples/cxx/skew/cta_skew.cpp", "-O2")
	_, err := cxx.ReadSeedForm(prog)
	require.NoError(t, err, "emud c++ links a seed form with the program")

	flags := []string{"explore", "--seeds", "10", "--perturb", "1", "--strategy", "pct", "--jobs", "2"}
	warm, warmErr, warmStatus := execute(t, append(flags, "--", prog)...)
	cold, coldErr, coldStatus := execute(t, append(flags, "--process-per-seed", "--", prog)...)
	assert.Equal(t, coldStatus, warmStatus, "%s\n%s", head(warm), head(cold))
	assert.Equal(t, wallTime.ReplaceAllString(cold, ""), wallTime.ReplaceAllString(warm, ""))
	assert.NotContains(t, warmErr, "warning", "the servers served every seed")
	assert.NotContains(t, coldErr, "warning")

	// The fixed twin of another planted bug passes every seed.
	prog = buildProgram(t, "examples/cxx/errors/put_overwrite.cpp", "-O2")
	dir := t.TempDir()
	rec := func(name string, extra ...string) []byte {
		f := filepath.Join(dir, name)
		args := append(append(append([]string{}, flags...), extra...), "--shard", "0/1", "--shard-out", f, "--", prog, "fixed")
		_, errOut, status := execute(t, args...)
		require.Equal(t, 0, status, errOut)
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		return b
	}
	assert.Equal(t, string(rec("cold.json", "--process-per-seed")), string(rec("warm.json")), "every seed's end and digest")

	// Seed for seed, in one server: seeds that pass stay in it.
	sf := newScenarioFlags()
	sf.perturb, sf.strategy = 1, "random"
	set, err := programFlags(sf)
	require.NoError(t, err)
	set = append(set, "EMUD_SUMMARY=1")
	runs, lowest, err := sweepProgram([]string{prog, "fixed"}, set, 1, 6, 1, true, nil, sweepOpts{})
	require.NoError(t, err)
	require.Equal(t, 6, lowest, "the twin passes")
	cruns, _, err := sweepProgram([]string{prog, "fixed"}, set, 1, 6, 1, true, nil, sweepOpts{processPerSeed: true})
	require.NoError(t, err)
	for i, r := range runs {
		assert.True(t, r.warm, "seed %d ran in the server", r.seed)
		assert.False(t, cruns[i].warm)
		assert.NotEmpty(t, r.digest(), "seed %d printed its digest", r.seed)
		assert.Equal(t, cruns[i].digest(), r.digest(), "seed %d", r.seed)
		assert.Equal(t, cruns[i].stdout, r.stdout, "seed %d", r.seed)
		assert.Equal(t, wallTime.ReplaceAllString(cruns[i].stderr, ""), wallTime.ReplaceAllString(r.stderr, ""), "seed %d", r.seed)
	}
	assert.Equal(t, fmt.Sprint(cruns[0].code), fmt.Sprint(runs[0].code))
}
