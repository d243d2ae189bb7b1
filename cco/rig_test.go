package cco_test

import (
	"encoding/binary"
	"math"
	"os"
	"testing"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/internal/testmain"
	"github.com/emud-dev/emud/job"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/model"
	"github.com/emud-dev/emud/sim"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) { testmain.Run(m) }

// rig is one emulated MI355X node with a job of n ranks, a send and a
// receive window per rank, and one dev comm per rank.
type rig struct {
	t     testing.TB
	j     *job.Job
	s     *sim.Sim
	node  *engine.Node
	h     *cco.Host
	comms []*cco.Comm
	dcs   []cco.DevComm
	send  []cco.Window
	recv  []cco.Window
	mem   cco.Memory
}

type rigOpts struct {
	ranks     int
	queues    int // reqs.SdmaQueueCount; 0 = default rules
	winBytes  uint64
	env       cco.Env
	debug     bool
	watchdog  sim.Time
	engineCfg func(*engine.Config)
	// freeIssue uses the placeholder model, whose CU issue costs nothing:
	// for protocol tests whose interleaving needs issuers that outrun the
	// engine (a ring filled before the engine frees a slot).
	freeIssue bool
	// race turns the race detector on (DevCommRequirements.Race). With
	// EMUD_TEST_RACE=1 in the environment every rig has it on unless
	// racy says the test plants a data race on purpose.
	race, racy bool
	// model, if set, is the node's timing model (a preset: gfx950 lowers
	// onto the fused packet, mi355x does not).
	model model.Model
	// barriers is reqs.LsaBarrierCount, hybrid reqs.BarrierCount.
	barriers, hybrid int
	// perturb and strategy are the run's timing perturbation and
	// scheduling strategy (sim.Config).
	perturb  sim.Level
	strategy sim.Strategy
}

// raceEverywhere is EMUD_TEST_RACE=1: run every correct scenario with the
// race detector on (CI does), so that it must find nothing in them.
var raceEverywhere = cco.Truthy(os.Getenv("EMUD_TEST_RACE"))

func newRig(t testing.TB, seed uint64, o rigOpts) *rig {
	t.Helper()
	if o.env == nil {
		o.env = cco.Env{"MORI_ENABLE_SDMA": "1"}
	}
	if o.winBytes == 0 {
		o.winBytes = 64 << 10
	}
	c := job.Config{Sim: sim.Config{Seed: seed, Watchdog: o.watchdog, Perturb: o.perturb, Strategy: o.strategy}, Ranks: o.ranks, GPUs: engine.DefaultGPUs,
		Env: o.env, Configure: o.engineCfg}
	if o.freeIssue {
		c.Model = model.NewPlaceholder()
	}
	if o.model != nil {
		c.Model = o.model
	}
	j, err := job.New(c)
	require.NoError(t, err)
	r := &rig{t: t, j: j, s: j.Sim, node: j.Node, h: j.Host, comms: j.Comms, mem: j.Host.Device().Memory()}
	r.send, err = j.Window(o.winBytes)
	require.NoError(t, err)
	r.recv, err = j.Window(o.winBytes)
	require.NoError(t, err)
	reqs := cco.DevCommRequirementsInitializer()
	reqs.SdmaQueueCount = o.queues
	reqs.Debug = o.debug
	reqs.LsaBarrierCount = o.barriers
	reqs.BarrierCount = o.hybrid
	reqs.Race = o.race || (raceEverywhere && !o.racy)
	require.NoError(t, j.CreateDevCommsWith(reqs))
	r.dcs = j.DevComms
	return r
}

// launch starts fn on rank's GPU.
func (r *rig) launch(rank, grid, block int, fn func(t *kernel.Thread, sdma *cco.Sdma)) *kernel.Kernel {
	r.t.Helper()
	k, err := r.j.Launch(rank, grid, block, fn)
	require.NoError(r.t, err)
	return k
}

// fill writes f(i) as float32 at index i of window w on its owner.
func (r *rig) fillF32(w cco.Window, from, count int, f func(i int) float32) {
	buf := make([]byte, 4*count)
	for i := 0; i < count; i++ {
		binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(f(i)))
	}
	require.NoError(r.t, r.mem.Write(w.LocalPtr(uint64(4*from)), buf))
}

func (r *rig) readF32(w cco.Window, from, count int) []float32 {
	buf := make([]byte, 4*count)
	require.NoError(r.t, r.mem.Read(w.LocalPtr(uint64(4*from)), buf))
	out := make([]float32, count)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(buf[4*i:]))
	}
	return out
}

func (r *rig) fillBytes(w cco.Window, off uint64, b []byte) {
	require.NoError(r.t, r.mem.Write(w.LocalPtr(off), b))
}

func (r *rig) readBytes(w cco.Window, off, n uint64) []byte {
	b := make([]byte, n)
	require.NoError(r.t, r.mem.Read(w.LocalPtr(off), b))
	return b
}

func (r *rig) signal(rank, src, q int) uint64 {
	v, err := r.dcs[rank].Signal(src, q)
	require.NoError(r.t, err)
	return v
}

// pattern is the byte at offset i of a chunk identified by tag.
func pattern(tag, i int) byte { return byte(tag*131 + i*7 + 1) }

func patterned(tag int, n uint64) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = pattern(tag, i)
	}
	return b
}
