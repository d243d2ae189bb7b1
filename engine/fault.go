package engine

import (
	"fmt"

	"github.com/emud-dev/emud/sim"
)

// FaultKind names an engine fault or event, after the SDMA interrupt
// sources (docs/sdma-hardware.md §6).
type FaultKind string

// Faults that halt the queue.
const (
	FaultVMHole     FaultKind = "VM_HOLE"             // address outside backed memory
	FaultIllegal    FaultKind = "ILLEGAL_INSTRUCTION" // unknown or unsupported op, sub-op or field
	FaultMisaligned FaultKind = "MISALIGNED"          // atomic not 8-byte aligned, poll/fence not 4-byte aligned
)

// Events that do not halt the queue.
const (
	FaultTrap            FaultKind = "TRAP"
	FaultPollTimeout     FaultKind = "POLL_TIMEOUT"
	FaultDoorbellInvalid FaultKind = "DOORBELL_INVALID"
	FaultCopyOverlap     FaultKind = "COPY_OVERLAP"
)

// Fault is one fault or event raised by a queue.
type Fault struct {
	Kind    FaultKind `json:"kind"`
	Queue   QueueID   `json:"queue"`
	At      sim.Time  `json:"at_ps"`
	Offset  uint64    `json:"ring_offset"` // byte pointer of the packet
	Packet  string    `json:"packet,omitempty"`
	Addr    uint64    `json:"addr,omitempty"`
	Context uint32    `json:"context,omitempty"` // TRAP int_context
	Halts   bool      `json:"halts"`
	Detail  string    `json:"detail"`
}

func (f *Fault) Error() string {
	s := fmt.Sprintf("%s on %v at %v, ring offset %#x", f.Kind, f.Queue, f.At, f.Offset)
	if f.Packet != "" {
		s += " (" + f.Packet + ")"
	}
	s += ": " + f.Detail
	if f.Halts {
		s += "; queue halted"
	}
	return s
}

// faultCodes number the kinds for the trace digest.
var faultCodes = map[FaultKind]uint64{
	FaultVMHole: 1, FaultIllegal: 2, FaultMisaligned: 3,
	FaultTrap: 4, FaultPollTimeout: 5, FaultDoorbellInvalid: 6, FaultCopyOverlap: 7,
}

func (n *Node) raise(f Fault) {
	n.faults = append(n.faults, f)
	q, _ := n.queues.Get(f.Queue)
	n.s.Trace(n.tk.fault, q.subj, faultCodes[f.Kind], f.Offset, f.Addr)
	q.c.fault(f.Kind)
	for _, h := range n.onFault {
		h(f)
	}
	if f.Halts && !n.cfg.KeepGoingOnFault {
		n.s.Fail(&f)
	}
}
