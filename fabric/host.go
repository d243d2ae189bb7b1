package fabric

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"sort"
	"strings"

	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/hostmem"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/model"
	"github.com/emud-dev/emud/nic"
	"github.com/emud-dev/emud/race"
	"github.com/emud-dev/emud/sim"
)

// CftCap is ncclCftCap_t, a bit of DevCommRequirements.CftCaps.
type CftCap int

const (
	CapCftNone     CftCap = 0 // NCCL_CFT_NONE
	CapCft         CftCap = 1 // NCCL_CFT: unicast logical endpoints
	CapCftMultimem CftCap = 2 // NCCL_CFT_MULTIMEM: multicast LEs and multimem barriers
)

func (c CftCap) String() string {
	if c == CapCftNone {
		return "NCCL_CFT_NONE"
	}
	var parts []string
	if c&CapCft != 0 {
		parts = append(parts, "NCCL_CFT")
	}
	if c&CapCftMultimem != 0 {
		parts = append(parts, "NCCL_CFT_MULTIMEM")
	}
	if rest := c &^ (CapCft | CapCftMultimem); rest != 0 {
		parts = append(parts, fmt.Sprintf("%#x", int(rest)))
	}
	return strings.Join(parts, "|")
}

// hostCftMode values of ncclConfig_t (spec §1.3).
const (
	HostCftModeUndef    = math.MinInt32 // NCCL_CONFIG_UNDEF_INT: default, LEs created lazily
	HostCftModeEnable   = 1             // create LEs at comm init; fail if CFT is unsupported
	HostCftModeDisable  = 2             // never create LEs eagerly
	HostCftModeFallback = 3             // create LEs at comm init when supported, else go on without
)

// CommConfig is the part of ncclConfig_t CFT reads.
type CommConfig struct {
	HostCftMode int // 0 is taken as HostCftModeUndef
}

// Config sets up an emulated system.
type Config struct {
	Topology Topology
	// Model gives the fabric's timing; nil means DefaultModel().
	Model *Model
	// Debug is NCCL_DEVICE_CFT_ENABLE_DEBUG: a flush or flushSmem with
	// unsubmitted operations traps at once (release mode waits for them and
	// the run ends in a hang report), and the fence checker tracks which
	// proxy wrote every byte.
	Debug bool
	// Faults injects fabric errors and lost barrier arrivals.
	Faults FaultPlan
	// MemBytes caps each rank's symmetric memory (windows and resource
	// buffers); 0 means 256 MiB. Memory is allocated as windows are made.
	MemBytes uint64
	// Phantom gives windows registered with CommWindowRegister no bytes,
	// for timing-only runs at scale: puts, gets and reductions into them
	// take their time and count as usual but move nothing, host reads and
	// generic loads see zeros, stores are dropped. Dev comm resource
	// windows (barrier inboxes) stay backed, so barriers work. It cannot
	// be combined with Debug: the fence checker tracks every byte.
	Phantom bool
	// Env is the environment the process sees; NCCL_CFT_ENABLE=0 turns CFT
	// off. nil reads the real environment.
	Env map[string]string
	// Race turns on the run's happens-before race detector (package race;
	// see race.go for the fabric's edges): the run then ends with a
	// *race.Error naming every unordered pair of conflicting accesses.
	Race bool
	// Nic is the network model of GIN dev comms (package nic); nil is
	// nic.DefaultModel().
	Nic *nic.Model
	// NicRailsOnly makes the network rail-only: NIC i of a node reaches
	// only NIC i of the other nodes (the same LSA rank), with no
	// cross-rail or intra-node hairpin path; a packet to another rail is
	// lost (nic.Network.SetUnreachable).
	NicRailsOnly bool
	// Sdma is the timing model (and, by model.ArchOf, the architecture)
	// of the SDMA engines GIN uses with NCCL_GIN_TYPE=7 (gin_sdma.go); nil
	// is model.Default().
	Sdma model.Model
	// SdmaInject plants engine faults (engine.InjectPlan: dead queues,
	// stalls, lost signals) in every node's SDMA engines under
	// NCCL_GIN_TYPE=7; queue ids are GPU indices within the node.
	SdmaInject *engine.InjectPlan
}

// DefaultMemBytes is the per-rank memory cap when Config.MemBytes is 0.
const DefaultMemBytes = 256 << 20

