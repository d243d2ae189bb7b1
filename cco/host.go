package cco

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/model"
	"github.com/emud-dev/emud/signal"
)

// Queue-count limits (context.cpp, anvil.hpp).
const (
	// MaxSdmaQueues is kMaxSdmaChannelsPerPair: "4 queues/engine × 2
	// recommended engines".
	MaxSdmaQueues = 8
	// DefaultSdmaQueues is the count when neither the requirements nor
	// MORI_SDMA_NUM_CHANNELS set one.
	DefaultSdmaQueues = 2
)

// Env is the environment the emulated process sees: MORI_ENABLE_SDMA,
// MORI_SDMA_NUM_CHANNELS, MORI_CCO_SDMA_DEBUG, MORI_CCO_SDMA_RACE (the
// emulator's race detector). Tests pass their own so that a
// run never depends on the shell it was started from.
type Env map[string]string

// OSEnv snapshots the MORI_* variables of the real environment.
func OSEnv() Env {
	e := Env{}
	for _, k := range []string{"MORI_ENABLE_SDMA", "MORI_SDMA_NUM_CHANNELS", "MORI_CCO_SDMA_DEBUG", "MORI_CCO_SDMA_RACE"} {
		if v, ok := os.LookupEnv(k); ok {
			e[k] = v
		}
	}
	return e
}

// Truthy is MORI's env_utils rule: unset, empty, 0, false, off and no
// (case-insensitive) are false; anything else non-empty is true.
func Truthy(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "0", "false", "off", "no":
		return false
	}
	return true
}

// TruthError is a switch's environment value that reads as neither on nor
// off (ParseTruth).
type TruthError struct{ Value string }

func (e *TruthError) Error() string {
	return fmt.Sprintf("%q is neither on nor off: want 1, true, on or yes; 0, false, off, no or empty", e.Value)
}

// ParseTruth reads a switch as Truthy does, but refuses a value that is
// no word of either side (EMUD_RACE=maybe, MORI_ENABLE_SDMA=ture): MORI
// would take it as on, which a typo of "off" is not meant to be. Any
// integer counts, nonzero as on.
func ParseTruth(v string) (bool, error) {
	w := strings.ToLower(strings.TrimSpace(v))
	switch w {
	case "", "0", "false", "off", "no":
		return false, nil
	case "1", "true", "on", "yes":
		return true, nil
	}
	if n, err := strconv.ParseInt(w, 10, 64); err == nil {
		return n != 0, nil
	}
	return false, &TruthError{v}
}

// Host is one emulated process: the host side of every rank that shares
// the node. Hardware queues belong to the process and are keyed by (src
// GPU, dst GPU, channel), so all comms of a Host share rings and commit
// chains, as in MORI's anvil.
type Host struct {
	dev    Device
	env    Env
	worlds map[UniqueId]*world
	nextID uint64
	warns  []string
	// Warnf, if set, receives each warning as it is issued.
	Warnf func(format string, args ...any)
	diag  *diagnosis
	// timing is the emulated device's model for CU-side costs; nil on
	// hardware (timing.go).
	timing model.Model
	obs    Observer  // hooks.go
	life   lifecycle // queue ownership and comm destruction (lifecycle.go)
}

// NewHost returns the process view of a device. env nil means an empty
// environment, in which MORI_ENABLE_SDMA is unset and SDMA is off.
func NewHost(dev Device, env Env) *Host {
	if env == nil {
		env = Env{}
	}
	h := &Host{dev: dev, env: env, worlds: map[UniqueId]*world{}, timing: dev.Model()}
	h.diag = newDiagnosis(h)
	h.life.refs = h.diag.refs // a worker's kept map, or nil (made by the first ref)
	return h
}

// NewEmulatedHost is NewHost(Emulated(n), env).
func NewEmulatedHost(n *engine.Node, env Env) *Host { return NewHost(Emulated(n), env) }

// Device returns the device the host drives.
func (h *Host) Device() Device { return h.dev }

// Warnings returns every warning issued so far (queue-count clamps and
// ignored requests), in order.
func (h *Host) Warnings() []string { return h.warns }

func (h *Host) warn(format string, args ...any) {
	h.warns = append(h.warns, fmt.Sprintf(format, args...))
	if h.Warnf != nil {
		h.Warnf(format, args...)
	}
}

// UniqueId names one job: the comms created with it are its ranks.
type UniqueId uint64

// GetUniqueId is ccoGetUniqueId.
func GetUniqueId(h *Host) UniqueId {
	h.nextID++
	return UniqueId(h.nextID)
}

