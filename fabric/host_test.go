package fabric_test

import (
	"errors"
	"runtime"
	"testing"

	"github.com/emud-dev/emud/fabric"
	"github.com/emud-dev/emud/job"
	"github.com/emud-dev/emud/sim"
	"github.com/stretchr/testify/require"
)

func newSys(t *testing.T, topo fabric.Topology, env map[string]string) *fabric.System {
	t.Helper()
	if env == nil {
		env = map[string]string{}
	}
	sys, err := fabric.NewSystem(sim.New(sim.Config{Seed: 1}), fabric.Config{Topology: topo, Env: env})
	require.NoError(t, err)
	return sys
}

func requireResult(t *testing.T, err error, want fabric.Result, msg string) {
	t.Helper()
	var e *fabric.Error
	require.True(t, errors.As(err, &e), "want a *fabric.Error, got %v", err)
	require.Equal(t, want, e.Result, "%v", err)
	require.ErrorContains(t, err, msg)
}

func TestTopologyRules(t *testing.T) {
	cases := []struct {
		topo fabric.Topology
		want string
	}{
		{fabric.Topology{NRanks: 0}, "NRanks 0"},
		{fabric.Topology{NRanks: 8, LsaSize: 3}, "LsaSize 3 must divide"},
		{fabric.Topology{NRanks: 8, LsaSize: 4, CftSize: 2}, "multiple of LsaSize"},
		{fabric.Topology{NRanks: 8, CftMcSize: 3}, "CftMcSize 3 must divide"},
		{fabric.Topology{NRanks: 8, NoCft: []int{9}}, "NoCft lists rank 9"},
	}
	for _, tc := range cases {
		_, err := tc.topo.Normalize()
		require.ErrorContains(t, err, tc.want)
	}
	got, err := fabric.Topology{NRanks: 72}.Normalize()
	require.NoError(t, err)
	require.Equal(t, fabric.Topology{NRanks: 72, LsaSize: 72, CftSize: 72, CftMcSize: 72}, got, "NCCL 2.31 collapses every size to lsaSize")
}

func TestDevCommCreateRules(t *testing.T) {
	cases := []struct {
		name string
		topo fabric.Topology
		env  map[string]string
		reqs fabric.DevCommRequirements
		res  fabric.Result
		want string
	}{
		{"a rank without CFT", fabric.Topology{NRanks: 4, NoCft: []int{2}}, nil, fabric.DevCommRequirements{CftCaps: fabric.CapCft}, fabric.InvalidArgument, "not supported by every rank"},
		{"NCCL_CFT_ENABLE=0", fabric.Topology{NRanks: 4}, map[string]string{"NCCL_CFT_ENABLE": "0"}, fabric.DevCommRequirements{CftCaps: fabric.CapCft}, fabric.InvalidArgument, "NCCL_CFT_ENABLE=0"},
		{"multicast without NVLS", fabric.Topology{NRanks: 4, NoMulticast: true}, nil, fabric.DevCommRequirements{CftCaps: fabric.CapCft | fabric.CapCftMultimem}, fabric.InvalidArgument, "CFT multicast support requested, but NVLS is disabled or unsupported."},
		{"multimem bit alone", fabric.Topology{NRanks: 4}, nil, fabric.DevCommRequirements{CftCaps: fabric.CapCftMultimem}, fabric.InvalidArgument, "needs both bits"},
		{"unknown cap bits", fabric.Topology{NRanks: 4}, nil, fabric.DevCommRequirements{CftCaps: 4}, fabric.InvalidArgument, "unknown bits"},
		{"barriers without CFT", fabric.Topology{NRanks: 4}, nil, fabric.DevCommRequirements{CftBarrierCount: 2}, fabric.InvalidArgument, "CFT barriers need NCCL_CFT"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sys := newSys(t, tc.topo, tc.env)
			comms, err := sys.CommInitAll(fabric.CommConfig{})
			require.NoError(t, err)
			_, err = fabric.DevCommCreate(comms[0], tc.reqs)
			requireResult(t, err, tc.res, tc.want)
		})
	}
	t.Run("a rank without CFT may still create a comm without CFT", func(t *testing.T) {
		sys := newSys(t, fabric.Topology{NRanks: 4, NoCft: []int{2}}, nil)
		comms, err := sys.CommInitAll(fabric.CommConfig{})
		require.NoError(t, err)
		dc, err := fabric.DevCommCreate(comms[2], fabric.DevCommRequirementsInitializer())
		require.NoError(t, err)
		require.Equal(t, 1, dc.CftSize, "computeCftSize is 1 without CFT")
	})
}

