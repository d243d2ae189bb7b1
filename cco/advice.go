package cco

import (
	"fmt"

	"github.com/emud-dev/emud/race"
)

// cco knows what orders a lane and an SDMA queue, or two queues: the
// race detector's advice for those edges (race.RegisterAdvice), in the
// ccoSdma API's words.
func init() {
	race.RegisterAdvice(race.OpPacket, race.OpLane, func(e race.Edge) string {
		if !e.Prev.Write {
			return fmt.Sprintf("the lane did not quiet or quietQueue %s (or waitSignal on the local signal it raises after that packet) before overwriting the bytes it reads", e.PrevQueue)
		}
		return fmt.Sprintf("it did not waitSignal (or postWaitSignal) on a slot that %s signals after that packet, nor quiet or quietQueue that queue, before the %s", e.PrevQueue, e.Cur.Op)
	})
	race.RegisterAdvice(race.OpPacket, race.OpPacket, func(e race.Edge) string {
		return fmt.Sprintf("the lane that posted %s's packet had not waited for %s's packet (no waitSignal on a slot that %s signals after it, no quiet of that queue) before posting, and %s did not wait for such a signal itself (postWaitSignal)",
			e.CurQueue, e.PrevQueue, e.PrevQueue, e.CurQueue)
	})
	race.RegisterAdvice(race.OpLane, race.OpPacket, func(e race.Edge) string {
		return fmt.Sprintf("the lane's access came after it posted the packet (a post orders only what its lane did before it), or was by another wave that nothing ordered before the post; %s did not wait (postWaitMem or postWaitSignal) for a flag stored with release or a signal raised after the lane's access", e.CurQueue)
	})
}
