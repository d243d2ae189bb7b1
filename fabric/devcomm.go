package fabric

import "fmt"

// CftLeId is ncclCftLeId, a logical endpoint id. The emulator gives every
// LE of the system a distinct id so that using an LE a device never
// imported is detected: flat group g's unicast LEs are
// UcLeBase + g × cftSize + flatRank, multicast group m's LE is McLeBase + m.
type CftLeId uint32

// Id blocks of the emulated LEs.
const (
	UcLeBase CftLeId = 0x1000
	McLeBase CftLeId = 0x80000
)

// DevCommRequirements is the part of ncclDevCommRequirements CFT adds.
type DevCommRequirements struct {
	CftCaps         CftCap
	CftBarrierCount int

	// The GIN requirements (gin.go): contexts, signals, counters, barriers
	// of the world team, whether the deprecated ncclGin_Signal{Inc,Add}
	// are strong, and which peers the contexts connect to.
	GinContextCount          int
	GinSignalCount           int
	GinCounterCount          int
	GinBarrierCount          int
	GinStrongSignalsRequired bool
	GinConnectionType        GinConnection

	// MORI's ccoGda (gda.go) on the same resources: gdaContextCount,
	// gdaSignalCount and gdaCounterCount are the three GIN counts above;
	// these add the connection type and the rail barriers.
	GdaConnectionType   GdaConnection
	RailGdaBarrierCount int
}

// DevCommRequirementsInitializer is NCCL_DEV_COMM_REQUIREMENTS_INITIALIZER:
// both CFT fields 0.
func DevCommRequirementsInitializer() DevCommRequirements { return DevCommRequirements{} }

// CftBarrierHandle is {bufHandle, nBarriers}: the barrier buffer's offset in
// the resource window, in 128-byte units, and how many barriers it holds.
type CftBarrierHandle struct {
	BufHandle uint32
	NBarriers int
}

// DevComm is ncclDevComm as device code sees it, with the fields CFT adds.
// It is a value; copy it into kernels.
type DevComm struct {
	Rank, NRanks     int
	LsaRank, LsaSize int

	CftCaps         CftCap
	CftRank         int
	CftSize         int
	CftMultimemRank int
	CftMultimemSize int
	UcLeId          CftLeId // base of the flat team's unicast LE block
	McLeId          CftLeId // this rank's multicast LE (0: none)

	CftBarrier         CftBarrierHandle
	CftMultimemBarrier CftBarrierHandle

	GinContextCount int
	GinSignalCount  int
	GinCounterCount int
	GinBarrier      GinBarrierHandle // world-team GIN barriers (railGinBarrier's role)

	GdaConnType    GdaConnection    // ccoDevComm.gdaConnType
	RailGdaBarrier GdaBarrierHandle // ccoDevComm.railGdaBarrier

	st  *devState
	gin *ginRank
}

// devState is what the emulator keeps per dev comm.
type devState struct {
	sys    *System
	c      *Comm
	resOff uint64 // resource window offset in the big VA
	resLen uint64
}

// System returns the emulated system of the dev comm (nil for the zero
// DevComm).
func (dc DevComm) System() *System {
	if dc.st == nil {
		return nil
	}
	return dc.st.sys
}

func ceil128(n uint64) uint64 { return (n + 127) &^ 127 }

// cftBarrierBytes is ncclCftBarrierCreateRequirement's bufferSize:
// (3·nB + nB·nRanks) × 16.
func cftBarrierBytes(nB, nRanks int) uint64 { return uint64(3*nB+nB*nRanks) * 16 }