type world struct {
	nRanks int
	comms  []*Comm
}

// Comm is one rank's communicator (ccoComm).
type Comm struct {
	h           *Host
	w           *world
	Rank        int
	NRanks      int
	LsaRank     int
	LsaSize     int
	PerRankSize uint64 // vmmSize rounded up to 4 GiB
	// GPU is the device the rank runs on: its LSA rank (CommCreate, as
	// MORI assumes), or the device NCCL's ncclCommInitRank found current
	// (CommCreateOn), where a comm's ranks may be any distinct GPUs.
	GPU int

	sdmaEnabled bool
	numQueue    int  // fixed by the first dev comm
	fixed       bool // a dev comm has fixed numQueue
	used        uint64
	allocs      []uint64  // slot offsets, in allocation order
	live        liveSlots // MemAlloc'd and not freed, by address
	freed       []memSlot // MemFree'd, most recent last
	windows     []Window
	devs        []*devState
	// queue ownership (lifecycle.go): gen is the comm's slot among its
	// GPU's live owning comms, -1 when its queues are shared.
	gen       int
	destroyed bool

	// The first allocations, windows and dev comm live in the comm: a
	// 4 KiB all-to-all seed's four comms grew each slice from nil (about
	// 25 allocations a seed).
	allocsBuf  [4]uint64
	windowsBuf [4]Window
	devsBuf    [1]*devState
	dev0       devState
}

// liveSlots are a comm's live MemAlloc slots by address: a list while
// they are few (a comm allocates a handful), a map beyond maxListedSlots.
type liveSlots struct {
	list []memSlot
	buf  [4]memSlot
	m    map[uint64]memSlot
}

const maxListedSlots = 32

func (l *liveSlots) get(addr uint64) (memSlot, bool) {
	if l.m != nil {
		sl, ok := l.m[addr]
		return sl, ok
	}
	for _, sl := range l.list {
		if sl.addr == addr {
			return sl, true
		}
	}
	return memSlot{}, false
}

func (l *liveSlots) put(sl memSlot) {
	if l.m != nil {
		l.m[sl.addr] = sl
		return
	}
	if l.list == nil {
		l.list = l.buf[:0]
	}
	l.list = append(l.list, sl) // addresses are distinct: the caller allocated or took a freed slot
	if len(l.list) > maxListedSlots {
		l.m = make(map[uint64]memSlot, 2*len(l.list))
		for _, x := range l.list {
			l.m[x.addr] = x
		}
		l.list = nil
	}
}

func (l *liveSlots) del(addr uint64) {
	if l.m != nil {
		delete(l.m, addr)
		return
	}
	for i, sl := range l.list {
		if sl.addr == addr {
			l.list = append(l.list[:i], l.list[i+1:]...)
			return
		}
	}
}

// CommCreate is ccoCommCreate: rank's communicator of nRanks ranks. The
// emulated node is one LSA domain, so nRanks may not exceed its GPUs and LSA
// rank l runs on GPU l (MORI assumes the same). vmmSize is rounded up to 4
// GiB; 0 means the node's whole per-GPU slice.
func CommCreate(h *Host, uid UniqueId, nRanks, rank int, vmmSize uint64) (*Comm, error) {
	return commCreate(h, uid, nRanks, rank, rank, vmmSize, "ccoCommCreate")
}

// CommCreateOn is ncclCommInitRank's CommCreate: the rank runs on GPU gpu,
// the device current at the call, which no other live rank of the comm
// runs on (NCCL refuses a duplicate GPU). A comm whose ranks are not on
// GPUs 0..nRanks-1 in rank order (two comms on disjoint halves of the
// node, a split) serves host collectives and memory; its windows and dev
// comms are refused (RanksOnOwnGPUs), since an LSA window's peer pointers
// are GPU slices in LSA rank order.
func CommCreateOn(h *Host, uid UniqueId, nRanks, rank, gpu int, vmmSize uint64) (*Comm, error) {
	return commCreate(h, uid, nRanks, rank, gpu, vmmSize, "ncclCommInitRank")
}

