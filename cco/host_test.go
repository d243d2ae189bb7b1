package cco_test

import (
	"fmt"
	"testing"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newHost(t *testing.T, env cco.Env) *cco.Host {
	t.Helper()
	node, err := engine.NewNode(sim.New(sim.Config{Seed: 1}), cco.MI355X(0))
	require.NoError(t, err)
	return cco.NewEmulatedHost(node, env)
}

func TestTruthy(t *testing.T) {
	for v, want := range map[string]bool{
		"": false, "0": false, "false": false, "FALSE": false, "off": false, "No": false, " no ": false,
		"1": true, "true": true, "on": true, "yes": true, "2": true, "enabled": true, "anything": true,
	} {
		assert.Equal(t, want, cco.Truthy(v), "%q", v)
	}
}

// ParseTruth takes Truthy's words and integers and refuses the rest,
// naming the value; before, EMUD_RACE=maybe and MORI_ENABLE_SDMA=ture were
// taken as on without a word (issue 45).
func TestParseTruth(t *testing.T) {
	for _, c := range []struct {
		v       string
		want    bool
		refused bool
	}{
		{"", false, false}, {"0", false, false}, {" Off ", false, false}, {"no", false, false},
		{"1", true, false}, {"TRUE", true, false}, {"on", true, false}, {"yes", true, false}, {"2", true, false}, {"-1", true, false},
		{"maybe", false, true}, {"ture", false, true}, {"enabled", false, true}, {"1.0", false, true},
	} {
		got, err := cco.ParseTruth(c.v)
		if c.refused {
			var te *cco.TruthError
			require.ErrorAs(t, err, &te, "%q", c.v)
			assert.Contains(t, err.Error(), fmt.Sprintf("%q is neither on nor off", c.v))
			continue
		}
		require.NoError(t, err, "%q", c.v)
		assert.Equal(t, c.want, got, "%q", c.v)
	}
}

// Queue-count resolution, docs/cco-semantics.md §1.2.
func TestQueueCountRules(t *testing.T) {
	for _, tc := range []struct {
		name     string
		env      cco.Env
		reqs     []int // sdmaQueueCount of successive dev comms on one comm
		want     []int
		warnings []string
	}{
		{"default 2", cco.Env{"MORI_ENABLE_SDMA": "1"}, []int{0}, []int{2}, nil},
		{"requirements win", cco.Env{"MORI_ENABLE_SDMA": "1", "MORI_SDMA_NUM_CHANNELS": "3"}, []int{5}, []int{5}, nil},
		{"env fallback", cco.Env{"MORI_ENABLE_SDMA": "1", "MORI_SDMA_NUM_CHANNELS": "3"}, []int{0}, []int{3}, nil},
		{"env capped silently", cco.Env{"MORI_ENABLE_SDMA": "1", "MORI_SDMA_NUM_CHANNELS": "12"}, []int{0}, []int{8}, nil},
		{"env unparsable", cco.Env{"MORI_ENABLE_SDMA": "1", "MORI_SDMA_NUM_CHANNELS": "lots"}, []int{0}, []int{2}, nil},
		{"env zero", cco.Env{"MORI_ENABLE_SDMA": "1", "MORI_SDMA_NUM_CHANNELS": "0"}, []int{0}, []int{2}, nil},
		{"clamp with warning", cco.Env{"MORI_ENABLE_SDMA": "1"}, []int{16}, []int{8}, []string{"sdmaQueueCount 16 exceeds hardware max 8; clamped to 8"}},
		{"first wins", cco.Env{"MORI_ENABLE_SDMA": "yes"}, []int{4, 6, 0, 4}, []int{4, 4, 4, 4}, []string{"sdmaQueueCount 6 ignored; comm already has 4"}},
		{"first wins after clamp", cco.Env{"MORI_ENABLE_SDMA": "1"}, []int{3, 20}, []int{3, 3}, []string{"exceeds hardware max", "sdmaQueueCount 8 ignored; comm already has 3"}},
		{"sdma off", cco.Env{"MORI_ENABLE_SDMA": "off"}, []int{8}, []int{0}, nil},
		{"sdma unset", cco.Env{}, []int{4}, []int{0}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHost(t, tc.env)
			comms, err := cco.CommCreateAll(h, 2, 0)
			require.NoError(t, err)
			for i, q := range tc.reqs {
				reqs := cco.DevCommRequirementsInitializer()
				reqs.SdmaQueueCount = q
				dc, err := cco.DevCommCreate(comms[0], &reqs)
				require.NoError(t, err)
				assert.Equal(t, tc.want[i], dc.Sdma.SdmaNumQueue, "dev comm %d", i)
				if tc.want[i] > 0 {
					assert.Equal(t, 2, dc.SignalPool().LsaSize)
					assert.Equal(t, tc.want[i], dc.SignalPool().Queues)
				}
			}
			require.Len(t, h.Warnings(), len(tc.warnings), "%q", h.Warnings())
			for i, w := range tc.warnings {
				assert.Contains(t, h.Warnings()[i], w)
			}
		})
	}
}

