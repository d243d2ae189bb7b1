package emutest

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/sim"
)

// The settings the README names reach NewJob from the environment:
// MORI_CCO_SDMA_DEBUG turns on the debug checks of every dev comm,
// EMUD_PERTURB sets the level, EMUD_RACE the detector, EMUD_ARCH=gfx1250
// a gfx1250 node (wave32), EMUD_SEED the one seed Seeds runs; bad values
// are refused by name.
func TestNewJobHonoursTheEnvironment(t *testing.T) {
	j, err := NewJob(1, 2)
	require.NoError(t, err)
	require.NoError(t, j.CreateDevComms(1, false))
	assert.False(t, j.DevComms[0].Debug, "no MORI_CCO_SDMA_DEBUG: no debug checks")

	t.Setenv("MORI_CCO_SDMA_DEBUG", "1")
	t.Setenv("EMUD_PERTURB", "stress")
	t.Setenv("EMUD_RACE", "1")
	t.Setenv("EMUD_ARCH", "gfx1250")
	j, err = NewJob(1, 2)
	require.NoError(t, err)
	require.NoError(t, j.CreateDevComms(1, false))
	assert.True(t, j.DevComms[1].Debug, "MORI_CCO_SDMA_DEBUG=1: the debug checks on")
	assert.Equal(t, sim.LevelStress, Level())
	assert.True(t, Race())
	assert.NotNil(t, j.Sim.Race(), "EMUD_RACE=1: the detector on")
	var lanes int
	_, err = j.Launch(0, 1, 64, func(t *kernel.Thread, _ *cco.Sdma) { lanes = max(lanes, t.WarpSize()) })
	require.NoError(t, err)
	require.NoError(t, j.Run())
	assert.Equal(t, 32, lanes, "EMUD_ARCH=gfx1250: wave32")
	assert.True(t, strings.HasPrefix(Command("TestX", 3), "EMUD_ARCH=gfx1250 MORI_CCO_SDMA_DEBUG=1 go test "), Command("TestX", 3))
	assert.Contains(t, Command("TestX", 3), "-emutest.perturb=2 -emutest.race")

	t.Setenv("EMUD_ARCH", "gfx9000")
	_, err = NewJob(1, 2)
	assert.ErrorContains(t, err, `EMUD_ARCH="gfx9000"`)
	t.Setenv("EMUD_ARCH", "")

	t.Setenv("EMUD_PERTURB", "hot")
	_, err = NewJob(1, 2)
	assert.ErrorContains(t, err, `EMUD_PERTURB="hot"`)
	t.Setenv("EMUD_PERTURB", "")

	t.Setenv("EMUD_SEED", "5")
	var ran []uint64
	Seeds(&fakeT{name: "TestX"}, 3, func(seed uint64) error { ran = append(ran, seed); return nil })
	assert.Equal(t, []uint64{5}, ran, "EMUD_SEED runs that seed only")
	t.Setenv("EMUD_SEED", "x")
	ft := &fakeT{name: "TestX"}
	Seeds(ft, 3, func(uint64) error { return nil })
	assert.Contains(t, ft.failed, `EMUD_SEED="x"`)
}

// A reproduce command's -run pattern selects the failing subtest alone,
// not its siblings or a test whose name only starts the same.
func TestCommandNamesTheSubtest(t *testing.T) {
	cmd := Command("TestTop/sub_case#01", 4)
	m := regexp.MustCompile(`-run '([^']*)'`).FindStringSubmatch(cmd)
	require.Len(t, m, 2, cmd)
	levels := strings.Split(m[1], "/")
	require.Len(t, levels, 2)
	top, sub := regexp.MustCompile(levels[0]), regexp.MustCompile(levels[1])
	assert.True(t, top.MatchString("TestTop") && sub.MatchString("sub_case#01"))
	assert.False(t, top.MatchString("TestTopMore"))
	assert.False(t, sub.MatchString("sub_case#011"))
	assert.False(t, sub.MatchString("other"))
}
