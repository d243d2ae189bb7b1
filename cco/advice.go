package cco

import (
	"fmt"
	"strings"

	"github.com/emud-dev/emud/race"
	"github.com/emud-dev/emud/sim"
)

// cco knows what orders a lane and an SDMA queue, or two queues: the
// race detector's advice for those edges (race.RegisterAdvice), in the
// ccoSdma API's words.
func init() {
	race.RegisterAdvice(race.OpPacket, race.OpLane, func(e race.Edge) string {
		if !e.Prev.Write {
			return fmt.Sprintf("the lane did not quiet or quietQueue %s (or waitSignal on the local signal it raises after that packet) before overwriting the bytes it reads", e.PrevQueue)
		}
		if w := e.CurWait; w != nil && w.ByQueue != "" {
			if s := afterWait(w, e.PrevQueue, e.PrevPoster, e.Prev.AtPs); s != "" {
				return s
			}
		}
		if strings.HasPrefix(e.Prev.Op, "COPY") && strings.HasPrefix(e.Cur.Op, "loadAcquire") {
			return copyFlagAdvice(e)
		}
		return fmt.Sprintf("it did not waitSignal (or postWaitSignal) on a slot that %s signals after that packet, nor quiet or quietQueue that queue, before the %s", e.PrevQueue, e.Cur.Op)
	})
	race.RegisterAdvice(race.OpPacket, race.OpPacket, func(e race.Edge) string {
		return fmt.Sprintf("the lane that posted %s's packet had not waited for %s's packet (no waitSignal on a slot that %s signals after it, no quiet of that queue) before posting, and %s did not wait for such a signal itself (postWaitSignal)",
			e.CurQueue, e.PrevQueue, e.PrevQueue, e.CurQueue)
	})
	race.RegisterAdvice(race.OpLane, race.OpPacket, func(e race.Edge) string {
		if w := e.PrevWait; w != nil && w.ByQueue != "" && e.Cur.Write {
			if s := afterWait(w, e.CurQueue, e.CurPoster, e.Cur.AtPs); s != "" {
				return s // the lane read before the data it waited for landed
			}
		}
		if w := e.PrevWait; w != nil && w.ByQueue == "" && e.Cur.Write {
			by := "no signal (the slot's value from setup, or a wrapped expected value)"
			if w.By != "" {
				by = w.By
			}
			return fmt.Sprintf("the lane did wait (%s, returned at %v), but on a value written by %s, not on a signal %s raised after this packet: the wait held before the data came (a wrong expected value, a wrapped counter, a slot left set from setup); wait for the count %s's signal reaches after the packet", w.What, sim.Time(w.At), by, e.CurQueue, e.CurQueue)
		}
		if e.CurPoster != "" && !sameWave(e.Prev.Who, e.CurPoster) {
			return fmt.Sprintf("the lane's %s came before %s's packet (posted by %s) wrote the bytes, and nothing ordered the two: the lane did not waitSignal on a slot that %s signals after that packet (the wait on the writer's queue that is missing), and %s did not wait (postWaitMem or postWaitSignal) for a flag or signal the lane raised after its access", e.Prev.Op, e.CurQueue, e.CurPoster, e.CurQueue, e.CurQueue)
		}
		return fmt.Sprintf("the lane's access came after it posted the packet (a post orders only what its lane did before it), or was by another wave that nothing ordered before the post; %s did not wait (postWaitMem or postWaitSignal) for a flag stored with release or a signal raised after the lane's access", e.CurQueue)
	})
}