func TestWarnf(t *testing.T) {
	h := newHost(t, cco.Env{"MORI_ENABLE_SDMA": "1"})
	var got []string
	h.Warnf = func(f string, a ...any) { got = append(got, f) }
	cs, err := cco.CommCreateAll(h, 1, 0)
	require.NoError(t, err)
	reqs := cco.DevCommRequirementsInitializer()
	reqs.SdmaQueueCount = 9
	_, err = cco.DevCommCreate(cs[0], &reqs)
	require.NoError(t, err)
	assert.Len(t, got, 1)
}

func TestDebugFromEnv(t *testing.T) {
	h := newHost(t, cco.Env{"MORI_ENABLE_SDMA": "1", "MORI_CCO_SDMA_DEBUG": "1"})
	cs, err := cco.CommCreateAll(h, 2, 0)
	require.NoError(t, err)
	reqs := cco.DevCommRequirementsInitializer()
	dc, err := cco.DevCommCreate(cs[0], &reqs)
	require.NoError(t, err)
	assert.True(t, dc.Debug)
	h2 := newHost(t, cco.Env{"MORI_ENABLE_SDMA": "1"})
	cs2, err := cco.CommCreateAll(h2, 2, 0)
	require.NoError(t, err)
	dc2, err := cco.DevCommCreate(cs2[0], &reqs)
	require.NoError(t, err)
	assert.False(t, dc2.Debug)
}