func commCreate(h *Host, uid UniqueId, nRanks, rank, gpu int, vmmSize uint64, call string) (*Comm, error) {
	if h == nil {
		return nil, fmt.Errorf("%s: nil host", call)
	}
	gpus := h.dev.GPUs()
	switch {
	case nRanks < 1:
		return nil, fmt.Errorf("%s: nRanks %d: need at least 1", call, nRanks)
	case nRanks > gpus:
		return nil, fmt.Errorf("%s: nRanks %d exceeds the node's %d GPUs: ccoSdma is intra-node (LSA) only, multi-node comms are not emulated", call, nRanks, gpus)
	case rank < 0 || rank >= nRanks:
		return nil, fmt.Errorf("%s: rank %d outside [0, %d)", call, rank, nRanks)
	case gpu < 0 || gpu >= gpus:
		return nil, fmt.Errorf("%s: rank %d's device %d is not one of the node's %d GPUs", call, rank, gpu, gpus)
	case uid == 0 || uint64(uid) > h.nextID:
		return nil, fmt.Errorf("%s: unique id %d was not made by GetUniqueId on this host", call, uid)
	}
	stride := h.dev.Stride()
	per := stride
	if vmmSize != 0 {
		per = (vmmSize + (4<<30 - 1)) &^ (4<<30 - 1)
		if per < vmmSize || per > stride {
			return nil, fmt.Errorf("%s: vmmSize %d B (%d B rounded to 4 GiB) exceeds the emulated node's %d B per-GPU slice (engine.Config.Stride)", call, vmmSize, per, stride)
		}
	}
	w := h.worlds[uid]
	if w == nil {
		w = &world{nRanks: nRanks, comms: make([]*Comm, nRanks)}
		h.worlds[uid] = w
	}
	if w.nRanks != nRanks {
		return nil, fmt.Errorf("%s: rank %d says nRanks %d, but unique id %d was created with %d", call, rank, nRanks, uid, w.nRanks)
	}
	if w.comms[rank] != nil {
		return nil, fmt.Errorf("%s: rank %d of unique id %d already has a comm", call, rank, uid)
	}
	for _, o := range w.comms {
		if o != nil && o.GPU == gpu {
			return nil, fmt.Errorf("%s: rank %d and rank %d of unique id %d both run on GPU %d: a comm's ranks are on distinct GPUs (cudaSetDevice before the call; NCCL says \"Duplicate GPU detected\")", call, rank, o.Rank, uid, gpu)
		}
	}
	c := &Comm{h: h, w: w, Rank: rank, NRanks: nRanks, LsaRank: rank, LsaSize: nRanks, PerRankSize: per, GPU: gpu,
		sdmaEnabled: Truthy(h.env["MORI_ENABLE_SDMA"]), gen: -1}
	w.comms[rank] = c
	return c, nil
}

// RanksOnOwnGPUs says whether every live rank of c's comm runs on the GPU
// of its own rank number (CommCreate's ranks always do): LSA windows and
// dev comms address peer p at GPU p's slice.
func (c *Comm) RanksOnOwnGPUs() bool {
	for _, o := range c.w.comms {
		if o != nil && o.GPU != o.Rank {
			return false
		}
	}
	return c.GPU == c.Rank
}

// lsaRefused is the error of a device-side call on a comm whose ranks are
// not on their own GPUs.
func (c *Comm) lsaRefused(call string) error {
	var on []string
	for _, o := range c.w.comms {
		if o != nil {
			on = append(on, fmt.Sprintf("rank %d on GPU %d", o.Rank, o.GPU))
		}
	}
	return fmt.Errorf("%s (rank %d): this comm's ranks are not on GPUs 0..%d in rank order (%s): emud emulates its host collectives and memory, but not LSA windows or dev comms on it, whose peer pointers are GPU slices in rank order",
		call, c.Rank, c.NRanks-1, strings.Join(on, ", "))
}

// CommCreateAll creates the comms of every rank of a new job, as the ranks'
// processes would each call CommCreate.
func CommCreateAll(h *Host, nRanks int, vmmSize uint64) ([]*Comm, error) {
	uid := GetUniqueId(h)
	cs := make([]*Comm, nRanks)
	for r := range cs {
		c, err := CommCreate(h, uid, nRanks, r, vmmSize)
		if err != nil {
			return nil, err
		}
		cs[r] = c
	}
	return cs, nil
}

// MemAlloc is ccoMemAlloc: bytes of this rank's slice. Every rank must make
// the same sequence of allocations so that windows are symmetric, as with
// MORI's per-rank slots at one offset. 0 bytes gives address 0 and no
// error, as MORI's gives nullptr. A freed slot of the same rounded size is
// reused, the most recently freed first, with the bytes it holds (MORI's
// allocator keeps a free list too).
func MemAlloc(c *Comm, bytes uint64) (uint64, error) { return memAlloc(c, bytes, false) }

// memSlot is one MemAlloc'd slot.
type memSlot struct {
	addr, size uint64 // size rounded up to 4 KiB
	phantom    bool
}