// DevCommCreate is ncclDevCommCreate with the CFT requirements (spec §1.3).
// Every rank calls it with the same requirements; resource buffers are
// symmetric allocations checked across ranks.
func DevCommCreate(c *Comm, reqs DevCommRequirements) (DevComm, error) {
	const call = "ncclDevCommCreate"
	if c == nil {
		return DevComm{}, errf(InvalidArgument, call, "nil comm")
	}
	sys := c.sys
	caps := reqs.CftCaps
	switch {
	case caps&^(CapCft|CapCftMultimem) != 0:
		return DevComm{}, errf(InvalidArgument, call, "rank %d: cftCaps %v has unknown bits", c.Rank, caps)
	case caps == CapCftMultimem:
		return DevComm{}, errf(InvalidArgument, call, "rank %d: cftCaps NCCL_CFT_MULTIMEM without NCCL_CFT: multimem use needs both bits (NCCL_CFT | NCCL_CFT_MULTIMEM)", c.Rank)
	case reqs.CftBarrierCount < 0:
		return DevComm{}, errf(InvalidArgument, call, "rank %d: cftBarrierCount %d is negative", c.Rank, reqs.CftBarrierCount)
	case caps != CapCftNone && !sys.cftSupported():
		return DevComm{}, errf(InvalidArgument, call, "rank %d: CFT resources requested (%v) but CFT is not supported by every rank (%s)", c.Rank, caps, sys.whyNoCft())
	case caps&CapCftMultimem != 0 && !sys.mcSupported():
		return DevComm{}, errf(InvalidArgument, call, "rank %d: CFT multicast support requested, but NVLS is disabled or unsupported.", c.Rank)
	case reqs.CftBarrierCount > 0 && caps == CapCftNone:
		return DevComm{}, errf(InvalidArgument, call, "rank %d: cftBarrierCount %d without cftCaps: CFT barriers need NCCL_CFT", c.Rank, reqs.CftBarrierCount)
	}
	t := sys.topo
	cr, cs, ms := c.cftSizes()
	dc := DevComm{Rank: c.Rank, NRanks: c.NRanks, LsaRank: c.LsaRank, LsaSize: c.LsaSize,
		CftCaps: caps, CftRank: cr, CftSize: cs, CftMultimemRank: cr % ms, CftMultimemSize: ms}
	st := &devState{sys: sys, c: c}
	if caps != CapCftNone {
		c.les = true
		dc.UcLeId = UcLeBase + CftLeId(t.flatGroup(c.Rank)*t.CftSize)
		nB := reqs.CftBarrierCount
		uc := ceil128(cftBarrierBytes(nB, cs))
		mc := uint64(0)
		if caps&CapCftMultimem != 0 {
			c.mcLe = true
			dc.McLeId = McLeBase + CftLeId(t.mcGroup(c.Rank))
			mc = ceil128(cftBarrierBytes(nB, ms))
		}
		st.resLen = max(uc+mc, 128)
		off, err := c.symAlloc(call, st.resLen, fmt.Sprintf("dev comm %d resource window", c.devs), false)
		if err != nil {
			return DevComm{}, err
		}
		st.resOff = off
		r := sys.ranks[c.Rank]
		r.bound = append(r.bound, span{off, st.resLen, fmt.Sprintf("dev comm %d resource window", c.devs)})
		dc.CftBarrier = CftBarrierHandle{BufHandle: 0, NBarriers: nB}
		if mc > 0 {
			dc.CftMultimemBarrier = CftBarrierHandle{BufHandle: uint32(uc / 128), NBarriers: nB}
		}
	}
	if err := c.ginCreate(&dc, reqs); err != nil {
		return DevComm{}, err
	}
	if dc.gin != nil {
		c.gins = append(c.gins, dc.gin)
	}
	c.devs++
	dc.st = st
	return dc, nil
}

// ---- logical-endpoint queries (spec §3) ----

// GetCftLeInfo is the device-side ncclGetCftLeInfo: the LE of team rank
// peerCft of cftTeam (flat or hierarchical) and the window offset on it.
// Like the device function it checks nothing; a bad peer gives an LE id
// the fabric operation then refuses.
func GetCftLeInfo(w Window, off uint64, peerCft int, cftTeam Team, dc DevComm) (CftLeId, uint64) {
	le := int64(dc.UcLeId) + int64(dc.CftRank) + int64(peerCft-cftTeam.Rank)*int64(cftTeam.Stride)
	return CftLeId(le), w.bigOffset() + off
}

// GetPeerLeInfo is the device-side ncclGetPeerLeInfo: the LE of world rank
// peerWorld, assuming the flat team is contiguous in world ranks. No bounds
// check, as on the device.
func GetPeerLeInfo(w Window, off uint64, peerWorld int, dc DevComm) (CftLeId, uint64) {
	le := int64(dc.UcLeId) + int64(dc.CftRank) + int64(peerWorld-w.WorldRank)
	return CftLeId(le), w.bigOffset() + off
}

// GetMultimemLeInfo is the device-side ncclGetMultimemLeInfo.
func GetMultimemLeInfo(w Window, off uint64, dc DevComm) (CftLeId, uint64) {
	return dc.McLeId, w.bigOffset() + off
}

// hostLeCheck is what the host queries check first (spec §1.3).
func hostLeCheck(call string, w Window, off uint64) (*Comm, error) {
	if w.sys == nil {
		return nil, errf(InvalidArgument, call, "window was never registered")
	}
	c := w.sys.comms[w.WorldRank]
	switch {
	case !w.sys.cftSupported():
		return nil, errf(InvalidArgument, call, "rank %d: the device has no CFT support (%s)", c.Rank, w.sys.whyNoCft())
	case !c.les:
		return nil, errf(InvalidUsage, call, "rank %d: Querying CFT LE before LE creation: create a dev comm with cftCaps first, or set hostCftMode to enable LEs at comm init", c.Rank)
	case w.Flags&WinCollSymmetric == 0:
		return nil, errf(InvalidUsage, call, "rank %d: the window is not registered for CFT (register it with NCCL_WIN_COLL_SYMMETRIC)", c.Rank)
	case off > w.Bytes:
		return nil, errf(InvalidArgument, call, "rank %d: offset %d beyond the window's %d B", c.Rank, off, w.Bytes)
	}
	return c, nil
}