func TestHostErrors(t *testing.T) {
	h := newHost(t, cco.Env{"MORI_ENABLE_SDMA": "1"})
	uid := cco.GetUniqueId(h)
	_, err := cco.CommCreate(h, uid, 9, 0, 0)
	assert.ErrorContains(t, err, "nRanks 9 exceeds the node's 8 GPUs")
	_, err = cco.CommCreate(h, uid, 0, 0, 0)
	assert.ErrorContains(t, err, "nRanks 0")
	_, err = cco.CommCreate(h, uid, 2, 2, 0)
	assert.ErrorContains(t, err, "rank 2 outside [0, 2)")
	_, err = cco.CommCreate(h, 99, 2, 0, 0)
	assert.ErrorContains(t, err, "unique id 99 was not made by GetUniqueId")
	_, err = cco.CommCreate(h, uid, 2, 0, 1<<40)
	assert.ErrorContains(t, err, "exceeds the emulated node's")
	_, err = cco.CommCreate(nil, uid, 2, 0, 0)
	assert.ErrorContains(t, err, "nil host")

	c0, err := cco.CommCreate(h, uid, 2, 0, 4<<30)
	require.NoError(t, err)
	assert.Equal(t, uint64(4<<30), c0.PerRankSize)
	_, err = cco.CommCreate(h, uid, 2, 0, 0)
	assert.ErrorContains(t, err, "rank 0 of unique id")
	_, err = cco.CommCreate(h, uid, 3, 1, 0)
	assert.ErrorContains(t, err, "was created with 2")
	c1, err := cco.CommCreate(h, uid, 2, 1, 1)
	require.NoError(t, err)
	assert.Equal(t, uint64(4<<30), c1.PerRankSize, "rounded up to 4 GiB")

	z, err := cco.MemAlloc(c0, 0)
	require.NoError(t, err, "MORI gives nullptr for 0 bytes")
	assert.Zero(t, z)
	// Freed slots are reused by size, the most recent first; a pointer
	// that is not live is refused.
	f1, err := cco.MemAlloc(c0, 4096)
	require.NoError(t, err)
	f2, err := cco.MemAlloc(c0, 5000)
	require.NoError(t, err)
	require.NoError(t, cco.MemFree(c0, f1))
	require.NoError(t, cco.MemFree(c0, f2))
	assert.ErrorContains(t, cco.MemFree(c0, f2), "is not an allocation of this comm's ccoMemAlloc that is still live")
	assert.ErrorContains(t, cco.MemFree(c0, f2+8), "is not an allocation")
	assert.NoError(t, cco.MemFree(c0, 0))
	r1, err := cco.MemAlloc(c0, 8000) // rounds to 8 KiB: f2's slot
	require.NoError(t, err)
	assert.Equal(t, f2, r1)
	r2, err := cco.MemAlloc(c0, 100)
	require.NoError(t, err)
	assert.Equal(t, f1, r2)
	r3, err := cco.MemAlloc(c0, 4096)
	require.NoError(t, err)
	assert.NotContains(t, []uint64{f1, f2}, r3, "no freed slot left: a new one")
	require.NoError(t, cco.MemFree(c0, r1))
	require.NoError(t, cco.MemFree(c0, r2))
	require.NoError(t, cco.MemFree(c0, r3))
	_, err = cco.MemAlloc(c0, 5<<30)
	assert.ErrorContains(t, err, "does not fit")

	// Asymmetric registration is caught.
	b0, err := cco.MemAlloc(c0, 4096)
	require.NoError(t, err)
	_, err = cco.MemAlloc(c1, 8192) // rank 1 allocates something else first
	require.NoError(t, err)
	b1, err := cco.MemAlloc(c1, 4096)
	require.NoError(t, err)
	_, err = cco.WindowRegister(c0, b0, 4096)
	require.NoError(t, err)
	_, err = cco.WindowRegister(c1, b1, 4096)
	assert.ErrorContains(t, err, "ranks must ccoMemAlloc and register alike")
	_, err = cco.WindowRegister(c0, 0x10, 4096)
	assert.ErrorContains(t, err, "not in this rank's slice")

	reqs := cco.DevCommRequirementsInitializer()
	bad := reqs
	bad.Magic = 1
	_, err = cco.DevCommCreate(c0, &bad)
	assert.ErrorContains(t, err, "magic")
	bad = reqs
	bad.Version = 7
	_, err = cco.DevCommCreate(c0, &bad)
	assert.ErrorContains(t, err, "version 7")
	bad = reqs
	bad.GdaConnectionType = 1
	_, err = cco.DevCommCreate(c0, &bad)
	assert.ErrorContains(t, err, "ccoGda is not emulated")
	bad = reqs
	bad.SdmaQueueCount = -1
	_, err = cco.DevCommCreate(c0, &bad)
	assert.ErrorContains(t, err, "negative")
	_, err = cco.DevCommCreate(c0, nil)
	assert.ErrorContains(t, err, "nil requirements")
}

func TestWindowPointers(t *testing.T) {
	r := newRig(t, 1, rigOpts{ranks: 4})
	w := r.recv[2]
	assert.Equal(t, 2, w.LsaRank)
	for p := 0; p < 4; p++ {
		assert.Equal(t, r.mem.GPUOf(w.LsaPtr(p, 0)), p, "LSA pointer of peer %d lands on GPU %d", p, p)
		assert.Equal(t, r.recv[p].LocalPtr(12), w.LsaPtr(p, 12), "every rank's window has the same slot offset")
	}
	assert.Equal(t, w.LsaPtr(2, 5), w.LocalPtr(5))
}

func TestOSEnv(t *testing.T) {
	t.Setenv("MORI_ENABLE_SDMA", "1")
	t.Setenv("MORI_SDMA_NUM_CHANNELS", "4")
	t.Setenv("UNRELATED_EMUD_TEST", "x")
	e := cco.OSEnv()
	assert.Equal(t, cco.Env{"MORI_ENABLE_SDMA": "1", "MORI_SDMA_NUM_CHANNELS": "4"}, e)
}

