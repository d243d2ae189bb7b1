package cco

import (
	"fmt"

	"github.com/emud-dev/emud/ring"
)

// Option is one template argument of a device call: a Coop scope, a signal
// flag, OptFlags or a ThreadMode. Restrictions that C++ enforces at compile
// time (static_assert, unknown flag bits) fail the kernel at the call.
type Option interface{ apply(opts) (opts, error) }

// Coop is the cooperative scope of a call (ccoCoopThread/Warp/Block).
type Coop uint8

const (
	CoopThread Coop = iota // every calling lane, with its own arguments
	CoopWarp               // lane 0 of the wave posts; the rest return
	CoopBlock              // thread 0 of the block posts; the rest return
)

var coopNames = [...]string{"ccoCoopThread", "ccoCoopWarp", "ccoCoopBlock"}

func (c Coop) String() string {
	if int(c) < len(coopNames) {
		return coopNames[c]
	}
	return fmt.Sprintf("Coop(%d)", c)
}

// apply takes and returns opts by value: a pointer through the interface
// call would make every device call allocate.
func (c Coop) apply(o opts) (opts, error) {
	if c > CoopBlock {
		return o, fmt.Errorf("unknown coop scope %d", c)
	}
	if o.coopSet && o.coop != c {
		return o, fmt.Errorf("two coop scopes given (%v and %v)", o.coop, c)
	}
	o.coop, o.coopSet = c, true
	return o, nil
}

// Signal selects the trailing ATOMICs of a put: LocalSignal increments
// your own signalBuf[myLsaRank × n + q], RemoteSignal the peer's.
type Signal uint8

const (
	LocalSignal  Signal = 1
	RemoteSignal Signal = 2
)

func (s Signal) apply(o opts) (opts, error) {
	switch s {
	case LocalSignal:
		o.local = true
	case RemoteSignal:
		o.remote = true
	default:
		return o, fmt.Errorf("unknown signal option %d", s)
	}
	return o, nil
}

// OptFlags is the ccoSdmaOptFlags bitmask.
type OptFlags uint32

const (
	SdmaOptFlagsDefault OptFlags = 0
	// SdmaOptFlagsAggregate posts without ringing the doorbell; Commit rings
	// the batch.
	SdmaOptFlagsAggregate OptFlags = 1
	// SdmaOptFlagsSignalPerCopy gives every lane's copy its own signals.
	SdmaOptFlagsSignalPerCopy OptFlags = 2
)

func (f OptFlags) apply(o opts) (opts, error) {
	if f&^(SdmaOptFlagsAggregate|SdmaOptFlagsSignalPerCopy) != 0 {
		return o, fmt.Errorf("optFlags %#x has unknown bits (only Aggregate = 1 and SignalPerCopy = 2 exist): a compile error in C++", uint32(f))
	}
	o.flags |= f
	return o, nil
}

// ThreadMode is ccoSdmaThreadMode: how lanes of one wave that call put
// together are grouped.
type ThreadMode uint8

const (
	// SdmaThreadIndependent detects the shape at run time: lanes on
	// distinct queues post in parallel, lanes sharing one are grouped.
	SdmaThreadIndependent ThreadMode = 0
	// SdmaThreadSameQueue promises every active lane has the same peer and
	// queueId: one reservation and one doorbell for the wave.
	SdmaThreadSameQueue ThreadMode = 1
	// SdmaThreadLegacyPerLane is not a MORI mode: it is the pre-grouping
	// behaviour in which every lane runs its own commit chain. On a shared
	// queue it deadlocks exactly as cco.hpp's comment describes; it exists
	// as the regression scenario of the same-queue warp-issue test.
	SdmaThreadLegacyPerLane ThreadMode = 2
)

var modeNames = [...]string{"ccoSdmaThreadIndependent", "ccoSdmaThreadSameQueue", "legacy per-lane (not MORI)"}

func (m ThreadMode) String() string {
	if int(m) < len(modeNames) {
		return modeNames[m]
	}
	return fmt.Sprintf("ThreadMode(%d)", m)
}

func (m ThreadMode) apply(o opts) (opts, error) {
	if m > SdmaThreadLegacyPerLane {
		return o, fmt.Errorf("unknown thread mode %d", m)
	}
	if o.modeSet && o.mode != m {
		return o, fmt.Errorf("two thread modes given (%v and %v)", o.mode, m)
	}
	o.mode, o.modeSet = m, true
	return o, nil
}

// Cmp is ccoSdmaCmp, the POLL_REGMEM function on (*addr & mask) vs value.
type Cmp = ring.CompareFunc

const (
	SdmaCmpAlways = ring.CmpAlways
	SdmaCmpLt     = ring.CmpLT
	SdmaCmpLe     = ring.CmpLE
	SdmaCmpEq     = ring.CmpEQ
	SdmaCmpNe     = ring.CmpNE
	SdmaCmpGe     = ring.CmpGE
	SdmaCmpGt     = ring.CmpGT
)

type opts struct {
	coop    Coop
	coopSet bool
	local   bool
	remote  bool
	flags   OptFlags
	mode    ThreadMode
	modeSet bool
}

func (o *opts) aggregate() bool     { return o.flags&SdmaOptFlagsAggregate != 0 }
func (o *opts) signalPerCopy() bool { return o.flags&SdmaOptFlagsSignalPerCopy != 0 }

// optKind says which template parameters a call takes.
type optKind uint8

const (
	optsPut       optKind = iota // Coop, signals, flags, mode
	optsScoped                   // Coop only (commit, quiet, quietQueue)
	optsNone                     // nothing (waitSignal)
	optsWait                     // Coop, Aggregate (postWaitMem, postWaitSignal)
	optsBroadcast                // Coop, signals, Aggregate
	optsWaitPut                  // signals, Aggregate; thread scope only
)

// parse applies opts and enforces the compile-time rules of call.
func parse(call string, k optKind, list []Option) (opts, error) {
	var o opts
	for _, x := range list {
		if x == nil {
			return o, fmt.Errorf("nil option")
		}
		var err error
		if o, err = x.apply(o); err != nil {
			return o, err
		}
	}
	sigs := o.local || o.remote
	switch k {
	case optsPut:
		if o.modeSet && o.coop != CoopThread {
			return o, fmt.Errorf("%v is only meaningful for ccoCoopThread (static_assert), not %v", o.mode, o.coop)
		}
	case optsScoped, optsNone:
		if sigs || o.flags != 0 || o.modeSet {
			return o, fmt.Errorf("%s takes no signal, optFlags or thread-mode argument", call)
		}
		if k == optsNone && o.coopSet {
			return o, fmt.Errorf("%s takes no coop scope", call)
		}
	case optsWait, optsBroadcast, optsWaitPut:
		if o.flags&^SdmaOptFlagsAggregate != 0 {
			return o, fmt.Errorf("%s accepts only ccoSdmaOptFlagsAggregate (got optFlags %#x)", call, uint32(o.flags))
		}
		if o.modeSet {
			return o, fmt.Errorf("%s posts from a single issuer and takes no thread mode", call)
		}
		if k == optsWait && sigs {
			return o, fmt.Errorf("%s takes no signal arguments", call)
		}
		if k == optsWaitPut && o.coop != CoopThread {
			return o, fmt.Errorf("%s is thread scope only, not %v", call, o.coop)
		}
	}
	return o, nil
}