// System is the emulated CFT fabric with every rank's device memory: the
// state that outlives kernels (windows, LEs, barrier epochs and inboxes).
type System struct {
	s       *sim.Sim
	topo    Topology
	model   Model
	ports   *Ports // the ranks' fabric ports (ports.go)
	debug   bool
	memCap  uint64
	cftOn   bool
	phantom bool

	ranks   []*rankState
	comms   []*Comm
	faults  *faultState
	bufs    bufPool // operations' data snapshots, reused (engine.go)
	fops    []*fop  // finished puts and reds, reused (engine.go)
	fopSlab []fop   // fresh fops not yet handed out
	mapped  *mappedSet
	closed  bool
	diag    *diagnosis
	chk     *checker
	mbars   map[smemKey]*mbar
	bars    map[barKey]*barState
	teams   map[teamKey][]int // member lists, shared by every operation to the team (teamMembers)
	raceEP  []*race.Thread    // each rank's fabric endpoint in the race detector (race.go)

	nicModel  *nic.Model  // Config.Nic
	railsOnly bool        // Config.NicRailsOnly
	ginType   int         // NCCL_GIN_TYPE (0: unset)
	sdmaModel model.Model // Config.Sdma
	sdmaInj   *engine.InjectPlan
	gin       *ginSys             // the network, from the first GIN dev comm (gin.go)
	aborts    []*abortState       // per rank, made on first use (abort.go)
	counting  map[countKey]uint64 // counted bytes issued, not yet delivered (counted.go)
	// countedStatus is the status of the last waitCounted on a counter,
	// which thread 0 sets and the coop's threads return
	countedStatus map[countKey]WaitStatus
	countedWaits  map[*kernel.Wave]*countedWait // for the hang report
}

// NewSystem builds the emulated system on s. All ranks live in one Go
// process; rank r's device memory is a byte slice owned by the System.
func NewSystem(s *sim.Sim, cfg Config) (*System, error) {
	if s == nil {
		return nil, fmt.Errorf("fabric: NewSystem with a nil simulator")
	}
	topo, err := cfg.Topology.Normalize()
	if err != nil {
		return nil, err
	}
	m := DefaultModel()
	if cfg.Model != nil {
		m = *cfg.Model
	}
	if err := m.check(); err != nil {
		return nil, err
	}
	if err := cfg.Faults.check(topo); err != nil {
		return nil, err
	}
	if cfg.Nic != nil {
		if err := cfg.Nic.Check(); err != nil {
			return nil, err
		}
	}
	if cfg.Phantom && cfg.Debug {
		return nil, fmt.Errorf("fabric: Phantom with Debug: the fence checker tracks every byte, phantom windows have none")
	}
	if cfg.Race {
		s.EnableRace()
	}
	env := cfg.Env
	if env == nil {
		env = map[string]string{}
		for _, k := range []string{"NCCL_CFT_ENABLE", "NCCL_GIN_TYPE"} {
			if v, ok := os.LookupEnv(k); ok {
				env[k] = v
			}
		}
	}
	ginType, err := ginTypeOf(env)
	if err != nil {
		return nil, err
	}
	sys := &System{s: s, topo: topo, model: m, debug: cfg.Debug, memCap: cfg.MemBytes, cftOn: true, phantom: cfg.Phantom,
		mbars: map[smemKey]*mbar{}, bars: map[barKey]*barState{}, nicModel: cfg.Nic, railsOnly: cfg.NicRailsOnly, ginType: ginType, sdmaModel: cfg.Sdma, sdmaInj: cfg.SdmaInject}
	if v, ok := env["NCCL_CFT_ENABLE"]; ok && strings.TrimSpace(v) == "0" {
		sys.cftOn = false
	}
	if sys.memCap == 0 {
		sys.memCap = DefaultMemBytes
	}
	sys.mapped = &mappedSet{}
	runtime.AddCleanup(sys, (*mappedSet).release, sys.mapped)
	for r := 0; r < topo.NRanks; r++ {
		sys.ranks = append(sys.ranks, &rankState{rank: r, wl: s.NewWatchList(fmt.Sprintf("fabric rank %d memory", r))})
	}
	if sys.ports, err = NewPorts(m, topo.NRanks); err != nil {
		return nil, err
	}
	sys.faults = newFaultState(sys, cfg.Faults)
	sys.diag = newDiagnosis(sys)
	if cfg.Debug {
		sys.chk = newChecker(sys)
	}
	return sys, nil
}

// Sim returns the simulator the system runs on.
func (sys *System) Sim() *sim.Sim { return sys.s }

// Topology returns the normalized topology.
func (sys *System) Topology() Topology { return sys.topo }

// Model returns the timing model.
func (sys *System) Model() Model { return sys.model }

// Phantom reports whether windows have no bytes (Config.Phantom).
func (sys *System) Phantom() bool { return sys.phantom }

