package race

import (
	"fmt"
	"strings"
)

// missing says, in plain words, what would have ordered cur after prev.
func missing(prev, cur *ep, proxyOnly bool) string {
	p, c := prev.info, cur.info
	if p == nil || c == nil {
		return "nothing orders the second access after the first"
	}
	head := fmt.Sprintf("the %s by %s is not ordered after the %s by %s", c.Op, c.Who, p.Op, p.Who)
	if proxyOnly {
		return fmt.Sprintf("%s for the %v proxy: it happens after it, but the write was not made visible from the %v proxy to the %v proxy: the writer's rank must release it (ncclMemFence(release, %v → %v, Sys), or a barrier arrive with a release order and producer %v, consumer %v) after the write, and %s acquire (ncclMemFence(acquire, %v → %v, Sys), or a barrier wait with an acquire order and the same proxies) after that",
			head, cur.proxy, prev.proxy, cur.proxy, prev.proxy, cur.proxy, prev.proxy, cur.proxy, c.Who, prev.proxy, cur.proxy)
	}
	return head + ": " + fix(prev, cur)
}

func fix(prev, cur *ep) string {
	p, c := prev.info, cur.info
	switch p.Kind {
	case KindSDMA:
		switch c.Kind {
		case KindLane:
			if !prev.write {
				return fmt.Sprintf("the lane did not quiet or quietQueue %s (or waitSignal on the local signal it raises after that packet) before overwriting the bytes it reads", p.Queue)
			}
			return fmt.Sprintf("it did not waitSignal (or postWaitSignal) on a slot that %s signals after that packet, nor quiet or quietQueue that queue, before the %s", p.Queue, c.Op)
		case KindSDMA:
			return fmt.Sprintf("the lane that posted %s's packet had not waited for %s's packet (no waitSignal on a slot that %s signals after it, no quiet of that queue) before posting, and %s did not wait for such a signal itself (postWaitSignal)", c.Queue, p.Queue, p.Queue, c.Queue)
		}
	case KindLane:
		switch c.Kind {
		case KindSDMA:
			return fmt.Sprintf("the lane's access came after it posted the packet (a post orders only what its lane did before it), or was by another wave that nothing ordered before the post; %s did not wait (postWaitMem or postWaitSignal) for a flag stored with release or a signal raised after the lane's access", c.Queue)
		case KindLane:
			return "the two waves have nothing between them: no SyncThreads (same block), no kernel boundary or host wait, no release store and acquire load (or signal and waitSignal) pair"
		case KindFabric:
			if strings.Contains(c.Op, "shared memory") {
				return "the lane's store came after the submit that handed the operation to the fabric; write the buffer before submitting"
			}
			return "no barrier (or flag put after a flush) orders the fabric operation after the lane's access"
		}
	case KindFabric:
		switch c.Kind {
		case KindLane:
			if strings.Contains(p.Op, "shared memory") && !prev.write {
				return "the lane did not wait for ncclCft::flushSmem (or flush) before reusing the shared-memory source"
			}
			if !prev.write {
				return "the lane did not wait for the operation to complete (the issuer's flush, then a barrier or flag that orders this access) before writing the bytes it reads"
			}
			return "the issuer's flush, then a barrier (or a flag put after the flush) that this lane's rank waited on with an acquire (a wait with order acquire or acq_rel, or ncclMemFence(acquire) after it), must come between the write and this access"
		case KindFabric:
			return "the second operation was submitted without waiting (flush, then a barrier or flag) for the first to complete"
		}
	}
	return "no release and acquire pair between their actors orders them"
}
