package fabric

import (
	"fmt"

	"github.com/emud-dev/emud/fabric/redop"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/race"
	"github.com/emud-dev/emud/sim"
)

// CftSmem is an ncclCftSmem: the byte offset, in the block's shared memory,
// of the 16-byte state a kernel declares __shared__ (one 64-bit mbarrier).
// The mbarrier's state lives in the emulator, keyed by (kernel, block,
// offset); the bytes are reserved so that data ops may not use them.
type CftSmem int

// CftSmemBytes is sizeof(ncclCftSmem) as the emulator reserves it.
const CftSmemBytes = 16

// Limits of one ncclCftSmem between flushes (spec §6): the mbarrier
// tx-count is at most 2^20 − 1; non-fetching ops count in 16-byte units,
// fetching ops in bytes.
const (
	MaxTxCount       = 1<<20 - 1
	MaxNonFetchBytes = MaxTxCount * 16 // ≈ 16 MiB
	MaxFetchBytes    = MaxTxCount      // ≈ 1 MiB
)

// RedOp is a reduction tag with its element type: ncclCftOpSum<float> is
// RedOp{redop.Sum, redop.F32}.
type RedOp struct {
	Op   redop.Op
	Type redop.Type
}

func (r RedOp) String() string { return fmt.Sprintf("%v<%v>", r.Op, r.Type) }

// FullMask is the cpMask that copies every byte of each 16-byte word.
const FullMask uint16 = 0xFFFF

// Cft is ncclCft<Coop> as one thread sees it. Build it in the kernel, in
// every thread of coop, with NewCft; the threads share the mbarrier of the
// CftSmem. Every data call takes the OpCoop that issues it (a subset of the
// constructing coop); submit, flushSmem and flush follow spec §4.2.
type Cft struct {
	t      *kernel.Thread
	coop   kernel.Group
	dc     DevComm
	sys    *System
	mb     *mbar
	parity uint64 // phaseParity, per thread
	a      opArgs // this lane's arguments for the call in progress
	// is is mb.byThread[t] while mb's issuers are those of generation
	// isGen: the lookup a put and its submit would make each.
	is    *issuer
	isGen uint64
}

// opArgs is one lane's request at a Cft call.
type opArgs struct {
	c      *Cft
	op     kernel.Group
	kind   opKind
	le     CftLeId
	leOff  uint64
	smem   int
	bytes  uint64
	mask   uint16
	red    RedOp
	report bool // flush: has a report
	code   uint32
	// counted writes
	counted    bool
	counterOff uint64
}

type smemKey struct {
	k     *kernel.Kernel
	block int
	off   int
}

// mbar is the emulated mbarrier of one ncclCftSmem (spec §4.1), plus what
// the emulator tracks to enforce the submit/flush rules.
type mbar struct {
	sys  *System
	rank int
	off  int // offset of the ncclCftSmem in shared memory; -1 internal
	name string
	wl   *sim.WatchList

	phase    uint64 // completed phases; parity = phase & 1
	pending  int    // arrivals still expected this phase (1 or 0)
	tx       int64  // signed tx-count
	tracked  int64  // tx units issued this phase (in-flight limit)
	reported bool
	report   uint8
	done     [2]phaseReport // the report of the last phase of each parity
	flushBy  groupRef       // who arrived this phase
	issuers  []*issuer
	byThread map[*kernel.Thread]*issuer
	gen      uint64 // bumped when a new ncclCft resets issuers and byThread
	smemBusy int    // submitted ops that have not yet read their smem source
	inflight int    // submitted ops not yet complete
	// raceSmem and raceDone collect the clocks of operations that have
	// read their shared-memory source and that have completed: what
	// flushSmem and flush acquire (race.go).
	raceSmem, raceDone race.Sync
}

type phaseReport struct {
	has  bool
	code uint8
}

// issuer is one OpCoop's elected thread: its txCount and the ops it issued
// but has not submitted.
type issuer struct {
	by      groupRef
	txCount int64
	unsub   []*fop
}

func (is *issuer) who() string { return is.by.String() }

// groupRef names an OpCoop by its elected thread and scope; the text
// (groupName) is made only when a message needs it.
type groupRef struct {
	t     *kernel.Thread
	scope kernel.Scope
}

