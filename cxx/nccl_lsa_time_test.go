package cxx

import (
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/fabric"
	emujob "github.com/emud-dev/emud/job"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/sim"
)

// lsaInput is examples/cxx/nccl/lsa_allreduce's input(iter, rank, i).
func lsaInput(iter, rank, i int) float32 { return float32(rank+1) + float32((i+5*iter)%13) }

// goLsaAllReduce is examples/cxx/nccl/lsa_allreduce's kernel (one
// iteration, CTAS 2 of 64 threads, warps of 32 as CUDA's) written in Go
// on a job of the same seed and node: each lane adds its elements from
// every rank's send window and stores the sum into every rank's receive
// window, between two LSA barriers. Its lanes pay for their code through
// the same fabric.LaneCode as the C++ lanes (the CU's time for their
// local stores, the fabric's ports for their peer loads and stores) and
// its barriers' signals cross the same ports; it returns the emulated
// end time and how many sums were wrong.
func goLsaAllReduce(t *testing.T, seed uint64, ranks, count int) (sim.Time, int) {
	const ctas, threads = 2, 64
	j, err := emujob.New(emujob.Config{Sim: sim.Config{Seed: seed}, Ranks: ranks, GPUs: 8, Env: cco.Env{"MORI_ENABLE_SDMA": "1"}})
	require.NoError(t, err)
	defer j.Close()
	bytes := uint64(count) * 4
	send, err := j.Window(bytes)
	require.NoError(t, err)
	recv, err := j.Window(bytes)
	require.NoError(t, err)
	buf := make([]byte, bytes)
	for r := range ranks {
		for i := range count {
			binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(lsaInput(0, r, i)))
		}
		require.NoError(t, j.Write(send[r], 0, buf))
	}
	// ncclDevCommCreate's requirements (include/nccl_device.h): no SDMA
	// queues, lsaBarrierCount = CTAS; the C++ layer's comm owns and
	// connects its queues (capi/calls.go).
	reqs := cco.DevCommRequirementsInitializer()
	reqs.LsaBarrierCount = ctas
	reqs.PerCommQueues, reqs.ConnectQueues = true, true
	require.NoError(t, j.CreateDevCommsWith(reqs))
	ports, err := fabric.NewPorts(fabric.DefaultModel(), j.Node.GPUs())
	require.NoError(t, err)
	lc := fabric.NewLaneCode(j.Sim, fabric.DefaultLaneCycles, j.Node.Model().CUClockGHz(), ports)
	for r := range ranks {
		dc := j.DevComms[r]
		cfg := kernel.Config{Name: fmt.Sprintf("lsaAllReduce%d", r), GPU: r, Grid: ctas, Block: threads, WaveSize: 32, Between: lc.Pay}
		_, err := kernel.Launch(j.Sim, cfg, func(th *kernel.Thread) {
			team := cco.Team{NRanks: dc.LsaSize, Rank: dc.LsaRank, Stride: 1}
			bar := cco.NewLsaBarrierSessionOn(th.BlockGroup(), dc, team, dc.LsaBarrier, th.BlockIdx())
			bar.SetTiming(ports)
			bar.Sync()
			mem := cco.NewMem(th, dc)
			var local, loads, stores uint64
			first := th.ThreadIdx() + threads*(th.BlockIdx()+ctas*r)
			for i := first; i < count; i += threads * ctas * ranks {
				var v float32
				for p := range ranks {
					v += math.Float32frombits(mem.Load32(send[r].LsaPtr(p, 4*uint64(i))))
					if p != r {
						loads += 4
					}
				}
				for p := range ranks {
					mem.Store32(recv[r].LsaPtr(p, 4*uint64(i)), math.Float32bits(v))
					if p != r {
						stores += 4
					} else {
						local += 4
					}
				}
			}
			lc.Add(th, local, loads, stores)
			bar.Sync()
			bar.Close()
		})
		require.NoError(t, err)
	}
	require.NoError(t, j.Run())
	wrong := 0
	for r := range ranks {
		b, err := j.Read(recv[r], 0, bytes)
		require.NoError(t, err)
		for i := range count {
			var want float32
			for p := range ranks {
				want += lsaInput(0, p, i)
			}
			if math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])) != want {
				wrong++
			}
		}
	}
	return j.Sim.Now(), wrong
}

// TestLsaAllReduceMatchesGo: the LSA all-reduce in C++
// (examples/cxx/nccl/lsa_allreduce, one iteration) and its Go twin
// (goLsaAllReduce) end at the same emulated time on the same ranks,
// floats and seed, because both time their lanes' peer loads and stores
// and their LSA barriers' signals with package fabric's ports on its
// default model (fabric.LaneCode, Ports.LsaSpan and LsaSignal). Before
// LSA took time the C++ run ended at 0 ps. Its Go side runs in this test
// process, so a -race build skips it (as TestCftAllReduceMatchesGo).
func TestLsaAllReduceMatchesGo(t *testing.T) {
	needCxx(t)
	plainLine(t)
	prog := ncclExample(t, "lsa_allreduce")
	for _, c := range []struct{ ranks, count int }{{4, 4096}, {8, 64 << 10}} {
		for _, seed := range []uint64{1, 2} {
			name := fmt.Sprintf("%d ranks, %d floats, seed %d", c.ranks, c.count, seed)
			out, sum, code := runExample(t, prog, fmt.Sprintf("NTHREADS=%d", c.ranks), fmt.Sprintf("LSA_ALLREDUCE_COUNT=%d", c.count),
				"LSA_ALLREDUCE_ITERS=1", "EMUD_SUMMARY=1", fmt.Sprintf("EMUD_SEED=%d", seed))
			require.Equal(t, 0, code, "%s\n%s%s", name, out, sum)
			assert.Contains(t, out, "lsa_allreduce: PASS", name)
			end := summaryEnd(t, sum)
			goEnd, wrong := goLsaAllReduce(t, seed, c.ranks, c.count)
			assert.Zero(t, wrong, "%s: wrong sums in Go", name)
			// A barrier's signal and a span's loads each take the fabric's
			// Latency: the run cannot end sooner than three of them.
			assert.Greater(t, end, int64(3*fabric.DefaultModel().Latency), name)
			assert.Equal(t, int64(goEnd), end, "%s: emulated end time, Go vs C++", name)
		}
	}
}