// cftSupported: every rank has CFT and NCCL_CFT_ENABLE is not 0.
func (sys *System) cftSupported() bool { return sys.cftOn && len(sys.topo.NoCft) == 0 }

func (sys *System) mcSupported() bool { return sys.cftSupported() && !sys.topo.NoMulticast }

// rankState is one rank's device: its symmetric memory and the windows
// bound to its LEs (its fabric ports are in System.ports).
type rankState struct {
	rank  int
	mem   []backing // allocations in address order
	wl    *sim.WatchList
	used  uint64
	bound []span // [off, off+n) ranges bound to this rank's LEs
	// counted are the bound windows registered with WinCftCounted: where
	// counted writes' counters may live.
	counted []span
	opSeq   int // user data ops issued, for FaultPlan.FailOps
}

// backing is one allocation of a rank's memory: its bytes, or none for a
// phantom window.
// offHeapMin is the size from which a rank's allocation is mapped outside
// the Go heap (package hostmem) instead of made on it: large windows do
// not swell the collector's heap goal, small ones cost no system call.
const offHeapMin = 1 << 20

// mappedSet is the System's mapped buffers, released by Close or, for a
// System nobody closed, by a cleanup when it becomes unreachable (the set
// is its own object so that the cleanup does not keep the System alive).
type mappedSet struct {
	bufs [][]byte
}

func (m *mappedSet) release() {
	for _, b := range m.bufs {
		_ = hostmem.Unmap(b) // a buffer Map returned, whole: cannot fail
	}
	m.bufs = nil
}

// Close releases the memory of every rank (the mapped part at once, the
// rest to the collector). Call it when the run and every read of its
// memory are over; host reads and writes after it fail. Closing twice is
// harmless.
func (sys *System) Close() {
	if sys.closed {
		return
	}
	sys.closed = true
	for _, r := range sys.ranks {
		r.mem = nil
	}
	sys.mapped.release()
}

type backing struct {
	off  uint64
	n    uint64
	data []byte // nil: phantom
}

type span struct {
	off, n uint64
	what   string
}

func (r *rankState) alloc(sys *System, bytes uint64, what string, phantom bool) (uint64, error) {
	off := (r.used + 4095) &^ 4095
	end := off + bytes
	if bytes == 0 || end < off || end > sys.memCap {
		return 0, fmt.Errorf("%d B for %s does not fit rank %d's %d B of memory (%d B used)", bytes, what, r.rank, sys.memCap, r.used)
	}
	b := backing{off: off, n: bytes}
	if !phantom {
		// GIN over SDMA maps allocations into an engine node, whose
		// regions are whole pages: give them the page-rounded capacity.
		size := bytes
		if sys.ginType == GinTypeAnvilSdma {
			size = (bytes + 4095) &^ 4095
		}
		if bytes >= offHeapMin {
			data, err := hostmem.Map(size)
			if err != nil {
				return 0, fmt.Errorf("%d B for %s on rank %d: %w", bytes, what, r.rank, err)
			}
			b.data = data[:bytes]
			sys.mapped.bufs = append(sys.mapped.bufs, data)
		} else {
			b.data = make([]byte, bytes, size)
		}
	}
	r.used = end
	r.mem = append(r.mem, b)
	return off, nil
}

// bytes returns the backing of [off, off+n): nil inside a phantom window.
// Callers have checked the range against a window or resource buffer, so
// a range outside every allocation is a bug in the fabric and panics (the
// simulator turns that into an error).
func (r *rankState) bytes(off, n uint64) []byte {
	i := sort.Search(len(r.mem), func(i int) bool { return r.mem[i].off > off }) - 1
	if i < 0 {
		panic(fmt.Sprintf("fabric: rank %d: [%#x, %#x) is outside its memory", r.rank, off, off+n))
	}
	b := r.mem[i]
	if b.data == nil {
		return nil
	}
	return b.data[off-b.off : off-b.off+n]
}

// Comm is one rank's host communicator (ncclComm_t).
type Comm struct {
	sys         *System
	Rank        int
	NRanks      int
	LsaRank     int
	LsaSize     int
	HostCftMode int

	les    bool // unicast LEs exist (eager or from a CFT dev comm)
	mcLe   bool // the multicast LE exists
	wins   []Window
	allocs []span // symmetric allocations in order, checked across ranks
	devs   int
	gins   []*ginRank // GIN dev comms in creation order
}