// MemFree is ccoMemFree: the slot at addr, which MemAlloc returned and
// nothing freed since, goes back for reuse. Address 0 is no slot and no
// error. Windows registered on it are not deregistered.
func MemFree(c *Comm, addr uint64) error {
	if addr == 0 {
		return nil
	}
	sl, ok := c.live.get(addr)
	if !ok {
		return fmt.Errorf("ccoMemFree (rank %d): %#x is not an allocation of this comm's ccoMemAlloc that is still live (freed twice, or another allocator's pointer?)", c.Rank, addr)
	}
	c.live.del(addr)
	c.freed = append(c.freed, sl)
	return nil
}

// MemAllocPhantom is MemAlloc without backing bytes, for timing-only runs at
// scale (transfers of gigabytes): copies to and from it take their time but
// move nothing, and loads read 0. The device must support it (the emulator
// does); keep flags and signals in MemAlloc'd memory.
func MemAllocPhantom(c *Comm, bytes uint64) (uint64, error) { return memAlloc(c, bytes, true) }

func memAlloc(c *Comm, bytes uint64, phantom bool) (uint64, error) {
	if bytes == 0 {
		return 0, nil
	}
	rounded := (bytes + 4095) &^ 4095
	if rounded < bytes {
		return 0, fmt.Errorf("ccoMemAlloc (rank %d): %d B does not fit in the rank's %d B VMM", c.Rank, bytes, c.PerRankSize)
	}
	for i := len(c.freed) - 1; i >= 0; i-- {
		if sl := c.freed[i]; sl.size == rounded && sl.phantom == phantom {
			c.freed = append(c.freed[:i], c.freed[i+1:]...)
			c.live.put(sl)
			return sl.addr, nil
		}
	}
	if c.used+rounded > c.PerRankSize {
		return 0, fmt.Errorf("ccoMemAlloc (rank %d): %d B does not fit: %d of %d B of the rank's VMM already used", c.Rank, bytes, c.used, c.PerRankSize)
	}
	mem := c.h.dev.Memory()
	name := c.h.name("cco rank ", c.Rank, " buf ", len(c.allocs))
	var addr uint64
	var err error
	if phantom {
		addr, err = mem.AllocPhantom(c.GPU, bytes, name)
	} else {
		addr, err = mem.Alloc(c.GPU, bytes, name)
	}
	if err != nil {
		return 0, fmt.Errorf("ccoMemAlloc (rank %d): %w", c.Rank, err)
	}
	c.used += rounded
	if c.allocs == nil {
		c.allocs = c.allocsBuf[:0]
	}
	c.allocs = append(c.allocs, addr-mem.SliceBase(c.GPU))
	c.live.put(memSlot{addr: addr, size: rounded, phantom: phantom})
	return addr, nil
}

// Window is a registered window as device code sees it (ccoWindowDevice):
// the LSA pointer of (window, peer, offset) is
// Base + ((peer × Stride4G) << 32) + offset.
type Window struct {
	Base     uint64 // flatBase + slot offset
	Stride4G uint64 // perRankSize >> 32
	LsaRank  int    // the owner's LSA rank
	Bytes    uint64
	slot     uint64 // the ccoMemAlloc slot's size when buf starts one, else 0
}

// LsaPtr is ccoGetLsaPeerPtr.
func (w Window) LsaPtr(peer int, off uint64) uint64 {
	return w.Base + (uint64(peer)*w.Stride4G)<<32 + off
}

// LocalPtr is ccoGetLocalPtr.
func (w Window) LocalPtr(off uint64) uint64 { return w.LsaPtr(w.LsaRank, off) }

