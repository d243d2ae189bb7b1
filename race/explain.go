package race

import (
	"fmt"
	"sync"
)

// OpKind is what sort of operation made an access, as the layer that made
// it knows it: it picks the advice a report gives for the missing edge.
type OpKind uint8

const (
	OpOther        OpKind = iota // unknown: the report gives generic advice
	OpLane                       // a lane's load or store (package kernel: device or shared memory)
	OpPacket                     // an SDMA packet's read or write (package engine)
	OpFabric                     // a fabric operation's access to a rank's memory (package fabric)
	OpFabricShared               // a fabric operation's access to its issuer's shared memory (a put's source, a get's destination)
	OpHost                       // host code
	OpGin                        // a GIN operation's (NIC's) read or write of a rank's memory (package fabric)
	OpGinSignal                  // a GIN signal's atomic update of its slot (package fabric)
)

// Edge is what advice is asked about: the earlier and the later access of
// a race, as reported, with what the layers said of them.
type Edge struct {
	Prev, Cur           Side
	PrevOp, CurOp       OpKind
	PrevQueue, CurQueue string // the SDMA queues (OpPacket), else empty
	// PrevPoster and CurPoster name who posted the packets (OpPacket),
	// when the layer knew ([Info.Poster]); else empty.
	PrevPoster, CurPoster string
	PrevProxy, CurProxy   Proxy
	// CurWait is the last wait that released the later access's thread
	// before it ([Thread.Waited]), if its layer recorded one: the wait
	// made, the value that released it and who wrote that value, so the
	// advice can say what happened rather than guess from the kinds.
	CurWait *Wait
	// PrevWait is the same for the earlier access's thread (a lane that
	// read before the data landed).
	PrevWait *Wait
}

// Wait is a wait that released a thread (a waitSignal that returned), as
// the layer that made it words it, with who wrote the value that
// released it (from the word's write log).
type Wait struct {
	What    string // "waitSignal on signalBuf[0 × 2 + 1] ≥ 2"
	At      int64  // when it returned, picoseconds
	By      string // who wrote the releasing value; "" unknown
	ByAt    int64  // when
	ByQueue string // the SDMA queue whose write released it, if one did
	// ByPoster is who posted the packet whose write released it, if the
	// engine knew (two blocks sharing one queue and slot differ here).
	ByPoster string
}

// maxWaits bounds the waits a thread remembers.
const maxWaits = 8

// Waited records that a wait released t (for the advice of a later race
// report; no synchronisation is implied). Each thread keeps its last
// maxWaits.
func (t *Thread) Waited(w Wait) {
	if t == nil {
		return
	}
	if len(t.waits) == maxWaits {
		copy(t.waits, t.waits[1:])
		t.waits = t.waits[:maxWaits-1]
	}
	t.waits = append(t.waits, w)
}

// lastWait is the last wait at or before time at of the thread that
// recorded clock clk in slot tid.
func (d *Detector) lastWait(tid int32, clk uint32, at int64) *Wait {
	if tid < 0 || int(tid) >= len(d.threads) || d.threads[tid] == nil {
		return nil
	}
	ws := d.threads[tid].waits
	if clk < d.threads[tid].base {
		ws = d.threads[tid].prev // the slot's previous occupant (retire.go)
	}
	for i := len(ws) - 1; i >= 0; i-- {
		if ws[i].At <= at {
			w := ws[i]
			return &w
		}
	}
	return nil
}

// Advice says, in plain words, what the program should have done to order
// an edge's later access after its earlier one ("the lane did not …").
type Advice func(e Edge) string

var (
	adviceMu    sync.RWMutex
	advice      = map[[2]OpKind]Advice{}
	proxyAdvice Advice
)

// RegisterAdvice makes a the advice for races whose earlier access is of
// kind prev and later of kind cur. The layer that knows the operations
// registers it, from an init function (kernel: lane after lane; cco:
// packets and lanes; fabric: fabric operations and lanes). A pair has one
// advisor: registering a second panics, as a programming error.
func RegisterAdvice(prev, cur OpKind, a Advice) {
	adviceMu.Lock()
	defer adviceMu.Unlock()
	k := [2]OpKind{prev, cur}
	if advice[k] != nil {
		panic(fmt.Sprintf("race: advice for (%d, %d) registered twice", prev, cur))
	}
	advice[k] = a
}

// RegisterProxyAdvice makes a the advice for races whose accesses are
// ordered by happens-before but not made visible across proxies; the
// fabric, which owns the proxies, registers it. Registering a second
// panics.
func RegisterProxyAdvice(a Advice) {
	adviceMu.Lock()
	defer adviceMu.Unlock()
	if proxyAdvice != nil {
		panic("race: proxy advice registered twice")
	}
	proxyAdvice = a
}

func adviceFor(prev, cur OpKind, proxyOnly bool) Advice {
	adviceMu.RLock()
	defer adviceMu.RUnlock()
	if proxyOnly {
		return proxyAdvice
	}
	return advice[[2]OpKind{prev, cur}]
}

// missing says, in plain words, what would have ordered cur after prev:
// who is not ordered after whom, and the advice of the layer that knows
// the two operations (RegisterAdvice), or generic words when none does.
func (d *Detector) missing(prev, cur *ep, proxyOnly bool) string {
	p, c := prev.info, cur.info
	if p == nil || c == nil {
		return "nothing orders the second access after the first"
	}
	head := fmt.Sprintf("the %s by %s is not ordered after the %s by %s", c.Op, c.Who, p.Op, p.Who)
	e := Edge{Prev: side(prev), Cur: side(cur), PrevOp: p.OpKind, CurOp: c.OpKind,
		PrevProxy: prev.proxy, CurProxy: cur.proxy, CurWait: d.lastWait(cur.tid, cur.clk, cur.at), PrevWait: d.lastWait(prev.tid, prev.clk, prev.at)}
	if p.OpKind == OpPacket {
		e.PrevQueue = p.Queue
		if p.Poster != nil {
			e.PrevPoster = p.Poster.String()
		}
	}
	if c.OpKind == OpPacket {
		e.CurQueue = c.Queue
		if c.Poster != nil {
			e.CurPoster = c.Poster.String()
		}
	}
	words := ""
	if a := adviceFor(p.OpKind, c.OpKind, proxyOnly); a != nil {
		words = a(e)
	}
	if proxyOnly {
		if words == "" {
			words = "the writer must release it toward the reader's proxy after the write, and the reader acquire that release before the read"
		}
		return fmt.Sprintf("%s for the %v proxy: it happens after it, but the write was not made visible from the %v proxy to the %v proxy: %s",
			head, cur.proxy, prev.proxy, cur.proxy, words)
	}
	if words == "" {
		words = "no release and acquire pair between their actors orders them"
	}
	return head + ": " + words
}