// CommInitAll creates every rank's communicator, as each rank's process
// would call ncclCommInitRankConfig with cfg. With HostCftModeEnable, LEs
// are created at once and a system without CFT fails; with Fallback they
// are created when CFT is supported.
func (sys *System) CommInitAll(cfg CommConfig) ([]*Comm, error) {
	const call = "ncclCommInitRankConfig"
	if sys.comms != nil {
		return nil, errf(InvalidUsage, call, "the emulated system already has its communicators (one world per System)")
	}
	mode := cfg.HostCftMode
	if mode == 0 {
		mode = HostCftModeUndef
	}
	switch mode {
	case HostCftModeUndef, HostCftModeEnable, HostCftModeDisable, HostCftModeFallback:
	default:
		return nil, errf(InvalidArgument, call, "hostCftMode %d: want NCCL_CONFIG_UNDEF_INT, 1 (enable), 2 (disable) or 3 (fallback)", mode)
	}
	eager := false
	switch mode {
	case HostCftModeEnable:
		if !sys.cftSupported() {
			return nil, errf(InvalidArgument, call, "hostCftMode enable, but CFT is not supported by every rank (%s)", sys.whyNoCft())
		}
		eager = true
	case HostCftModeFallback:
		eager = sys.cftSupported()
	}
	t := sys.topo
	for r := 0; r < t.NRanks; r++ {
		sys.comms = append(sys.comms, &Comm{sys: sys, Rank: r, NRanks: t.NRanks, LsaRank: t.LsaRank(r), LsaSize: t.LsaSize,
			HostCftMode: mode, les: eager, mcLe: eager && sys.mcSupported()})
	}
	return sys.comms, nil
}

func (sys *System) whyNoCft() string {
	if !sys.cftOn {
		return "NCCL_CFT_ENABLE=0"
	}
	return fmt.Sprintf("ranks %v have no CFT logical-endpoint support", sys.topo.NoCft)
}

// System returns the system the comm belongs to.
func (c *Comm) System() *System { return c.sys }

// cftSizes is computeCftSize / computeCftMcSize with the emulator's
// independent sizes: without CFT both are 1.
func (c *Comm) cftSizes() (cftRank, cftSize, mcSize int) {
	t := c.sys.topo
	if !c.sys.cftSupported() {
		return 0, 1, 1
	}
	ms := t.CftMcSize
	if t.NoMulticast {
		ms = 1
	}
	return t.CftRank(c.Rank), t.CftSize, ms
}

// symAlloc allocates bytes of this rank's memory; the k-th symmetric
// allocation of every rank must land at the same offset with the same size.
func (c *Comm) symAlloc(call string, bytes uint64, what string, phantom bool) (uint64, error) {
	r := c.sys.ranks[c.Rank]
	off, err := r.alloc(c.sys, bytes, what, phantom)
	if err != nil {
		return 0, errf(InvalidArgument, call, "%v", err)
	}
	k := len(c.allocs)
	c.allocs = append(c.allocs, span{off, bytes, what})
	for _, o := range c.sys.comms {
		if o != c && len(o.allocs) > k {
			if a := o.allocs[k]; a.off != off || a.n != bytes {
				return 0, errf(InvalidUsage, call, "symmetric allocation %d differs: rank %d has %s at offset %#x (%d B), rank %d %s at %#x (%d B); every rank must allocate the same sequence",
					k, o.Rank, a.what, a.off, a.n, c.Rank, what, off, bytes)
			}
		}
	}
	return off, nil
}

// WinFlags are the ncclCommWindowRegister flags (nccl.h).
type WinFlags uint32

const (
	WinDefault        WinFlags = 0x00
	WinCollSymmetric  WinFlags = 0x01 // lives in the symmetric big VA; bound to the CFT LEs
	WinStrictOrdering WinFlags = 0x02
	// WinCftCounted is NCCL_WIN_CFT_COUNTED (NCCL 2.32): the window may
	// hold the counters of counted writes (counted.go).
	WinCftCounted WinFlags = 0x08
)

// Window is a registered window as device code sees it (ncclWindow_t).
// Symmetric windows sit at the same offset of every rank's big VA, so one
// leOffset addresses the window on every rank.
type Window struct {
	McOffset4K uint64 // offset in the symmetric big VA, in 4 KiB units
	WorldRank  int    // the owner
	LsaRank    int
	Bytes      uint64
	Flags      WinFlags
	sys        *System
}

// bigOffset is the window's byte offset in the big VA.
func (w Window) bigOffset() uint64 { return w.McOffset4K << 12 }