func TestSignalHostRead(t *testing.T) {
	h := newHost(t, cco.Env{})
	cs, err := cco.CommCreateAll(h, 2, 0)
	require.NoError(t, err)
	reqs := cco.DevCommRequirementsInitializer()
	dc, err := cco.DevCommCreate(cs[0], &reqs)
	require.NoError(t, err)
	_, err = dc.Signal(0, 0)
	assert.ErrorContains(t, err, "SDMA off")
	r := newRig(t, 1, rigOpts{ranks: 2})
	_, err = r.dcs[0].Signal(2, 0)
	assert.ErrorContains(t, err, "sender rank 2")
	v, err := r.dcs[0].Signal(1, 1)
	require.NoError(t, err)
	assert.Zero(t, v, "zeroed at creation")
}

func TestWindowAllocAllAndDevCommCreateAll(t *testing.T) {
	node, err := engine.NewNode(sim.New(sim.Config{Seed: 1}), cco.MI355X(0))
	require.NoError(t, err)
	h := cco.NewEmulatedHost(node, cco.Env{"MORI_ENABLE_SDMA": "1"})
	comms, err := cco.CommCreateAll(h, 3, 0)
	require.NoError(t, err)
	ws, err := cco.WindowAllocAll(comms, 4096)
	require.NoError(t, err)
	require.Len(t, ws, 3)
	for r, w := range ws {
		assert.Equal(t, r, w.LsaRank)
		assert.Equal(t, ws[0].LsaPtr(r, 0), w.LocalPtr(0), "symmetric: rank r's window is where rank 0 computes it")
	}
	reqs := cco.DevCommRequirementsInitializer()
	reqs.SdmaQueueCount = 4
	dcs, err := cco.DevCommCreateAll(comms, &reqs)
	require.NoError(t, err)
	for r, dc := range dcs {
		assert.Equal(t, r, dc.Rank)
		assert.Equal(t, 4, dc.Sdma.SdmaNumQueue)
	}
	_, err = cco.WindowAllocAll(comms, 1<<50)
	assert.Error(t, err, "an allocation the GPU cannot hold fails")
	bad := cco.DevCommRequirements{} // not from the initializer: no magic
	_, err = cco.DevCommCreateAll(comms, &bad)
	assert.ErrorContains(t, err, "rank 0: ")
}

// A comm's live slots are a list while few and a map beyond 32 (its
// first slots, windows and dev comm live in the comm): alloc, free,
// reuse and window registration give the same answers on both sides of
// the switch.
func TestManySlots(t *testing.T) {
	h := newHost(t, cco.Env{"MORI_ENABLE_SDMA": "1"})
	cs, err := cco.CommCreateAll(h, 2, 0)
	require.NoError(t, err)
	c0 := cs[0]
	var addrs []uint64
	for i := range 40 {
		a, err := cco.MemAlloc(c0, uint64(4096*(1+i%3)))
		require.NoError(t, err)
		addrs = append(addrs, a)
		if i == 3 || i == 35 { // free one while listed and one once mapped
			require.NoError(t, cco.MemFree(c0, a))
			assert.ErrorContains(t, cco.MemFree(c0, a), "is not an allocation of this comm's ccoMemAlloc that is still live")
			again, err := cco.MemAlloc(c0, uint64(4096*(1+i%3)))
			require.NoError(t, err)
			assert.Equal(t, a, again, "slot %d reused", i)
		}
	}
	for i, a := range addrs {
		w, err := cco.WindowRegister(c0, a, 4096)
		require.NoError(t, err, "slot %d", i)
		assert.Equal(t, c0.LsaRank, w.LsaRank)
	}
	for _, a := range addrs {
		require.NoError(t, cco.MemFree(c0, a))
	}
	for _, a := range addrs {
		assert.Error(t, cco.MemFree(c0, a), "freed")
	}
}

