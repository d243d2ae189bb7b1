package fabric_test

import (
	"os"
	"testing"

	"github.com/emud-dev/emud/fabric"
	"github.com/emud-dev/emud/internal/testmain"
	"github.com/emud-dev/emud/job"
	"github.com/emud-dev/emud/kernel"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) { testmain.Run(m) }

// rig is a small job for unit tests: n ranks, one 64 KiB window W and a
// second 64 KiB window V on every rank.
type rig struct {
	*job.Fabric
	W, V []fabric.Window
}

// raceEverywhere is EMUD_TEST_RACE=1: every rig runs with the race
// detector on (CI does), so that it must find nothing in correct kernels.
var raceEverywhere = os.Getenv("EMUD_TEST_RACE") == "1"

// newRig builds the rig; racy (optional) says the test plants a data race,
// so EMUD_TEST_RACE leaves its detector off.
func newRig(t testing.TB, seed uint64, cfg job.FabricConfig, racy ...bool) *rig {
	t.Helper()
	cfg.Seed = seed
	if raceEverywhere && !(len(racy) > 0 && racy[0]) && !cfg.Debug {
		cfg.Race = true
	}
	if cfg.Topology.NRanks == 0 {
		cfg.Topology.NRanks = 2
	}
	if cfg.Windows == nil {
		cfg.Windows = []uint64{64 << 10, 64 << 10}
	}
	j, err := job.NewFabric(cfg)
	require.NoError(t, err)
	return &rig{Fabric: j, W: j.Windows[0], V: j.Windows[1]}
}

// launch runs fn on rank's GPU: one block of threads (waves of 32) with
// shared bytes of shared memory.
func (r *rig) launch(t testing.TB, rank, threads, shared int, fn func(th *kernel.Thread, dc fabric.DevComm)) *kernel.Kernel {
	t.Helper()
	dc := r.DevComms[rank]
	k, err := kernel.Launch(r.Sim, kernel.Config{Name: "test", GPU: rank, Grid: 1, Block: threads, WaveSize: 32, SharedBytes: shared},
		func(th *kernel.Thread) { fn(th, dc) })
	require.NoError(t, err)
	return k
}

func (r *rig) write(t testing.TB, rank int, w []fabric.Window, off uint64, data []byte) {
	t.Helper()
	require.NoError(t, r.Sys.Write(rank, w[rank], off, data))
}

func (r *rig) read(t testing.TB, rank int, w []fabric.Window, off, n uint64) []byte {
	t.Helper()
	b, err := r.Sys.Read(rank, w[rank], off, n)
	require.NoError(t, err)
	return b
}

func pattern(seed, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(seed*131 + i*7 + 1)
	}
	return b
}