// Host LE queries need LEs: created by a CFT dev comm, or at comm init with
// hostCftMode enable.
func TestHostLeQueries(t *testing.T) {
	t.Run("before LE creation", func(t *testing.T) {
		sys := newSys(t, fabric.Topology{NRanks: 4}, nil)
		comms, _ := sys.CommInitAll(fabric.CommConfig{})
		w, err := fabric.CommWindowRegister(comms[0], 4096, fabric.WinCollSymmetric)
		require.NoError(t, err)
		_, _, err = fabric.GetPeerDeviceLeInfo(w, 0, 1)
		requireResult(t, err, fabric.InvalidUsage, "Querying CFT LE before LE creation")
	})
	t.Run("hostCftMode enable", func(t *testing.T) {
		sys := newSys(t, fabric.Topology{NRanks: 8, LsaSize: 4, CftSize: 8, CftMcSize: 4}, nil)
		comms, err := sys.CommInitAll(fabric.CommConfig{HostCftMode: fabric.HostCftModeEnable})
		require.NoError(t, err)
		var wins []fabric.Window
		for _, c := range comms {
			w, err := fabric.CommWindowRegister(c, 8192, fabric.WinCollSymmetric)
			require.NoError(t, err)
			wins = append(wins, w)
		}
		plain, err := fabric.CommWindowRegister(comms[6], 4096, fabric.WinDefault)
		require.NoError(t, err)
		le, off, err := fabric.GetPeerDeviceLeInfo(wins[6], 32, 2)
		require.NoError(t, err)
		require.Equal(t, fabric.UcLeBase+2, le)
		require.Equal(t, uint64(32), off, "the first window sits at big-VA offset 0")
		_, _, err = fabric.GetPeerDeviceLeInfo(wins[6], 0, 8)
		requireResult(t, err, fabric.InvalidArgument, "outside the flat CFT team's world ranks [0, 8)")
		_, _, err = fabric.GetPeerDeviceLeInfo(plain, 0, 1)
		requireResult(t, err, fabric.InvalidUsage, "not registered for CFT")
		hier := fabric.HostTeamCft(comms[6], fabric.CftTeamHierMultimem)
		require.Equal(t, fabric.Team{NRanks: 2, Rank: 1, Stride: 4}, hier)
		le, _, err = fabric.GetCftDeviceLeInfo(wins[6], 0, 0, hier)
		require.NoError(t, err)
		require.Equal(t, fabric.UcLeBase+2, le, "hier-multimem team rank 0 of flat rank 6 is flat rank 2")
		_, _, err = fabric.GetCftDeviceLeInfo(wins[6], 0, 2, hier)
		requireResult(t, err, fabric.InvalidArgument, "peerCft 2 outside the team")
		le, _, err = fabric.GetMultimemDeviceLeInfo(wins[6], 0)
		require.NoError(t, err)
		require.Equal(t, fabric.McLeBase+1, le, "ranks 4..7 are multicast group 1")
	})
	t.Run("hostCftMode enable without CFT", func(t *testing.T) {
		sys := newSys(t, fabric.Topology{NRanks: 2, NoCft: []int{1}}, nil)
		_, err := sys.CommInitAll(fabric.CommConfig{HostCftMode: fabric.HostCftModeEnable})
		requireResult(t, err, fabric.InvalidArgument, "not supported by every rank")
	})
	t.Run("hostCftMode fallback without CFT", func(t *testing.T) {
		sys := newSys(t, fabric.Topology{NRanks: 2, NoCft: []int{1}}, nil)
		comms, err := sys.CommInitAll(fabric.CommConfig{HostCftMode: fabric.HostCftModeFallback})
		require.NoError(t, err)
		w, _ := fabric.CommWindowRegister(comms[0], 4096, fabric.WinCollSymmetric)
		_, _, err = fabric.GetPeerDeviceLeInfo(w, 0, 1)
		requireResult(t, err, fabric.InvalidArgument, "no CFT support")
	})
	t.Run("window registration must be symmetric", func(t *testing.T) {
		sys := newSys(t, fabric.Topology{NRanks: 2}, nil)
		comms, _ := sys.CommInitAll(fabric.CommConfig{})
		_, err := fabric.CommWindowRegister(comms[0], 4096, fabric.WinCollSymmetric)
		require.NoError(t, err)
		_, err = fabric.CommWindowRegister(comms[1], 8192, fabric.WinCollSymmetric)
		requireResult(t, err, fabric.InvalidUsage, "symmetric allocation 0 differs")
	})
}

