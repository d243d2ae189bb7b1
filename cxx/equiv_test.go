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

// goAlltoall is examples/cxx/alltoall_put.cpp written in Go, as
// cmd/emud's alltoall scenario is: the same windows, pattern, kernel and
// queues on a job of the same seed. It returns the emulated end time and
// each rank's receive-buffer FNV-1a.
func goAlltoall(t *testing.T, seed uint64, ranks int, bytes uint64) (sim.Time, []uint64) {
	j, err := emujob.New(emujob.Config{Sim: sim.Config{Seed: seed}, Ranks: ranks, Env: cco.Env{"MORI_ENABLE_SDMA": "1"}})
	require.NoError(t, err)
	span := uint64(ranks) * bytes
	send, err := j.Window(span)
	require.NoError(t, err)
	recv, err := j.Window(span)
	require.NoError(t, err)
	buf := make([]byte, span)
	for r := range ranks {
		for p := range ranks {
			for i := uint64(0); i < bytes/8; i++ {
				binary.LittleEndian.PutUint64(buf[uint64(p)*bytes+8*i:], pattern(r, p, i))
			}
		}
		require.NoError(t, j.Write(send[r], 0, buf))
	}
	require.NoError(t, j.CreateDevComms(0, false))
	for r := range ranks {
		_, err := j.Launch(r, 1, ranks, func(th *kernel.Thread, sdma *cco.Sdma) {
			nq := sdma.DevComm().Sdma.SdmaNumQueue
			p := (r + 1 + th.ThreadIdx()) % ranks
			sdma.Put(p, recv[r], uint64(r)*bytes, send[r], uint64(p)*bytes, bytes, p%nq, cco.RemoteSignal)
			sdma.Quiet(p)
			sdma.WaitSignal(p, r%nq, 1)
		})
		require.NoError(t, err)
	}
	require.NoError(t, j.Run())
	sums := make([]uint64, ranks)
	for r := range ranks {
		b, err := j.Read(recv[r], 0, span)
		require.NoError(t, err)
		h := fnv.New64a()
		h.Write(b)
		sums[r] = h.Sum64()
	}
	return j.Sim.Now(), sums
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
	if raceBuild {
		t.Skip("its Go side runs in-process: run without -race (CI does)")
	}
	root := setupCxx(t)
	prog := buildExample(t, filepath.Join(root, "examples", "cxx", "alltoall_put.cpp"), "-O2", "-Wall", "-Werror")
	endRe := regexp.MustCompile(`end (\d+) ps`)
	for _, seed := range []uint64{1, 2, 3} {
		out, sum, code := runExample(t, prog, "EMUD_SUMMARY=1", fmt.Sprintf("EMUD_SEED=%d", seed))
		require.Equal(t, 0, code, out+sum)
		m := endRe.FindStringSubmatch(sum)
		require.NotNil(t, m, sum)
		end, err := strconv.ParseInt(m[1], 10, 64)
		require.NoError(t, err)
		goEnd, goSums := goAlltoall(t, seed, 8, 64<<10)
		assert.Equal(t, int64(goEnd), end, "seed %d: emulated end time, Go vs C++", seed)
		for r, s := range goSums {
			assert.Contains(t, out, fmt.Sprintf("rank %d received fnv64 %016x\n", r, s), "seed %d: rank %d's landed bytes", seed, r)
		}
		assert.True(t, strings.Contains(out, "alltoall_put: PASS"))
	}
}