func (g groupRef) String() string { return groupName(g.t, g.scope) }

func newMbar(sys *System, rank, off int, name string) *mbar {
	return &mbar{sys: sys, rank: rank, off: off, name: name, wl: sys.s.NewWatchList(name), pending: 1,
		byThread: map[*kernel.Thread]*issuer{}}
}

func (m *mbar) unsubmitted() (n int, by []*issuer) {
	for _, is := range m.issuers {
		if len(is.unsub) > 0 {
			n += len(is.unsub)
			by = append(by, is)
		}
	}
	return n, by
}

// maybeComplete ends the phase when its one arrival has happened, its
// tx-count is back to zero and (the emulator's rule) no issued op is
// still unsubmitted.
func (m *mbar) maybeComplete() {
	if m.pending != 0 || m.tx != 0 {
		return
	}
	if n, _ := m.unsubmitted(); n > 0 {
		return
	}
	m.done[m.phase&1] = phaseReport{m.reported, m.report}
	m.phase++
	m.pending = 1
	m.tracked = 0
	m.reported, m.report = false, 0
	m.flushBy = groupRef{}
	m.sys.s.Progress()
	m.wl.Notify(0, 1)
}

func (m *mbar) busy() bool {
	n, _ := m.unsubmitted()
	return m.tracked > 0 || m.flushBy.t != nil || n > 0 || m.inflight > 0
}

// NewCft is the ncclCft(coop, cftSmem) constructor for thread t of coop.
// The Go form also takes the dev comm: it is how the emulator finds the
// fabric (on hardware LE ids are global to the process). The elected
// thread initialises the mbarrier; then coop syncs.
func NewCft(coop kernel.Group, dc DevComm, smem CftSmem) *Cft {
	const call = "ncclCft"
	t := coop.Thread()
	if dc.st == nil {
		t.Fail(call, fmt.Errorf("the dev comm was not made by DevCommCreate"))
	}
	if dc.CftCaps&CapCft == 0 {
		t.Fail(call, fmt.Errorf("rank %d: the dev comm has no CFT resources (cftCaps %v): request NCCL_CFT in DevCommRequirements", dc.Rank, dc.CftCaps))
	}
	if t.GPU() != dc.Rank {
		t.Fail(call, fmt.Errorf("kernel on GPU %d uses rank %d's dev comm: launch rank r's kernels on GPU r", t.GPU(), dc.Rank))
	}
	off := int(smem)
	if off < 0 || off%16 != 0 || off+CftSmemBytes > len(t.Shared()) {
		t.Fail(call, fmt.Errorf("ncclCftSmem at shared offset %d: must be 16-byte aligned with %d B inside the block's %d B of shared memory", off, CftSmemBytes, len(t.Shared())))
	}
	sys := dc.st.sys
	key := smemKey{t.Wave().Kernel(), t.BlockIdx(), off}
	m := sys.mbars[key]
	if m == nil {
		m = newMbar(sys, dc.Rank, off, fmt.Sprintf("rank %d block %d ncclCftSmem@%d", dc.Rank, t.BlockIdx(), off))
		sys.mbars[key] = m
	} else if coop.ThreadRank() == 0 {
		if m.busy() {
			t.Fail(call, fmt.Errorf("%s re-initialised while operations are tracked on it: flush before constructing a new ncclCft on it", m.name))
		}
		m.phase, m.pending, m.tx, m.tracked = 0, 1, 0, 0
		m.issuers, m.byThread = nil, map[*kernel.Thread]*issuer{}
		m.gen++
	}
	c := &Cft{t: t, coop: coop, dc: dc, sys: sys, mb: m}
	c.a.c = c
	coop.Sync()
	return c
}

// ---- data operations ----

type opKind uint8

const (
	opPut opKind = iota
	opPutMC
	opGet
	opRed
	opRedMC
	opPullRed
)

var opNames = [...]string{"put", "putMultimem", "get", "red", "redMultimem", "pullRed"}

func (k opKind) fetching() bool  { return k == opGet || k == opPullRed }
func (k opKind) multicast() bool { return k == opPutMC || k == opRedMC || k == opPullRed }
func (k opKind) reduces() bool   { return k == opRed || k == opRedMC || k == opPullRed }