// WindowRegister is ccoWindowRegister: it makes buf visible to every LSA
// peer at the same slot offset. Registration is collective, and it checks
// what MORI's exchange depends on, no more: the k-th window of every rank
// must be at the same slot offset (MORI maps each peer's allocation at its
// own slot offset, and its handle exchange meets at a name made of it),
// and, where buf is a ccoMemAlloc slot, the slots must be the same size
// (MORI maps a peer's handle with its own slot's size; a smaller one fails
// the map). The byte count given here is not exchanged, so ranks may
// register different counts. A mismatch is an error naming both ranks.
func WindowRegister(c *Comm, buf, bytes uint64) (Window, error) {
	if !c.RanksOnOwnGPUs() {
		return Window{}, c.lsaRefused("ccoWindowRegister")
	}
	mem := c.h.dev.Memory()
	base := mem.SliceBase(c.LsaRank)
	if buf < base || bytes == 0 {
		return Window{}, fmt.Errorf("ccoWindowRegister (rank %d): buffer %#x (%d B) is not in this rank's slice", c.Rank, buf, bytes)
	}
	if err := mem.Check("ccoWindowRegister", buf, bytes); err != nil {
		return Window{}, fmt.Errorf("ccoWindowRegister (rank %d): %w", c.Rank, err)
	}
	off := buf - base
	w := Window{Base: mem.SliceBase(0) + off, Stride4G: c.h.dev.Stride() >> 32, LsaRank: c.LsaRank, Bytes: bytes,
		slot: c.liveSize(buf)}
	k := len(c.windows)
	for _, o := range c.w.comms {
		if o == nil || o == c || len(o.windows) <= k {
			continue
		}
		ow := o.windows[k]
		if ow.Base != w.Base || (ow.slot != 0 && w.slot != 0 && ow.slot != w.slot) {
			return Window{}, fmt.Errorf("ccoWindowRegister: window %d of rank %d is at slot offset %#x (a %d B slot) but rank %d registered it at %#x (a %d B slot): ranks must ccoMemAlloc and register alike",
				k, c.Rank, off, w.slot, o.Rank, ow.Base-mem.SliceBase(0), ow.slot)
		}
	}
	if c.windows == nil {
		c.windows = c.windowsBuf[:0]
	}
	c.windows = append(c.windows, w)
	return w, nil
}

// GDA connection types (SDMA needs none).
const (
	GdaConnectionNone = 0
)

// Requirements magic and version (ccoDevCommRequirements).
const (
	DevCommMagic   = 0x0CC0AAAA
	DevCommVersion = 1
)

// DevCommRequirements is ccoDevCommRequirements. Start from
// DevCommRequirementsInitializer.
type DevCommRequirements struct {
	Magic             uint32
	Version           uint32
	GdaConnectionType int
	GdaContextCount   int
	GdaSignalCount    int
	GdaCounterCount   int
	// SdmaQueueCount: 0 = MORI_SDMA_NUM_CHANNELS, else 2; above 8 is
	// clamped with a warning.
	SdmaQueueCount int
	// Debug turns on the misuse checks for this dev comm (what
	// -DMORI_CCO_SDMA_DEBUG compiles in). MORI_CCO_SDMA_DEBUG in the
	// environment turns them on for every dev comm.
	Debug bool
	// Race turns on the run's happens-before race detector (package race):
	// the run then ends with a *race.Error naming every unordered pair of
	// conflicting accesses. MORI_CCO_SDMA_RACE in the environment turns it
	// on too. It is an emulator extra; MORI has no such field.
	Race bool
	// PerCommQueues makes the comm own its queues, as MORI's cco does
	// (ccoDevCommCreate creates them, ccoCommDestroy frees them): a comm
	// created while another comm of its GPU is alive gets hardware queues
	// of its own on the same engines (lifecycle.go). Off, every comm of
	// the process shares the queues of a GPU pair. An emulator extra.
	PerCommQueues bool
	// ConnectQueues creates every queue toward every LSA peer in
	// DevCommCreate, as MORI's ccoDevCommCreate does (ccoSdmaSetupCommQueues
	// → anvil connect), instead of on first use. A creation the engine
	// refuses (its cap full, its engine fused off) makes DevCommCreate
	// return the dev comm together with a *QueueCreateError; a program
	// that goes on with it anyway finds those queues missing: MORI leaves
	// their device handles unset, and emud posts nothing on them (debug
	// mode stops the lane naming the failed creation), so what waits for
	// their signals hangs, and the hang report names the failed creation
	// as the cause (connect.go).
	ConnectQueues bool
	// LsaBarrierCount is reqs.lsaBarrierCount: the LSA barrier slots of
	// the dev comm (barrier.go).
	LsaBarrierCount int
	// BarrierCount is reqs.barrierCount: the slots of MORI's hybrid
	// barrier, LSA then rail; the LSA half is DevComm.HybridLsaBarrier,
	// and the rail half, like RailGdaBarrierCount's barriers, crosses
	// nodes, so on emud's one node it is disabled (nBarriers 0), as MORI
	// collapses it there.
	BarrierCount int
	// RailGdaBarrierCount is reqs.railGdaBarrierCount (see BarrierCount).
	RailGdaBarrierCount int
}