// Team math of spec §2, including the worked example: cftSize 16,
// cftMcSize 4, flat rank 6.
func TestTeams(t *testing.T) {
	sys := newSys(t, fabric.Topology{NRanks: 32, LsaSize: 8, CftSize: 16, CftMcSize: 4}, nil)
	comms, err := sys.CommInitAll(fabric.CommConfig{})
	require.NoError(t, err)
	c := comms[22] // flat group 1, flat rank 6, LSA rank 6
	dc, err := fabric.DevCommCreate(c, fabric.DevCommRequirements{CftCaps: fabric.CapCft | fabric.CapCftMultimem})
	require.NoError(t, err)
	cases := []struct {
		mode fabric.CftTeamMode
		want fabric.Team
	}{
		{fabric.CftTeamFlat, fabric.Team{NRanks: 16, Rank: 6, Stride: 1}},
		{fabric.CftTeamHierMultimem, fabric.Team{NRanks: 4, Rank: 1, Stride: 4}},
		{fabric.CftTeamHierLsa, fabric.Team{NRanks: 2, Rank: 0, Stride: 8}},
		{fabric.CftTeamMode(7), fabric.Team{}},
	}
	for _, tc := range cases {
		require.Equal(t, tc.want, fabric.TeamCft(dc, tc.mode), "%v device", tc.mode)
		require.Equal(t, tc.want, fabric.HostTeamCft(c, tc.mode), "%v host", tc.mode)
	}
	mm := fabric.TeamCftMultimem(dc)
	require.Equal(t, fabric.Team{NRanks: 4, Rank: 2, Stride: 1}, mm)
	require.Equal(t, mm, fabric.HostTeamCftMultimem(c))

	hier := fabric.TeamCft(dc, fabric.CftTeamHierMultimem)
	var members []int
	for j := 0; j < hier.NRanks; j++ {
		members = append(members, dc.TeamRankToWorld(hier, j)-(dc.Rank-dc.CftRank))
	}
	require.Equal(t, []int{2, 6, 10, 14}, members, "flat ranks of the hier-multimem team")
	require.Equal(t, 30, dc.TeamRankToWorld(hier, 3))
	require.Equal(t, 10, dc.TeamRankToLsa(hier, 2), "lsaRank + (r − rank) × stride, unbounded by lsaSize")

	flat := fabric.TeamCft(dc, fabric.CftTeamFlat)
	got, ok := fabric.TeamRankInTeam(flat, hier, 3)
	require.True(t, ok)
	require.Equal(t, 14, got)
	got, ok = fabric.TeamRankInTeam(hier, flat, 10)
	require.True(t, ok)
	require.Equal(t, 2, got)
	_, ok = fabric.TeamRankInTeam(hier, flat, 7)
	require.False(t, ok, "flat rank 7 is not in the hier-multimem team of rank 6")
}

func TestDeviceLeInfo(t *testing.T) {
	r := newRig(t, 1, job.FabricConfig{Topology: fabric.Topology{NRanks: 16, LsaSize: 4, CftSize: 8, CftMcSize: 4}})
	dc := r.DevComms[14] // flat group 1, flat rank 6, multicast group 3
	w := r.V[14]
	hier := fabric.TeamCft(dc, fabric.CftTeamHierMultimem) // {2, 1, 4}
	le, off := fabric.GetCftLeInfo(w, 16, 0, hier, dc)
	require.Equal(t, fabric.UcLeBase+8+2, le, "flat rank 2 of flat group 1")
	require.Equal(t, w.McOffset4K<<12+16, off)
	le, _ = fabric.GetPeerLeInfo(w, 0, 9, dc)
	require.Equal(t, fabric.UcLeBase+8+1, le)
	le, _ = fabric.GetMultimemLeInfo(w, 0, dc)
	require.Equal(t, fabric.McLeBase+3, le)
	hle, hoff, err := fabric.GetCftDeviceLeInfo(w, 16, 0, hier)
	require.NoError(t, err)
	require.Equal(t, fabric.UcLeBase+8+2, hle, "host and device agree")
	require.Equal(t, off, hoff)
}

// A phantom window costs no memory: 1 GiB windows on 4 ranks allocate
// nothing but bookkeeping, and read as zeros.
func TestPhantomWindowsHaveNoBytes(t *testing.T) {
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	before := heap()
	sys, err := fabric.NewSystem(sim.New(sim.Config{Seed: 1}), fabric.Config{Topology: fabric.Topology{NRanks: 4}, Phantom: true, MemBytes: 2 << 30, Env: map[string]string{}})
	require.NoError(t, err)
	comms, err := sys.CommInitAll(fabric.CommConfig{})
	require.NoError(t, err)
	var w fabric.Window
	for _, c := range comms {
		w, err = fabric.CommWindowRegister(c, 1<<30, fabric.WinCollSymmetric)
		require.NoError(t, err)
	}
	require.Less(t, int64(heap())-int64(before), int64(1<<20), "phantom windows allocate no bytes")
	require.NoError(t, sys.Write(3, w, 0, []byte{1, 2, 3}))
	got, err := sys.Read(3, w, 0, 3)
	require.NoError(t, err)
	require.Equal(t, []byte{0, 0, 0}, got, "a phantom window reads as zeros")
	runtime.KeepAlive(sys)

	_, err = fabric.NewSystem(sim.New(sim.Config{Seed: 1}), fabric.Config{Topology: fabric.Topology{NRanks: 2}, Phantom: true, Debug: true})
	require.ErrorContains(t, err, "Phantom with Debug")
}