// CommWindowRegister allocates bytes of symmetric memory on c's rank and
// registers it (ncclMemAlloc + ncclCommWindowRegister). Registration is
// collective: every rank must register the same sizes in the same order.
// Windows with WinCollSymmetric are bound to the rank's CFT LEs.
func CommWindowRegister(c *Comm, bytes uint64, flags WinFlags) (Window, error) {
	const call = "ncclCommWindowRegister"
	if c == nil {
		return Window{}, errf(InvalidArgument, call, "nil comm")
	}
	if bytes == 0 {
		return Window{}, errf(InvalidArgument, call, "rank %d: 0 bytes", c.Rank)
	}
	if flags&^(WinCollSymmetric|WinStrictOrdering|WinCftCounted) != 0 {
		return Window{}, errf(InvalidArgument, call, "rank %d: unknown window flags %#x", c.Rank, uint32(flags))
	}
	if err := checkCountedWindow(c.Rank, bytes, flags); err != nil {
		return Window{}, err
	}
	off, err := c.symAlloc(call, bytes, fmt.Sprintf("window %d", len(c.wins)), c.sys.phantom)
	if err != nil {
		return Window{}, err
	}
	w := Window{McOffset4K: off >> 12, WorldRank: c.Rank, LsaRank: c.LsaRank, Bytes: bytes, Flags: flags, sys: c.sys}
	if flags&WinCollSymmetric != 0 {
		r := c.sys.ranks[c.Rank]
		r.bound = append(r.bound, span{off, bytes, fmt.Sprintf("window %d", len(c.wins))})
		if flags&WinCftCounted != 0 {
			r.counted = append(r.counted, span{off, bytes, fmt.Sprintf("window %d", len(c.wins))})
		}
	}
	c.wins = append(c.wins, w)
	return w, nil
}

// Read copies n bytes of rank's copy of window w at off: a host-side
// cudaMemcpy, outside any kernel. A phantom window reads as zeros.
func (sys *System) Read(rank int, w Window, off, n uint64) ([]byte, error) {
	b, err := sys.hostSpan("Read", rank, w, off, n)
	if err != nil {
		return nil, err
	}
	out := make([]byte, n)
	copy(out, b)
	return out, nil
}

// Write stores data into rank's copy of window w at off from the host,
// before or between kernels: host writes are ordered for every proxy by
// the kernel launch that follows. A phantom window drops the data.
func (sys *System) Write(rank int, w Window, off uint64, data []byte) error {
	b, err := sys.hostSpan("Write", rank, w, off, uint64(len(data)))
	if err != nil {
		return err
	}
	copy(b, data)
	base := w.bigOffset() + off
	if sys.chk != nil {
		sys.chk.hostWrite(rank, base, uint64(len(data)))
	}
	sys.ranks[rank].wl.Notify(base, base+uint64(len(data)))
	return nil
}

// Fill is Write without a source buffer: fill writes the first n bytes
// of rank's copy of w in place, then the write is announced as Write
// announces it. A phantom window calls nothing.
func (sys *System) Fill(rank int, w Window, n uint64, fill func([]byte) error) error {
	b, err := sys.hostSpan("Write", rank, w, 0, n)
	if err != nil {
		return err
	}
	if b == nil {
		return nil // a phantom window
	}
	if err := fill(b); err != nil {
		return err
	}
	base := w.bigOffset()
	if sys.chk != nil {
		sys.chk.hostWrite(rank, base, n)
	}
	sys.ranks[rank].wl.Notify(base, base+n)
	return nil
}

// View is Read without the copy: the host's view of n bytes of rank's
// copy of window w at off (nil for a phantom window), valid until the
// system is closed. It is for reading a finished run's output; writes
// through it bypass the fence checker and the watchers (use Write or
// Fill).
func (sys *System) View(rank int, w Window, off, n uint64) ([]byte, error) {
	return sys.hostSpan("View", rank, w, off, n)
}

func (sys *System) hostSpan(call string, rank int, w Window, off, n uint64) ([]byte, error) {
	if w.sys != sys {
		return nil, fmt.Errorf("fabric %s: window was not registered on this system", call)
	}
	if sys.closed {
		return nil, fmt.Errorf("fabric %s: the system is closed (System.Close): its memory is gone", call)
	}
	if rank < 0 || rank >= len(sys.ranks) {
		return nil, fmt.Errorf("fabric %s: rank %d outside [0, %d)", call, rank, len(sys.ranks))
	}
	if off+n < off || off+n > w.Bytes {
		return nil, fmt.Errorf("fabric %s: [%d, %d) outside the window's %d B", call, off, off+n, w.Bytes)
	}
	base := w.bigOffset() + off
	return sys.ranks[rank].bytes(base, n), nil
}
