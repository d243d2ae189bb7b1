package fabric

import (
	"fmt"
	"strings"

	"github.com/emud-dev/emud/race"
)

// The fabric knows what orders its operations against lanes and each
// other, and what makes a write visible across proxies: the race
// detector's advice for those edges (race.RegisterAdvice,
// race.RegisterProxyAdvice), in the NCCL device API's words.
func init() {
	race.RegisterProxyAdvice(func(e race.Edge) string {
		p, c := e.PrevProxy, e.CurProxy
		return fmt.Sprintf("the writer's rank must release it (ncclMemFence(release, %v → %v, Sys), or a barrier arrive with a release order and producer %v, consumer %v) after the write, and %s acquire (ncclMemFence(acquire, %v → %v, Sys), or a barrier wait with an acquire order and the same proxies) after that",
			p, c, p, c, e.Cur.Who, p, c)
	})
	race.RegisterAdvice(race.OpLane, race.OpFabricShared, func(race.Edge) string {
		return "the lane's store came after the submit that handed the operation to the fabric; write the buffer before submitting"
	})
	race.RegisterAdvice(race.OpLane, race.OpFabric, func(race.Edge) string {
		return "no barrier (or flag put after a flush) orders the fabric operation after the lane's access"
	})
	afterFabric := func(e race.Edge) string {
		if e.PrevOp == race.OpFabricShared && !e.Prev.Write {
			return "the lane did not wait for ncclCft::flushSmem (or flush) before reusing the shared-memory source"
		}
		if !e.Prev.Write {
			return "the lane did not wait for the operation to complete (the issuer's flush, then a barrier or flag that orders this access) before writing the bytes it reads"
		}
		return "the issuer's flush, then a barrier (or a flag put after the flush) that this lane's rank waited on with an acquire (a wait with order acquire or acq_rel, or ncclMemFence(acquire) after it), must come between the write and this access"
	}
	race.RegisterAdvice(race.OpFabric, race.OpLane, afterFabric)
	race.RegisterAdvice(race.OpFabricShared, race.OpLane, afterFabric)
	both := func(race.Edge) string {
		return "the second operation was submitted without waiting (flush, then a barrier or flag) for the first to complete"
	}
	for _, p := range []race.OpKind{race.OpFabric, race.OpFabricShared} {
		for _, c := range []race.OpKind{race.OpFabric, race.OpFabricShared} {
			race.RegisterAdvice(p, c, both)
		}
	}
}

// GIN's words: which of its guarantees would have ordered the edge
// (gin.go: strong and weak signals, counters, flush, barrier fences).
func init() {
	race.RegisterAdvice(race.OpGin, race.OpLane, func(e race.Edge) string {
		if strings.HasPrefix(e.Prev.Op, "ccoGda") {
			if !e.Prev.Write {
				return "the lane reused the put's source before its completion: ccoGda::flush (or flushAsync then wait, or counter) must come first"
			}
			return "no signal that implies this put's data was waited for before the access: a ccoGda_Signal* on the put itself, a later signal on the same QP (same context, same peer) on an in-order transport, or a GDA barrier after the put; on an out-of-order transport a signal implies only its own put, and ccoGda::flush or counter order the data only on the issuing rank"
		}
		if !e.Prev.Write {
			return "the lane reused the put's source before the NIC had read it: ncclGin::flush (or waitCounter on the put's ncclGin_CounterInc) must come first"
		}
		return "no signal that implies this put's data was waited for (with an acquire) before the access: a signal attached to the put itself, a strong signal posted after it on the same context to the same peer, or a GIN barrier with GinFencePut on that context (or on all contexts). A weak signal implies only its own put; a counter or a flush says only that the source was read"
	})
	race.RegisterAdvice(race.OpLane, race.OpGin, func(e race.Edge) string {
		if !e.Cur.Write {
			return "the lane wrote bytes a GIN operation reads with nothing ordering the two: a put's source must not be rewritten until ncclGin::flush (or waitCounter on its ncclGin_CounterInc) returns, and a get must be posted only after the owner signalled that the data is ready"
		}
		return "the GIN operation was posted without a signal or barrier from the lane's side ordering it after the lane's access (the peer must say it is done with the buffer before it is overwritten or read)"
	})
	race.RegisterAdvice(race.OpGin, race.OpGin, func(race.Edge) string {
		return "two GIN operations reach the same bytes unordered: post the second only after a signal or barrier says the first has settled"
	})
	race.RegisterAdvice(race.OpLane, race.OpGinSignal, func(race.Edge) string {
		return "the slot was written locally (resetSignal, a store or memset) while a peer's signal to it was unordered with that write: resetSignal may not race with modifications of the signal; reset only after waiting for every signal of the epoch, and before the producers are told (by a barrier or another signal) to signal again"
	})
	race.RegisterAdvice(race.OpGinSignal, race.OpLane, func(race.Edge) string {
		return "the slot was written locally (resetSignal, a store or memset) after a peer's signal landed on it, with nothing ordering the two: the signal's increment may be lost; wait for the signal before resetting"
	})
}