// DevCommRequirementsInitializer is CCO_DEV_COMM_REQUIREMENTS_INITIALIZER
// with GDA off, as SDMA-only users set it.
func DevCommRequirementsInitializer() DevCommRequirements {
	return DevCommRequirements{Magic: DevCommMagic, Version: DevCommVersion, GdaConnectionType: GdaConnectionNone}
}

// SdmaDevComm is the sdma part of a dev comm.
type SdmaDevComm struct {
	SdmaNumQueue int // 0: SDMA unavailable, every call is a no-op
}

// DevComm is ccoDevComm, passed to kernels by value.
type DevComm struct {
	Rank, NRanks     int
	LsaRank, LsaSize int
	Sdma             SdmaDevComm
	LsaBarrier       LsaBarrierHandle
	HybridLsaBarrier LsaBarrierHandle
	Debug            bool
	st               *devState
}

// devState is what the device pointers of a dev comm lead to.
type devState struct {
	c      *Comm
	idx    int // k-th dev comm of the comm
	n      int
	debug  bool
	pool   signal.Pool
	queues []*Queue // [peer × n + q], made on first use
	// queuesBuf holds queues for up to 16 (peer, q) pairs: a 4 KiB
	// all-to-all's 4 ranks × 2 queues fit.
	queuesBuf [16]*Queue
	arch      model.Arch
	// barrier and hybrid are the LSA barrier states (barrier.go).
	barrier, hybrid LsaBarrierHandle
	// warnedOff: the no-SDMA warning was issued (sdma.go).
	warnedOff bool
	// failed are the queues whose creation DevCommCreate's ConnectQueues
	// saw refused, by [peer × n + q] (connect.go); nil: none.
	failed map[int]*failedQueue
	// arrivals are the timed LSA barrier signals into this rank's
	// inboxes, by word: the two newest (barrier.go noteArrival).
	arrivals map[uint64][2]arrival
	// destroyed says DevCommDestroy ran.
	destroyed bool
}

// DevCommCreate is ccoDevCommCreate: it fixes the comm's queue count (the
// first call wins), allocates the zeroed signal pool of lsaSize × n slots on
// this rank's GPU, and returns the dev comm. Every rank must create its k-th
// dev comm before kernels signal across it.
func DevCommCreate(c *Comm, reqs *DevCommRequirements) (DevComm, error) {
	if reqs == nil {
		return DevComm{}, fmt.Errorf("ccoDevCommCreate (rank %d): nil requirements", c.Rank)
	}
	if !c.RanksOnOwnGPUs() {
		return DevComm{}, c.lsaRefused("ccoDevCommCreate")
	}
	if reqs.Magic != DevCommMagic {
		return DevComm{}, fmt.Errorf("ccoDevCommCreate (rank %d): requirements magic %#x, want %#x: start from DevCommRequirementsInitializer", c.Rank, reqs.Magic, DevCommMagic)
	}
	if reqs.Version != DevCommVersion {
		return DevComm{}, fmt.Errorf("ccoDevCommCreate (rank %d): requirements version %d, this emulator speaks %d", c.Rank, reqs.Version, DevCommVersion)
	}
	if reqs.GdaConnectionType != GdaConnectionNone || reqs.GdaContextCount != 0 || reqs.GdaSignalCount != 0 || reqs.GdaCounterCount != 0 {
		return DevComm{}, fmt.Errorf("ccoDevCommCreate (rank %d): ccoGda is not emulated: set gdaConnectionType = NONE and the GDA context/signal/counter counts to 0", c.Rank)
	}
	if reqs.SdmaQueueCount < 0 {
		return DevComm{}, fmt.Errorf("ccoDevCommCreate (rank %d): sdmaQueueCount %d is negative", c.Rank, reqs.SdmaQueueCount)
	}
	n := 0
	if c.sdmaEnabled {
		n = c.h.resolveQueues(c, reqs.SdmaQueueCount)
	}
	if n > c.h.dev.QueuesPerPeer() {
		return DevComm{}, fmt.Errorf("ccoDevCommCreate (rank %d): %d queues per peer requested but the device has %d", c.Rank, n, c.h.dev.QueuesPerPeer())
	}
	var st *devState
	if len(c.devs) == 0 {
		st = &c.dev0 // the first lives in the comm
	} else {
		st = new(devState)
	}
	*st = devState{c: c, idx: len(c.devs), n: n, arch: model.ArchOf(c.h.dev.Model()),
		debug: reqs.Debug || Truthy(c.h.env["MORI_CCO_SDMA_DEBUG"])}
	if reqs.PerCommQueues {
		c.h.life.own(c)
	}
	if reqs.Race || Truthy(c.h.env["MORI_CCO_SDMA_RACE"]) {
		c.h.dev.Sim().EnableRace()
	} else if st.debug {
		c.h.dev.Sim().EnableLifecycleChecks() // debug mode's signal-lifecycle checks
	}
	if n > 0 {
		mem := c.h.dev.Memory()
		size := uint64(c.LsaSize*n) * signal.SlotBytes
		base, err := mem.Alloc(c.LsaRank, size, c.h.name("cco rank ", c.Rank, " signal pool ", st.idx))
		if err != nil {
			return DevComm{}, fmt.Errorf("ccoDevCommCreate (rank %d): signal pool: %w", c.Rank, err)
		}
		if st.pool, err = signal.NewPool(c.LsaRank, base, c.LsaSize, n); err != nil {
			return DevComm{}, fmt.Errorf("ccoDevCommCreate (rank %d): %w", c.Rank, err)
		}
		if lg := writeLog(mem); lg != nil {
			for a := base; a < base+size; a += signal.SlotBytes {
				lg.Track(a, int(signal.SlotBytes)) // each slot's last writes, for hang reports
			}
		}
		if k := c.LsaSize * n; k <= len(st.queuesBuf) {
			st.queuesBuf = [len(st.queuesBuf)]*Queue{}
			st.queues = st.queuesBuf[:k]
		} else {
			st.queues = make([]*Queue, k)
		}
	}
	for _, f := range []struct {
		name string
		n    int
	}{{"lsaBarrierCount", reqs.LsaBarrierCount}, {"barrierCount", reqs.BarrierCount}, {"railGdaBarrierCount", reqs.RailGdaBarrierCount}} {
		if f.n < 0 {
			return DevComm{}, fmt.Errorf("ccoDevCommCreate (rank %d): %s %d is negative", c.Rank, f.name, f.n)
		}
	}
	if err := st.allocBarrier(reqs.LsaBarrierCount, reqs.BarrierCount); err != nil {
		return DevComm{}, fmt.Errorf("ccoDevCommCreate (rank %d): %w", c.Rank, err)
	}
	if c.devs == nil {
		c.devs = c.devsBuf[:0]
	}
	c.devs = append(c.devs, st)
	dc := DevComm{Rank: c.Rank, NRanks: c.NRanks, LsaRank: c.LsaRank, LsaSize: c.LsaSize,
		Sdma: SdmaDevComm{SdmaNumQueue: n}, LsaBarrier: st.barrier, HybridLsaBarrier: st.hybrid, Debug: st.debug, st: st}
	if reqs.ConnectQueues && n > 0 {
		if err := st.connect(); err != nil {
			return dc, err
		}
	}
	return dc, nil
}