var issueCall = &kernel.Call[*opArgs]{Name: "ncclCft issue", Run: runIssue}

func (c *Cft) issue(op kernel.Group, kind opKind, le CftLeId, leOff uint64, smem int, bytes uint32, mask uint16, red RedOp) {
	if op.Thread() != c.t {
		c.t.Fail("ncclCft::"+opNames[kind], fmt.Errorf("OpCoop belongs to %v, not to this ncclCft's thread", op.Thread()))
	}
	if op.Scope() == kernel.ScopeBlock {
		op.Sync() // op.sync(); a warp's sync is the convergence at the call itself
	}
	c.a = opArgs{c: c, op: op, kind: kind, le: le, leOff: leOff, smem: smem, bytes: uint64(bytes), mask: mask, red: red}
	kernel.Converge(c.t, issueCall, &c.a)
}

// Put is ncclCft::put: asynchronously write bytes from shared memory at
// smemSrc to the unicast LE le at leOff.
func (c *Cft) Put(op kernel.Group, le CftLeId, leOff uint64, smemSrc int, bytes uint32) {
	c.issue(op, opPut, le, leOff, smemSrc, bytes, FullMask, RedOp{})
}

// PutCpMask is ncclCft::putCpMask: bit i of cpMask enables byte i of every
// 16-byte word (bit 0 = lowest address); disabled bytes stay unchanged.
func (c *Cft) PutCpMask(op kernel.Group, le CftLeId, leOff uint64, smemSrc int, bytes uint32, cpMask uint16) {
	c.issue(op, opPut, le, leOff, smemSrc, bytes, cpMask, RedOp{})
}

// PutMultimem is ncclCft::putMultimem: write to every member's copy through
// the multicast LE.
func (c *Cft) PutMultimem(op kernel.Group, le CftLeId, leOff uint64, smemSrc int, bytes uint32) {
	c.issue(op, opPutMC, le, leOff, smemSrc, bytes, FullMask, RedOp{})
}

// PutMultimemCpMask is ncclCft::putMultimemCpMask.
func (c *Cft) PutMultimemCpMask(op kernel.Group, le CftLeId, leOff uint64, smemSrc int, bytes uint32, cpMask uint16) {
	c.issue(op, opPutMC, le, leOff, smemSrc, bytes, cpMask, RedOp{})
}

// Get is ncclCft::get: asynchronously read bytes from the unicast LE into
// shared memory at smemDst.
func (c *Cft) Get(op kernel.Group, le CftLeId, leOff uint64, smemDst int, bytes uint32) {
	c.issue(op, opGet, le, leOff, smemDst, bytes, FullMask, RedOp{})
}

// Red is ncclCft::red: dst = dst op src element-wise at the unicast LE.
func (c *Cft) Red(op kernel.Group, le CftLeId, leOff uint64, red RedOp, smemSrc int, bytes uint32) {
	c.issue(op, opRed, le, leOff, smemSrc, bytes, FullMask, red)
}

// RedCpMask is ncclCft::redCpMask; only whole elements may be enabled.
func (c *Cft) RedCpMask(op kernel.Group, le CftLeId, leOff uint64, red RedOp, smemSrc int, bytes uint32, cpMask uint16) {
	c.issue(op, opRed, le, leOff, smemSrc, bytes, cpMask, red)
}

// RedMultimem is ncclCft::redMultimem: the reduction happens at every
// member's copy.
func (c *Cft) RedMultimem(op kernel.Group, le CftLeId, leOff uint64, red RedOp, smemSrc int, bytes uint32) {
	c.issue(op, opRedMC, le, leOff, smemSrc, bytes, FullMask, red)
}

// RedMultimemCpMask is ncclCft::redMultimemCpMask.
func (c *Cft) RedMultimemCpMask(op kernel.Group, le CftLeId, leOff uint64, red RedOp, smemSrc int, bytes uint32, cpMask uint16) {
	c.issue(op, opRedMC, le, leOff, smemSrc, bytes, cpMask, red)
}