// copyFlagAdvice is the advice for an acquire load of a flag that a COPY
// wrote (a flag put after the data, on the data's queue): the queue's
// order is not a memory ordering for COPY writes. An engine retires one
// packet before starting the next, but a COPY's writes are plain bursts,
// not a release: AMD's own drivers treat two COPY or WRITE packets of one
// queue as able to overlap (ROCr's SDMA blit fences between them where
// platform atomics are missing, and Mesa puts a NOP between them to make
// the engine wait for pending copies), and no AMD document makes a COPY's
// bytes visible before the next packet's. Only an ATOMIC after the COPY (a
// signal) carries that guarantee, and it is the one MORI's contract and
// the seed document give.
func copyFlagAdvice(e race.Edge) string {
	return fmt.Sprintf("the %s polls a flag that %s wrote with a COPY: a COPY is not a signal. Its bytes land in bursts, not as one atomic word, and a queue's in-order execution does not order the visibility of one packet's writes before the next packet's: the engine may overlap serial COPY and WRITE packets (ROCr fences between them, runtime/hsa-runtime/core/runtime/amd_blit_sdma.cpp in https://github.com/ROCm/ROCR-Runtime; Mesa issues a NOP so the engine waits for pending copies, https://gitlab.freedesktop.org/mesa/mesa/-/blob/main/src/amd/common/ac_cmdbuf_sdma.c). Only the ATOMIC of a signal after the data makes \"seen\" mean \"landed\" (the ccoSdma contract: put with RemoteSignal, then waitSignal on the running total)",
		e.Cur.Op, e.PrevQueue)
}

// sameWave reports whether two lanes' names (kernel "k" GPU g block b wave
// w lane l) are of one wave.
func sameWave(a, b string) bool {
	cut := func(s string) string {
		if i := strings.LastIndex(s, " lane "); i > 0 {
			return s[:i]
		}
		return s
	}
	return cut(a) == cut(b)
}

// kernelOf is the kernel's name in a lane's name, or "".
func kernelOf(who string) string {
	if rest, ok := strings.CutPrefix(who, "kernel "); ok {
		if i := strings.Index(rest, " GPU "); i > 0 {
			return rest[:i]
		}
	}
	return ""
}

// afterWait says what the lane's last waitSignal did, when it returned and
// the read still raced the packet's write (on queue, posted by poster if
// known): the signal that released it was posted by another lane on the
// same queue (two blocks sharing one slot), written before the packet's
// write by the same queue and poster (a stale count), or by another queue
// (another producer on the slot).
func afterWait(w *race.Wait, queue, poster string, wrote int64) string {
	rel := fmt.Sprintf("the lane did wait (%s, returned at %v), but the value that released it was written at %v by %s", w.What, sim.Time(w.At), sim.Time(w.ByAt), w.By)
	switch {
	case w.ByQueue == queue && poster != "" && w.ByPoster != "" && w.ByPoster != poster && kernelOf(poster) != kernelOf(w.ByPoster):
		return rel + fmt.Sprintf(": another kernel's signal. These bytes are %s's packet posted by %s, but the signal that released the wait was posted by %s on the same queue: two kernels signal one slot, so either's signal releases the wait; if the other kernel ran earlier (an earlier call), the wait counted that epoch's signal again. Wait for the running total the slot reaches after this packet, or give each kernel its own slot (its own queue id)",
			queue, poster, w.ByPoster)
	case w.ByQueue == queue && poster != "" && w.ByPoster != "" && w.ByPoster != poster:
		return rel + fmt.Sprintf(": another block's signal. These bytes are %s's packet posted by %s, but the signal that released the wait was posted by %s on the same queue: two thread blocks share one signal slot, so either block's signal releases both waits. Give each block its own slot (its own queue id, so signalBuf[src × n + queueId] differs), or wait for the count both blocks' signals reach",
			queue, poster, w.ByPoster)
	case w.ByQueue == queue && w.ByAt < wrote:
		return rel + fmt.Sprintf(", before %s wrote these bytes (at %v): a stale signal, raised for an earlier packet, released the wait early. Producer and consumer disagree on how many signals come before this packet (expected, or the pipeline's depth): wait for the count that %s reaches after that packet", queue, sim.Time(wrote), queue)
	case w.ByQueue != queue:
		return rel + fmt.Sprintf(", not by %s after that packet: the wait watches a slot another producer signals (another queue's slot, or one two producers share). Wait on the slot of the queue that carries the data (signalBuf[src × n + queueId] of its put), or give each producer its own slot", queue)
	}
	return ""
}
