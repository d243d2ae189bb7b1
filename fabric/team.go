package fabric

import "fmt"

// CftTeamMode is ncclCftTeamMode_t.
type CftTeamMode int

const (
	CftTeamFlat         CftTeamMode = 0 // NCCL_CFT_TEAM_FLAT
	CftTeamHierMultimem CftTeamMode = 1 // NCCL_CFT_TEAM_HIER_MULTIMEM
	CftTeamHierLsa      CftTeamMode = 2 // NCCL_CFT_TEAM_HIER_LSA
)

func (m CftTeamMode) String() string {
	switch m {
	case CftTeamFlat:
		return "NCCL_CFT_TEAM_FLAT"
	case CftTeamHierMultimem:
		return "NCCL_CFT_TEAM_HIER_MULTIMEM"
	case CftTeamHierLsa:
		return "NCCL_CFT_TEAM_HIER_LSA"
	}
	return fmt.Sprintf("ncclCftTeamMode(%d)", int(m))
}

// Team is ncclTeam: an arithmetic progression in world-rank space. Member j
// has world rank myWorld + (j − Rank) × Stride. The zero Team is the empty
// team NCCL's host calls return for an invalid mode.
type Team struct {
	NRanks int
	Rank   int
	Stride int
}

func (t Team) String() string {
	return fmt.Sprintf("{nRanks %d, rank %d, stride %d}", t.NRanks, t.Rank, t.Stride)
}

// teamOuterFactor is ncclTeamOuterFactor: {p.nRanks / k, p.rank / k,
// p.stride × k}. Integer division truncates, so a parent smaller than k
// gives an empty team, as in NCCL.
func teamOuterFactor(p Team, k int) Team {
	if k <= 0 {
		return Team{}
	}
	return Team{NRanks: p.NRanks / k, Rank: p.Rank / k, Stride: p.Stride * k}
}

// TeamRankToWorld is ncclTeamRankToWorld: comm.rank + (r − tm.rank) × stride.
func (dc DevComm) TeamRankToWorld(tm Team, r int) int { return dc.Rank + (r-tm.Rank)*tm.Stride }

// TeamRankToLsa is ncclTeamRankToLsa: comm.lsaRank + (r − tm.rank) × stride.
func (dc DevComm) TeamRankToLsa(tm Team, r int) int { return dc.LsaRank + (r-tm.Rank)*tm.Stride }

// TeamRankInTeam is ncclTeamRankToTeam: the rank in team a of rank bRank of
// team b (both teams of the same caller). ok is ncclTeamRankIsMember: the
// world offset is a multiple of a's stride and the rank is in [0, a.NRanks).
// Go's truncating / and % reproduce the C source (spec §2.1).
func TeamRankInTeam(a, b Team, bRank int) (aRank int, ok bool) {
	if a.Stride == 0 {
		return 0, false
	}
	w := (bRank - b.Rank) * b.Stride
	aRank = a.Rank + w/a.Stride
	return aRank, w%a.Stride == 0 && aRank >= 0 && aRank < a.NRanks
}

// TeamWorld, TeamLsa and TeamRail are NCCL's predefined teams.
func TeamWorld(dc DevComm) Team { return Team{NRanks: dc.NRanks, Rank: dc.Rank, Stride: 1} }

// TeamLsa is ncclTeamLsa.
func TeamLsa(dc DevComm) Team { return Team{NRanks: dc.LsaSize, Rank: dc.LsaRank, Stride: 1} }

// TeamRail is ncclTeamRail: the outer factor of world by lsaSize.
func TeamRail(dc DevComm) Team { return teamOuterFactor(TeamWorld(dc), dc.LsaSize) }

// cftTeam builds the teams of spec §2.2 from a rank's sizes; ok is false for
// an invalid mode.
func cftTeam(cftRank, cftSize, mcSize, lsaSize int, mode CftTeamMode) (Team, bool) {
	flat := Team{NRanks: cftSize, Rank: cftRank, Stride: 1}
	switch mode {
	case CftTeamFlat:
		return flat, true
	case CftTeamHierMultimem:
		return teamOuterFactor(flat, mcSize), true
	case CftTeamHierLsa:
		return teamOuterFactor(flat, lsaSize), true
	}
	return Team{}, false
}

// TeamCft is the device-side ncclTeamCft(devComm, mode). An invalid mode
// gives the empty team, as the host version does (the device version has no
// error path).
func TeamCft(dc DevComm, mode CftTeamMode) Team {
	t, _ := cftTeam(dc.CftRank, dc.CftSize, dc.CftMultimemSize, dc.LsaSize, mode)
	return t
}

// TeamCftMultimem is the device-side ncclTeamCftMultimem(devComm).
func TeamCftMultimem(dc DevComm) Team {
	return Team{NRanks: dc.CftMultimemSize, Rank: dc.CftMultimemRank, Stride: 1}
}

// HostTeamCft is the host-side ncclTeamCft(comm, mode). A comm without CFT
// has cftSize 1 (computeCftSize). An invalid mode gives the empty team.
func HostTeamCft(c *Comm, mode CftTeamMode) Team {
	if c == nil {
		return Team{}
	}
	cr, cs, ms := c.cftSizes()
	t, _ := cftTeam(cr, cs, ms, c.LsaSize, mode)
	return t
}

// HostTeamCftMultimem is the host-side ncclTeamCftMultimem(comm).
func HostTeamCftMultimem(c *Comm) Team {
	if c == nil {
		return Team{}
	}
	cr, cs, ms := c.cftSizes()
	_ = cs
	mr := cr % ms
	return Team{NRanks: ms, Rank: mr, Stride: 1}
}