// DevCommDestroy is ccoDevCommDestroy: the dev comm's signal slots leave
// the memory's write log (sim.WriteLog.Untrack), which every NotifyAll
// reads whole, so a program that makes and destroys a dev comm every
// round (MORI's test_lsa_memcheck) does not slow down round after round.
// A second destroy is an error naming the dev comm. Partial: the pool's
// and the barrier states' memory is not given back for a later dev comm
// (emud's memory is never unmapped, capi/doc.go "Memory"); the queues are
// the comm's, as in MORI.
func DevCommDestroy(c *Comm, d *DevComm) error {
	if d == nil || d.st == nil || d.st.c != c {
		return fmt.Errorf("ccoDevCommDestroy (rank %d): not a dev comm this comm's ccoDevCommCreate filled", c.Rank)
	}
	st := d.st
	if st.destroyed {
		return fmt.Errorf("ccoDevCommDestroy (rank %d): dev comm %d was destroyed already", c.Rank, st.idx)
	}
	st.destroyed = true
	if st.pool.Base != 0 {
		writeLog(c.h.dev.Memory()).Untrack(st.pool.Base, st.pool.Base+st.pool.Bytes())
	}
	return nil
}

// resolveQueues applies MORI's queue-count rules (docs/cco-semantics.md §1.2).
func (h *Host) resolveQueues(c *Comm, req int) int {
	want := req
	if want > MaxSdmaQueues {
		h.warn("ccoDevCommCreate (rank %d): sdmaQueueCount %d exceeds hardware max %d; clamped to %d", c.Rank, req, MaxSdmaQueues, MaxSdmaQueues)
		want = MaxSdmaQueues
	}
	if c.fixed {
		if want > 0 && want != c.numQueue {
			h.warn("ccoDevCommCreate (rank %d): sdmaQueueCount %d ignored; comm already has %d", c.Rank, want, c.numQueue)
		}
		return c.numQueue
	}
	if want == 0 {
		want = DefaultSdmaQueues
		if v, err := strconv.Atoi(strings.TrimSpace(h.env["MORI_SDMA_NUM_CHANNELS"])); err == nil && v >= 1 {
			want = min(v, MaxSdmaQueues) // env values above 8 are capped silently
		}
	}
	c.fixed, c.numQueue = true, want
	return want
}