// PullRed is ncclCft::pullRed: read the reduction over all members' copies
// at the multicast LE into shared memory at smemDst. op must be a warp
// group (static_assert in NCCL); all its lanes call.
func (c *Cft) PullRed(op kernel.Group, le CftLeId, leOff uint64, red RedOp, smemDst int, bytes uint32) {
	c.issue(op, opPullRed, le, leOff, smemDst, bytes, FullMask, red)
}

// elected reports whether lane t of active group g acts for its OpCoop:
// every thread for a thread group, the lowest active lane of a warp
// (elect.sync), thread 0 of a block.
func elected(g *kernel.Active, t *kernel.Thread, scope kernel.Scope) bool {
	switch scope {
	case kernel.ScopeWarp:
		return t == g.Lanes()[0]
	case kernel.ScopeBlock:
		return t.ThreadIdx() == 0
	}
	return true
}

func groupName(t *kernel.Thread, scope kernel.Scope) string {
	switch scope {
	case kernel.ScopeWarp:
		return fmt.Sprintf("warp %d of block %d on rank %d", t.WaveIdx(), t.BlockIdx(), t.GPU())
	case kernel.ScopeBlock:
		return fmt.Sprintf("block %d on rank %d", t.BlockIdx(), t.GPU())
	}
	return fmt.Sprintf("thread %d of block %d on rank %d", t.ThreadIdx(), t.BlockIdx(), t.GPU())
}

// callName is the NCCL call a lane's request is, for its error (made only
// when there is one).
func (a *opArgs) callName() string {
	call := "ncclCft::" + opNames[a.kind]
	if a.mask != FullMask {
		call += "CpMask"
	}
	if a.counted {
		call += "Counted"
	}
	return call
}

func runIssue(g *kernel.Active, args []*opArgs) error {
	for i, t := range g.Lanes() {
		a := args[i]
		if a.kind == opPullRed && a.op.Scope() != kernel.ScopeWarp {
			return t.Error(a.callName(), fmt.Errorf("OpCoop must be ncclCoopWarp (static_assert in NCCL), got a %v group", a.op.Scope()))
		}
		if !elected(g, t, a.op.Scope()) {
			continue
		}
		if err := a.c.issueOne(t, a); err != nil {
			return t.Error(a.callName(), err)
		}
	}
	return nil
}

// issueOne validates one op (spec §5-§8) and records it unsubmitted.
func (c *Cft) issueOne(t *kernel.Thread, a *opArgs) error {
	sys, m := c.sys, c.mb
	if a.op.Scope() > c.coop.Scope() {
		return fmt.Errorf("OpCoop (%v) is wider than the ncclCft's coop (%v): it must be a subset", a.op.Scope(), c.coop.Scope())
	}
	if m.flushBy.t != nil {
		return fmt.Errorf("issued while a flush by %s is in progress on %s: no group may issue until the flush completes", m.flushBy, m.name)
	}
	o, err := c.validate(t, a)
	if err != nil {
		return err
	}
	if m.tracked+o.units > MaxTxCount {
		return fmt.Errorf("%s would track %d tx units (put/red count bytes/16, get/pullRed count bytes) since the last flush, above the mbarrier's %d: at most %d B of put/red or %d B of get/pullRed between flushes; flush first",
			m.name, m.tracked+o.units, MaxTxCount, MaxNonFetchBytes, MaxFetchBytes)
	}
	is := c.issuer()
	if is == nil {
		is = &issuer{by: groupRef{t, a.op.Scope()}}
		m.byThread[t] = is
		m.issuers = append(m.issuers, is)
		c.is, c.isGen = is, m.gen
	}
	o.issuer = is
	sys.faults.decide(o)
	is.unsub = append(is.unsub, o)
	is.txCount += o.units
	m.tracked += o.units
	if o.kind == opPullRed {
		// Every lane executes a fetching-ops submit: the op starts now, its
		// tx is expected at the next submit.
		sys.start(o)
	}
	return nil
}

