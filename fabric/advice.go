package fabric

import (
	"fmt"

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