// GetCftDeviceLeInfo is the host-side ncclGetCftDeviceLeInfo.
func GetCftDeviceLeInfo(w Window, off uint64, peerCft int, cftTeam Team) (CftLeId, uint64, error) {
	const call = "ncclGetCftDeviceLeInfo"
	c, err := hostLeCheck(call, w, off)
	if err != nil {
		return 0, 0, err
	}
	if peerCft < 0 || peerCft >= cftTeam.NRanks {
		return 0, 0, errf(InvalidArgument, call, "rank %d: peerCft %d outside the team %v", c.Rank, peerCft, cftTeam)
	}
	t := c.sys.topo
	cr, _, _ := c.cftSizes()
	base := int64(UcLeBase) + int64(t.flatGroup(c.Rank)*t.CftSize)
	return CftLeId(base + int64(cr) + int64(peerCft-cftTeam.Rank)*int64(cftTeam.Stride)), w.bigOffset() + off, nil
}

// GetPeerDeviceLeInfo is the host-side ncclGetPeerDeviceLeInfo: peerWorld
// must be in the caller's flat team, [rank − flatRank, rank − flatRank +
// flatSize).
func GetPeerDeviceLeInfo(w Window, off uint64, peerWorld int) (CftLeId, uint64, error) {
	const call = "ncclGetPeerDeviceLeInfo"
	c, err := hostLeCheck(call, w, off)
	if err != nil {
		return 0, 0, err
	}
	cr, cs, _ := c.cftSizes()
	lo := c.Rank - cr
	if peerWorld < lo || peerWorld >= lo+cs {
		return 0, 0, errf(InvalidArgument, call, "rank %d: peerWorld %d outside the flat CFT team's world ranks [%d, %d)", c.Rank, peerWorld, lo, lo+cs)
	}
	t := c.sys.topo
	base := int64(UcLeBase) + int64(t.flatGroup(c.Rank)*t.CftSize)
	return CftLeId(base + int64(cr) + int64(peerWorld-c.Rank)), w.bigOffset() + off, nil
}

// GetMultimemDeviceLeInfo is the host-side ncclGetMultimemDeviceLeInfo. In
// NCCL it may be collective when the multicast LE does not exist yet; the
// emulator creates it on demand when multicast is supported.
func GetMultimemDeviceLeInfo(w Window, off uint64) (CftLeId, uint64, error) {
	const call = "ncclGetMultimemDeviceLeInfo"
	c, err := hostLeCheck(call, w, off)
	if err != nil {
		return 0, 0, err
	}
	if !c.sys.mcSupported() {
		return 0, 0, errf(InvalidArgument, call, "rank %d: CFT multicast support requested, but NVLS is disabled or unsupported.", c.Rank)
	}
	c.mcLe = true
	return McLeBase + CftLeId(c.sys.topo.mcGroup(c.Rank)), w.bigOffset() + off, nil
}

// leTarget is what an LE id resolves to on the issuing rank.
type leTarget struct {
	multicast bool
	rank      int   // unicast target (world rank)
	members   []int // multicast members (world ranks), in team order
}

// teamKey names a member list: n world ranks from first, stride apart.
type teamKey struct{ first, n, stride int }

// teamMembers is the member list of the team of n world ranks from first,
// stride apart, in team order. Every operation to the team shares the one
// list (read-only): a multicast op of n members would otherwise carry a
// list of its own, n² ints for one multimem barrier of n ranks.
func (sys *System) teamMembers(first, n, stride int) []int {
	k := teamKey{first, n, stride}
	if m, ok := sys.teams[k]; ok {
		return m
	}
	m := make([]int, n)
	for i := range m {
		m[i] = first + i*stride
	}
	if sys.teams == nil {
		sys.teams = map[teamKey][]int{}
	}
	sys.teams[k] = m
	return m
}

// resolve maps le on rank r to its target, refusing LEs the rank never
// imported.
func (sys *System) resolve(r int, dc *DevComm, le CftLeId) (leTarget, error) {
	t := &sys.topo
	if dc.UcLeId != 0 && le >= dc.UcLeId && le < dc.UcLeId+CftLeId(t.CftSize) {
		return leTarget{rank: t.flatGroup(r)*t.CftSize + int(le-dc.UcLeId)}, nil
	}
	if dc.McLeId != 0 && le == dc.McLeId {
		g := t.mcGroup(r)
		return leTarget{multicast: true, members: sys.teamMembers(g*t.CftMcSize, t.CftMcSize, 1)}, nil
	}
	what := "no unicast LEs"
	if dc.UcLeId != 0 {
		what = fmt.Sprintf("unicast LEs [%d, %d)", dc.UcLeId, dc.UcLeId+CftLeId(t.CftSize))
	}
	if dc.McLeId != 0 {
		what += fmt.Sprintf(", multicast LE %d", dc.McLeId)
	} else {
		what += ", no multicast LE"
	}
	return leTarget{}, fmt.Errorf("LE %d is not an endpoint rank %d imported (it has %s)", le, r, what)
}
