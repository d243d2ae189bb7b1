package fabric

import "fmt"

// Topology is the emulated system's shape: how many ranks there are and how
// they group into NVLink (LSA) domains, the CFT unicast group (the flat CFT
// team) and multicast groups. Every group is a block of consecutive world
// ranks; NCCL assumes the same for the flat team (ncclGetPeerLeInfo adds
// world-rank differences to the flat rank).
//
// NCCL 2.31 collapses CftSize and CftMcSize to LsaSize (computeCftSize,
// computeCftMcSize in src/cft_dev_runtime.cc); the emulator keeps them
// independent so that hierarchical teams have more than one rank (spec §2.2).
type Topology struct {
	NRanks int // world size
	// LsaSize is the ranks per NVLink (LSA) domain; 0 means NRanks.
	LsaSize int
	// CftSize is the CFT unicast group (flat team) size; 0 means LsaSize,
	// as NCCL 2.31 computes it. A multiple of LsaSize and of CftMcSize.
	CftSize int
	// CftMcSize is the multicast group size; 0 means CftSize (NCCL 2.31:
	// lsaSize for both).
	CftMcSize int
	// NoCft lists world ranks whose device lacks CFT logical endpoints
	// (CU_DEVICE_ATTRIBUTE_LOGICAL_ENDPOINT_UNICAST_SUPPORTED = 0).
	NoCft []int
	// NoMulticast says NVLS / multicast LEs are unsupported on this system.
	NoMulticast bool
	// PutToSelf says a device may access its own unicast LE (CUDA's
	// separate attribute for owner access; spec §1.3 [inferred]). Off by
	// default: NCCL's own barrier never targets self.
	PutToSelf bool
}

// Normalize fills in defaults and checks the shape. It returns an error
// naming the field that is wrong.
func (t Topology) Normalize() (Topology, error) {
	if t.NRanks < 1 {
		return t, fmt.Errorf("fabric topology: NRanks %d: need at least 1", t.NRanks)
	}
	if t.LsaSize == 0 {
		t.LsaSize = t.NRanks
	}
	if t.CftSize == 0 {
		t.CftSize = t.LsaSize
	}
	if t.CftMcSize == 0 {
		t.CftMcSize = t.CftSize
	}
	switch {
	case t.LsaSize < 1 || t.NRanks%t.LsaSize != 0:
		return t, fmt.Errorf("fabric topology: LsaSize %d must divide NRanks %d", t.LsaSize, t.NRanks)
	case t.CftSize < 1 || t.NRanks%t.CftSize != 0:
		return t, fmt.Errorf("fabric topology: CftSize %d must divide NRanks %d", t.CftSize, t.NRanks)
	case t.CftSize%t.LsaSize != 0:
		return t, fmt.Errorf("fabric topology: CftSize %d must be a multiple of LsaSize %d (the flat team is made of whole NVLink domains)", t.CftSize, t.LsaSize)
	case t.CftMcSize < 1 || t.CftSize%t.CftMcSize != 0:
		return t, fmt.Errorf("fabric topology: CftMcSize %d must divide CftSize %d", t.CftMcSize, t.CftSize)
	}
	for _, r := range t.NoCft {
		if r < 0 || r >= t.NRanks {
			return t, fmt.Errorf("fabric topology: NoCft lists rank %d outside [0, %d)", r, t.NRanks)
		}
	}
	return t, nil
}

// LsaRank is world rank r's rank in its NVLink domain.
func (t Topology) LsaRank(r int) int { return r % t.LsaSize }

// CftRank is world rank r's rank in its flat CFT team.
func (t Topology) CftRank(r int) int { return r % t.CftSize }

// CftMultimemRank is world rank r's rank in its multicast group.
func (t Topology) CftMultimemRank(r int) int { return r % t.CftMcSize }

// flatGroup and mcGroup number the groups of the whole system.
func (t Topology) flatGroup(r int) int { return r / t.CftSize }
func (t Topology) mcGroup(r int) int   { return r / t.CftMcSize }
