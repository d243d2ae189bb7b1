package cxx

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/cco"
	emujob "github.com/emud-dev/emud/job"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/sim"
)

// pattern is examples/cxx/common.hpp's pattern: word i of the block src
// sends to dst.
func pattern(src, dst int, i uint64) uint64 {
	z := (uint64(src)<<32|uint64(dst))*0x9e3779b97f4a7c15 + i + 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// goTwin is the Go side of the all-to-all twins (alltoall_put.cpp,
// gin_put): a job of the seed with a send window per rank filled with
// pattern and a receive window, as the C++ programs allocate them.
type goTwin struct {
	j           *emujob.Job
	ranks       int
	bytes, span uint64
	send, recv  []cco.Window
}

func newGoTwin(t *testing.T, seed uint64, ranks int, bytes uint64) *goTwin {
	j, err := emujob.New(emujob.Config{Sim: sim.Config{Seed: seed}, Ranks: ranks, Env: cco.Env{"MORI_ENABLE_SDMA": "1"}})
	require.NoError(t, err)
	g := &goTwin{j: j, ranks: ranks, bytes: bytes, span: uint64(ranks) * bytes}
	g.send, err = j.Window(g.span)
	require.NoError(t, err)
	g.recv, err = j.Window(g.span)
	require.NoError(t, err)
	buf := make([]byte, g.span)
	for r := range ranks {
		for p := range ranks {
			for i := uint64(0); i < bytes/8; i++ {
				binary.LittleEndian.PutUint64(buf[uint64(p)*bytes+8*i:], pattern(r, p, i))
			}
		}
		require.NoError(t, j.Write(g.send[r], 0, buf))
	}
	return g
}

// run makes the dev comms, launches lane(r) on every rank (one block of
// ranks lanes), runs the job and returns its end time and each rank's
// receive-buffer FNV-1a, as the C++ programs print them.
func (g *goTwin) run(t *testing.T, lane func(r int) func(*kernel.Thread, *cco.Sdma)) (sim.Time, []uint64) {
	require.NoError(t, g.j.CreateDevComms(0, false))
	for r := range g.ranks {
		_, err := g.j.Launch(r, 1, g.ranks, lane(r))
		require.NoError(t, err)
	}
	require.NoError(t, g.j.Run())
	sums := make([]uint64, g.ranks)
	for r := range g.ranks {
		b, err := g.j.Read(g.recv[r], 0, g.span)
		require.NoError(t, err)
		h := fnv.New64a()
		h.Write(b)
		sums[r] = h.Sum64()
	}
	return g.j.Sim.Now(), sums
}

// goAlltoall is examples/cxx/alltoall_put.cpp written in Go, as
// cmd/emud's alltoall scenario is: the same windows, pattern, kernel and
// queues on a job of the same seed. It returns the emulated end time and
// each rank's receive-buffer FNV-1a.
func goAlltoall(t *testing.T, seed uint64, ranks int, bytes uint64) (sim.Time, []uint64) {
	g := newGoTwin(t, seed, ranks, bytes)
	return g.run(t, func(r int) func(*kernel.Thread, *cco.Sdma) {
		return func(th *kernel.Thread, sdma *cco.Sdma) {
			nq := sdma.DevComm().Sdma.SdmaNumQueue
			p := (r + 1 + th.ThreadIdx()) % ranks
			sdma.Put(p, g.recv[r], uint64(r)*bytes, g.send[r], uint64(p)*bytes, bytes, p%nq, cco.RemoteSignal)
			sdma.Quiet(p)
			sdma.WaitSignal(p, r%nq, 1)
		}
	})
}

// summaryEnd is the emulated end time (ps) in a run's EMUD_SUMMARY=1 line.
func summaryEnd(t *testing.T, sum string) int64 {
	t.Helper()
	m := regexp.MustCompile(`end (\d+) ps`).FindStringSubmatch(sum)
	require.Len(t, m, 2, "no end time in\n%s", sum)
	end, err := strconv.ParseInt(m[1], 10, 64)
	require.NoError(t, err)
	return end
}

// assertLanded checks that a C++ twin's output names each rank's landed
// bytes as the Go side's sums have them.
func assertLanded(t *testing.T, out string, seed uint64, sums []uint64) {
	t.Helper()
	for r, s := range sums {
		assert.Contains(t, out, fmt.Sprintf("rank %d received fnv64 %016x\n", r, s), "seed %d: rank %d's landed bytes", seed, r)
	}
}

// TestAlltoallMatchesGo: the 8-rank all-to-all in C++ and in Go give the
// same emulated end time and the same landed bytes on the same seeds.
// Its Go side runs the 8-rank emulation in this test process, where Go's
// race detector would multiply its time and memory for nothing this test
// checks: a -race build skips it, and CI runs it in a plain build. (The
// other C++ tests run the programs as processes of their own, built
// without Go's detector: a -race test binary costs them nothing.)
func TestAlltoallMatchesGo(t *testing.T) {
	needCxx(t)
	plainLine(t)
	root := setupCxx(t)
	prog := buildExample(t, filepath.Join(root, "examples", "cxx", "alltoall_put.cpp"), "-O2", "-Wall", "-Werror")
	for _, seed := range []uint64{1, 2, 3} {
		out, sum, code := runExample(t, prog, "EMUD_SUMMARY=1", fmt.Sprintf("EMUD_SEED=%d", seed))
		require.Equal(t, 0, code, out+sum)
		goEnd, goSums := goAlltoall(t, seed, 8, 64<<10)
		assert.Equal(t, int64(goEnd), summaryEnd(t, sum), "seed %d: emulated end time, Go vs C++", seed)
		assertLanded(t, out, seed, goSums)
		assert.True(t, strings.Contains(out, "alltoall_put: PASS"))
	}
}