// SignalPool returns the dev comm's signal pool on its rank's GPU (zero
// value when SDMA is off).
func (d DevComm) SignalPool() signal.Pool {
	if d.st == nil {
		return signal.Pool{}
	}
	return d.st.pool
}

// Signal reads this rank's slot signalBuf[src × n + q] from the host.
func (d DevComm) Signal(src, q int) (uint64, error) {
	if d.st == nil || d.st.n == 0 {
		return 0, errors.New("cco: dev comm has no signal pool (SDMA off)")
	}
	addr, err := d.st.pool.Slot(src, q)
	if err != nil {
		return 0, err
	}
	return d.st.c.h.dev.Memory().Load64(addr)
}

// peerPool is the signal pool of LSA peer p for the same dev comm index.
func (st *devState) peerPool(p int) (signal.Pool, error) {
	o := st.c.w.comms[p]
	if o == nil || len(o.devs) <= st.idx || o.devs[st.idx].n == 0 {
		return signal.Pool{}, fmt.Errorf("peer %d has not created dev comm #%d (ccoDevCommCreate is collective: every rank creates it before kernels signal)", p, st.idx)
	}
	return o.devs[st.idx].pool, nil
}

// existing returns the queue toward peer p with id q if anyone has created
// it (on this host, by any comm), else nil.
func (st *devState) existing(p, q int) *Queue {
	i := p*st.n + q
	if st.queues[i] == nil {
		if st.c.gen > 0 || st.c.destroyed {
			return nil // a queue of its own is made by queue(), not found
		}
		qu := st.c.h.dev.LookupQueue(st.c.LsaRank, p, q)
		if qu == nil {
			return nil
		}
		st.queues[i] = qu
		st.c.h.life.ref(qu)
		st.c.h.diag.qd(qu)
	}
	return st.queues[i]
}

// queue returns the queue toward peer p with id q, creating it on first use.
func (st *devState) queue(p, q int) (*Queue, error) {
	i := p*st.n + q
	if st.queues[i] == nil {
		qu, err := st.c.h.life.make(st.c, p, q)
		if err != nil {
			return nil, err
		}
		st.queues[i] = qu
		st.c.h.life.ref(qu)
		st.c.h.diag.qd(qu)
	}
	return st.queues[i], nil
}

// WindowAllocAll allocates bytes on every comm (MemAlloc) and registers
// each buffer as a window, in rank order, so the registration is
// symmetric as WindowRegister requires. It returns the windows by rank:
// the host-side loop every multi-rank job writes.
func WindowAllocAll(comms []*Comm, bytes uint64) ([]Window, error) {
	ws := make([]Window, len(comms))
	for r, c := range comms {
		buf, err := MemAlloc(c, bytes)
		if err != nil {
			return nil, err
		}
		if ws[r], err = WindowRegister(c, buf, bytes); err != nil {
			return nil, err
		}
	}
	return ws, nil
}

// DevCommCreateAll creates a dev comm on every comm with the same
// requirements, in rank order, and returns them by rank.
func DevCommCreateAll(comms []*Comm, reqs *DevCommRequirements) ([]DevComm, error) {
	dcs := make([]DevComm, len(comms))
	for r, c := range comms {
		dc, err := DevCommCreate(c, reqs)
		if err != nil {
			return nil, fmt.Errorf("rank %d: %w", r, err)
		}
		dcs[r] = dc
	}
	return dcs, nil
}

// name is a region's name, a+i+b+j, interned by the device's simulator
// (sim.Sim.Intern): an explore worker's seeds name their regions alike,
// and formatting them was two allocations a region.
func (h *Host) name(a string, i int, b string, j int) string {
	var buf [64]byte
	n := append(buf[:0], a...)
	n = strconv.AppendInt(n, int64(i), 10)
	n = append(n, b...)
	n = strconv.AppendInt(n, int64(j), 10)
	return h.dev.Sim().Intern(n)
}

// liveSize is the size of the live slot at addr, 0 if none starts there.
func (c *Comm) liveSize(addr uint64) uint64 {
	sl, _ := c.live.get(addr)
	return sl.size
}
