package fabric_test

import (
	"testing"

	"github.com/emud-dev/emud/fabric"
	"github.com/emud-dev/emud/sim"
	"pgregory.net/rapid"
)

// For any topology, every member of every CFT team is a world rank of the
// caller's flat group, team ranks convert back and forth through the flat
// team, and the device LE of a team peer is ucLeId + its flat rank.
func TestTeamProperties(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		mc := rapid.SampledFrom([]int{1, 2, 4}).Draw(rt, "mc")
		lsa := rapid.SampledFrom([]int{1, 2, 4, 8}).Draw(rt, "lsa")
		mult := rapid.IntRange(1, 4).Draw(rt, "mult")
		cft := max(mc, lsa) * mult
		groups := rapid.IntRange(1, 3).Draw(rt, "groups")
		topo := fabric.Topology{NRanks: cft * groups, LsaSize: lsa, CftSize: cft, CftMcSize: mc}
		sys, err := fabric.NewSystem(sim.New(sim.Config{}), fabric.Config{Topology: topo, Env: map[string]string{}})
		if err != nil {
			rt.Skip(err)
		}
		comms, _ := sys.CommInitAll(fabric.CommConfig{})
		rank := rapid.IntRange(0, topo.NRanks-1).Draw(rt, "rank")
		var win fabric.Window
		for _, c := range comms {
			w, err := fabric.CommWindowRegister(c, 4096, fabric.WinCollSymmetric)
			if err != nil {
				rt.Fatal(err)
			}
			if c.Rank == rank {
				win = w
			}
		}
		dc, err := fabric.DevCommCreate(comms[rank], fabric.DevCommRequirements{CftCaps: fabric.CapCft | fabric.CapCftMultimem})
		if err != nil {
			rt.Fatal(err)
		}
		flat := fabric.TeamCft(dc, fabric.CftTeamFlat)
		base := rank - dc.CftRank
		for _, tm := range []fabric.Team{flat, fabric.TeamCft(dc, fabric.CftTeamHierMultimem), fabric.TeamCft(dc, fabric.CftTeamHierLsa), fabric.TeamCftMultimem(dc)} {
			if tm.Rank < 0 || tm.Rank >= tm.NRanks {
				rt.Fatalf("team %v: own rank out of range", tm)
			}
			for j := 0; j < tm.NRanks; j++ {
				w := dc.TeamRankToWorld(tm, j)
				if w < base || w >= base+topo.CftSize {
					rt.Fatalf("team %v member %d is world rank %d, outside the flat group [%d, %d)", tm, j, w, base, base+topo.CftSize)
				}
				f, ok := fabric.TeamRankInTeam(flat, tm, j)
				if !ok || f != w-base {
					rt.Fatalf("team %v member %d: flat rank %d ok=%v, want %d", tm, j, f, ok, w-base)
				}
				back, ok := fabric.TeamRankInTeam(tm, flat, f)
				if !ok || back != j {
					rt.Fatalf("team %v: flat rank %d maps back to %d ok=%v, want %d", tm, f, back, ok, j)
				}
				le, _ := fabric.GetCftLeInfo(win, 0, j, tm, dc)
				if le != dc.UcLeId+fabric.CftLeId(f) {
					rt.Fatalf("team %v member %d: le %#x, want ucLeId + %d", tm, j, le, f)
				}
				hle, _, err := fabric.GetCftDeviceLeInfo(win, 0, j, tm)
				if err != nil || hle != le {
					rt.Fatalf("host LE %#x (%v) differs from device %#x", hle, err, le)
				}
			}
		}
	})
}