// DevCommDestroy takes the dev comm's signal slots out of the memory's
// write log (every NotifyAll loads each tracked word, so a program that
// made and destroyed a dev comm a round slowed down every round), leaves
// another dev comm's slots tracked, and refuses a second destroy.
func TestDevCommDestroyUntracks(t *testing.T) {
	node, err := engine.NewNode(sim.New(sim.Config{Seed: 1}), cco.MI355X(0))
	require.NoError(t, err)
	h := cco.NewEmulatedHost(node, cco.Env{"MORI_ENABLE_SDMA": "1"})
	comms, err := cco.CommCreateAll(h, 2, 0)
	require.NoError(t, err)
	c := comms[0]
	reqs := cco.DevCommRequirementsInitializer()
	first, err := cco.DevCommCreate(c, &reqs)
	require.NoError(t, err)
	second, err := cco.DevCommCreate(c, &reqs)
	require.NoError(t, err)
	log := node.Memory().Log()
	tracked := func(d cco.DevComm) bool {
		p := d.SignalPool()
		require.NotZero(t, p.Bytes())
		return log.Tracked(p.Base, p.Base+p.Bytes())
	}
	require.True(t, tracked(first))
	require.True(t, tracked(second))
	require.NoError(t, cco.DevCommDestroy(c, &first))
	assert.False(t, tracked(first), "a destroyed dev comm's slots are still tracked")
	assert.True(t, tracked(second))
	err = cco.DevCommDestroy(c, &first)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "was destroyed already")
	require.Error(t, cco.DevCommDestroy(comms[1], &second), "another comm's dev comm")
}

// CommCreateOn (ncclCommInitRank's) puts a rank on the GPU given, which
// need not be its rank: two comms on the node's halves allocate on their
// own GPUs, refuse LSA windows and dev comms with the reason, and a
// comm's two ranks on one GPU, or a GPU the node lacks, are refused.
func TestCommCreateOn(t *testing.T) {
	h := newHost(t, cco.Env{"MORI_ENABLE_SDMA": "1"})
	lo, hi := cco.GetUniqueId(h), cco.GetUniqueId(h)
	var comms []*cco.Comm
	for g := range 4 {
		uid := lo
		if g >= 2 {
			uid = hi
		}
		c, err := cco.CommCreateOn(h, uid, 2, g%2, g, 0)
		require.NoError(t, err, "GPU %d", g)
		assert.Equal(t, g, c.GPU)
		assert.Equal(t, g%2, c.LsaRank)
		comms = append(comms, c)
	}
	mem := h.Device().Memory()
	for g, c := range comms {
		assert.Equal(t, g < 2, c.RanksOnOwnGPUs(), "GPU %d", g)
		p, err := cco.MemAlloc(c, 4096)
		require.NoError(t, err)
		assert.Equal(t, g, mem.GPUOf(p), "GPU %d's allocation", g)
	}
	_, err := cco.WindowRegister(comms[2], mem.SliceBase(2), 4096)
	assert.ErrorContains(t, err, "ccoWindowRegister (rank 0): this comm's ranks are not on GPUs 0..1 in rank order (rank 0 on GPU 2, rank 1 on GPU 3)")
	reqs := cco.DevCommRequirementsInitializer()
	_, err = cco.DevCommCreate(comms[3], &reqs)
	assert.ErrorContains(t, err, "ccoDevCommCreate (rank 1): this comm's ranks are not on GPUs 0..1")
	_, err = cco.WindowRegister(comms[0], mem.SliceBase(0), 4096)
	assert.NoError(t, err, "the comm on GPUs 0 and 1 keeps its windows")

	uid := cco.GetUniqueId(h)
	_, err = cco.CommCreateOn(h, uid, 2, 0, 5, 0)
	require.NoError(t, err)
	_, err = cco.CommCreateOn(h, uid, 2, 1, 5, 0)
	assert.ErrorContains(t, err, "ncclCommInitRank: rank 1 and rank 0 of unique id 3 both run on GPU 5")
	_, err = cco.CommCreateOn(h, uid, 2, 1, 8, 0)
	assert.ErrorContains(t, err, "ncclCommInitRank: rank 1's device 8 is not one of the node's 8 GPUs")
}