func (c *Cft) validate(t *kernel.Thread, a *opArgs) (*fop, error) {
	sys := c.sys
	me := c.dc.Rank
	sh := t.Shared()
	n := a.bytes
	switch {
	case n == 0 || n%16 != 0:
		return nil, fmt.Errorf("bytes %d: must be a positive multiple of 16", n)
	case a.smem%16 != 0 || a.smem < 0:
		return nil, fmt.Errorf("shared-memory pointer at offset %d is not 16-byte aligned", a.smem)
	case uint64(a.smem)+n > uint64(len(sh)):
		return nil, fmt.Errorf("shared-memory range [%d, %d) is outside the block's %d B of shared memory", a.smem, uint64(a.smem)+n, len(sh))
	case a.leOff%16 != 0:
		return nil, fmt.Errorf("leOffset %#x is not 16-byte aligned", a.leOff)
	}
	if cs := c.mb.off; cs >= 0 && a.smem < cs+CftSmemBytes && cs < a.smem+int(n) {
		return nil, fmt.Errorf("shared-memory range [%d, %d) overlaps the ncclCftSmem at %d: do not mix reporting mechanisms on the mbarrier", a.smem, uint64(a.smem)+n, cs)
	}
	tg, err := sys.resolve(me, &c.dc, a.le)
	if err != nil {
		return nil, err
	}
	if a.kind.multicast() {
		if !tg.multicast {
			return nil, fmt.Errorf("LE %d is a unicast LE: %s needs the multicast LE (NCCL_CFT_MULTIMEM)", a.le, opNames[a.kind])
		}
	} else {
		if tg.multicast {
			return nil, fmt.Errorf("LE %d is the multicast LE: %s needs a unicast LE", a.le, opNames[a.kind])
		}
		if tg.rank == me && !sys.topo.PutToSelf {
			return nil, fmt.Errorf("LE %d is rank %d's own LE, and this system has no unicast access to the owner's LE (Topology.PutToSelf)", a.le, me)
		}
	}
	target := tg.rank
	if tg.multicast {
		target = tg.members[0]
	}
	if err := sys.checkBound(target, a.leOff, n); err != nil {
		return nil, err
	}
	if a.kind.reduces() {
		if err := redop.Check(a.red.Op, a.red.Type, a.kind == opPullRed); err != nil {
			return nil, err
		}
		if a.mask != FullMask {
			if err := wholeElements(a.mask, a.red.Type.Size()); err != nil {
				return nil, err
			}
		}
	}
	units := int64(n / 16)
	if a.kind.fetching() {
		units = int64(n)
	}
	var o *fop
	switch a.kind {
	case opPut, opPutMC, opRed, opRedMC:
		// Puts and reds end at a known point (release), so their fops are
		// reused; a get's or pullRed's is not tracked that far.
		o = sys.newFop()
		o.pooled = true
	default:
		o = new(fop)
	}
	o.kind, o.rank, o.tg, o.leOff, o.smemOff, o.bytes = a.kind, me, tg, a.leOff, a.smem, n
	o.mask, o.red, o.units, o.mb, o.smem = a.mask, a.red, units, c.mb, sh
	if a.counted {
		if err := sys.checkCounter(o, a.counterOff); err != nil {
			return nil, err
		}
		o.counted, o.counterOff = true, a.counterOff
	}
	if d := sys.s.Race(); d != nil {
		o.smemSpace = t.SharedSpace(d)
	}
	return o, nil
}

// wholeElements: a reduction's cpMask must enable or disable whole
// elements of size sz within each 16-byte word (spec §7 [inferred]).
func wholeElements(mask uint16, sz int) error {
	for e := 0; e < 16; e += sz {
		bits := (mask >> uint(e)) & (1<<uint(sz) - 1)
		if bits != 0 && bits != 1<<uint(sz)-1 {
			return fmt.Errorf("cpMask %#04x enables part of the %d-byte element at bytes %d..%d of each 16-byte word: enable whole elements", mask, sz, e, e+sz-1)
		}
	}
	return nil
}

// checkBound: [off, off+n) must lie inside one resource bound to the LE on
// the target (a CFT window or the dev comm resource window).
func (sys *System) checkBound(rank int, off, n uint64) error {
	r := sys.ranks[rank]
	for _, s := range r.bound {
		if off >= s.off && off+n <= s.off+s.n && off+n >= off {
			return nil
		}
	}
	return fmt.Errorf("LE range [%#x, %#x) on rank %d is not inside any window bound to the LE (a fabric fault on hardware)", off, off+n, rank)
}
