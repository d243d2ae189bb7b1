package fabric

import (
	"fmt"
	"math/rand/v2"
)

// ReportInjected is the default report code of an injected fabric error.
// The real codes are decoded by cudaFabricOpErrorStatusGet/Count, which no
// public document lists; any nonzero 8-bit value is a report.
const ReportInjected uint8 = 0x01

// FaultStream is the sim.Rand stream fault injection draws from, so that
// other consumers of randomness do not shift the plan.
const FaultStream = 0xfab1c

// FaultPlan injects faults into a run, reproducibly from the run's seed.
type FaultPlan struct {
	// OpFailRate is the chance that a user data operation (put, get, red,
	// their multicast and cpMask forms, pullRed) fails in the fabric: its
	// data does not land and the flush of its phase reports Code.
	OpFailRate float64
	// FailOps fails chosen operations: the Op-th data operation (from 0)
	// issued by world rank Rank during the run.
	FailOps []OpRef
	// Code is the report code of injected failures; 0 means ReportInjected.
	Code uint8
	// DropBarrier loses every arrival of a rank at a CFT barrier in the
	// fabric, so its peers' waits never complete (timeouts, hang reports).
	DropBarrier []BarrierRef
}

// OpRef names one data operation of a rank.
type OpRef struct {
	Rank int
	Op   int
}

// BarrierRef names one rank's CFT barrier slot.
type BarrierRef struct {
	Rank     int
	Index    int
	Multimem bool
}

func (p FaultPlan) check(t Topology) error {
	if !(p.OpFailRate >= 0 && p.OpFailRate <= 1) {
		return fmt.Errorf("fabric fault plan: OpFailRate %v outside [0, 1]", p.OpFailRate)
	}
	for _, f := range p.FailOps {
		if f.Rank < 0 || f.Rank >= t.NRanks || f.Op < 0 {
			return fmt.Errorf("fabric fault plan: FailOps entry %+v: rank outside [0, %d) or negative op", f, t.NRanks)
		}
	}
	for _, b := range p.DropBarrier {
		if b.Rank < 0 || b.Rank >= t.NRanks || b.Index < 0 {
			return fmt.Errorf("fabric fault plan: DropBarrier entry %+v: rank outside [0, %d) or negative index", b, t.NRanks)
		}
	}
	return nil
}

type faultState struct {
	plan FaultPlan
	rng  *rand.Rand
	fail map[OpRef]bool
	drop map[BarrierRef]bool
	// Injected lists the operations failed so far, for reports.
	injected []string
}

func newFaultState(sys *System, p FaultPlan) *faultState {
	f := &faultState{plan: p, rng: sys.s.Rand(FaultStream), fail: map[OpRef]bool{}, drop: map[BarrierRef]bool{}}
	if f.plan.Code == 0 {
		f.plan.Code = ReportInjected
	}
	for _, o := range p.FailOps {
		f.fail[o] = true
	}
	for _, b := range p.DropBarrier {
		f.drop[b] = true
	}
	return f
}

// decide numbers a user op and fails it if the plan says so.
func (f *faultState) decide(o *fop) {
	r := o.mbRank()
	seq := r.opSeq
	r.opSeq++
	fail := len(f.fail) > 0 && f.fail[OpRef{o.rank, seq}]
	if !fail && f.plan.OpFailRate > 0 {
		fail = f.rng.Float64() < f.plan.OpFailRate
	}
	if fail {
		o.fail, o.code = true, f.plan.Code
		f.injected = append(f.injected, fmt.Sprintf("rank %d op %d (%s)", o.rank, seq, o.call()))
	}
}

func (o *fop) mbRank() *rankState { return o.mb.sys.ranks[o.rank] }

// InjectedFaults lists the data operations the fault plan failed so far.
func (sys *System) InjectedFaults() []string { return append([]string(nil), sys.faults.injected...) }

func (f *faultState) dropped(rank, index int, multimem bool) bool {
	return f.drop[BarrierRef{rank, index, multimem}]
}
