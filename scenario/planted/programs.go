package planted

import (
	"errors"
	"fmt"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/sim"
)

// The corpus programs. Sizes are small so that a hunt over hundreds of
// seeds stays cheap; where a bug sits at a timing edge (a compute phase
// just longer than a copy, a flag held just longer than a poll takes to
// start) the edge is stated next to the constant, in terms of the
// calibrated MI355X model, as a latent bug in a real program sits at some
// edge of its machine's timing. Each runs the bug, or its fixed twin when
// p.fixed.

// gin-allgather-multicta: a ring all-gather over grid CTAs, CTA b moving
// its slice on queue b with a remote signal. The buggy receiver waits for
// every CTA's signals on queue 0's slot, as one counter for the grid; each
// slot only ever counts its own queue's signals, so any grid wider than
// one CTA deadlocks at the first step.
func ginAllgather(p *prog) func() error {
	const grid, chunk = 2, 4096
	ranks := p.ranks()
	w := p.window(uint64(ranks * grid * chunk))
	off := func(owner, b int) uint64 { return uint64(owner*grid+b) * chunk }
	for me := range ranks {
		for b := range grid {
			p.fill(w, me, off(me, b), chunk, b)
		}
	}
	p.launchAll(grid, 1, func(me int, t *kernel.Thread, sdma *cco.Sdma) {
		b := t.BlockIdx()
		next, prev := p.ring(me)
		for k := range ranks - 1 {
			owner := (me - k + ranks) % ranks
			sdma.Put(next, w[me], off(owner, b), w[me], off(owner, b), chunk, b, cco.RemoteSignal)
			if p.fixed {
				sdma.WaitSignal(prev, b, uint64(k+1))
			} else {
				sdma.WaitSignal(prev, 0, uint64((k+1)*grid)) // bug: the grid's count on one slot
			}
		}
		sdma.Quiet(next)
	})
	return func() error {
		return p.expectGathered(w, grid, func(me, owner, b int) (string, uint64, uint64) {
			return fmt.Sprintf("rank %d's slice %d of rank %d", me, b, owner), off(owner, b), chunk
		})
	}
}

// ringExchange is a ring program: rank me's block, pattern(me, 0) of n
// bytes, starts a window of 2n bytes; every rank runs body <<<1,
// threads>>> with its own window and ring neighbours; after the run every
// rank must hold its predecessor's block in the window's second half.
func (p *prog) ringExchange(n uint64, threads int, body func(w cco.Window, next, prev int, t *kernel.Thread, sdma *cco.Sdma)) func() error {
	w := p.window(2 * n)
	for me := range p.ranks() {
		p.fill(w, me, 0, n, 0)
	}
	p.launchAll(1, threads, func(me int, t *kernel.Thread, sdma *cco.Sdma) {
		next, prev := p.ring(me)
		body(w[me], next, prev, t, sdma)
	})
	return func() error { return p.expectFromPrev(w, n, n) }
}

// late-rank-snapshot: a ring exchange where the buggy receiver takes its
// expected count from the slot when its kernel starts ("what is there now,
// plus one"). Launched together, no signal has landed yet and it works;
// when one GPU's launch is late by more than its sender needs to deliver
// (a few µs), the signal is already there, the receiver waits for one
// more that never comes.
func lateRank(p *prog) func() error {
	const bytes = 1024
	return p.ringExchange(bytes, 1, func(w cco.Window, next, prev int, t *kernel.Thread, sdma *cco.Sdma) {
		want := uint64(1)
		if !p.fixed {
			dc := sdma.DevComm()
			want = cco.NewMem(t, dc).Load64(p.slot(dc.Rank, prev, 0)) + 1 // bug: a snapshot, not a maintained count
		}
		sdma.Put(next, w, bytes, w, 0, bytes, 0, cco.RemoteSignal)
		sdma.WaitSignal(prev, 0, want)
		sdma.QuietQueue(next, 0)
	})
}

// big-copy-stall: rank 0 sends 1 MiB to rank 1 in one copy, on an engine
// that stalls on copies of 1 MiB or more (MI355X's 256 MiB, scaled down).
// The fix chunks the transfer below the stall size.
func bigCopy(p *prog) func() error {
	const bytes = 1 << 20
	w := p.sender(2*bytes, bytes)
	pieces := 1
	if p.fixed {
		pieces = 4
	}
	p.launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		n := uint64(bytes / pieces)
		for i := range pieces {
			o := uint64(i) * n
			sdma.Put(1, w[1], bytes+o, w[0], o, n, 0, cco.RemoteSignal)
		}
		sdma.QuietQueue(1, 0)
	})
	p.launch(1, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) { sdma.WaitSignal(0, 0, uint64(pieces)) })
	return func() error { return p.expect("rank 1's 1 MiB from rank 0", w[1], bytes, bytes, 0, 0) }
}

// lost-completion: four rounds of a ring exchange, each receiver trusting
// its signal alone, on hardware that loses 3% of signal ATOMICs. The twin
// is the same program on healthy hardware: the incident is the driver's,
// the program's part is having no other evidence.
func lostCompletion(p *prog) func() error {
	const rounds, bytes = 4, 512
	return p.ringExchange(bytes, 1, func(w cco.Window, next, prev int, t *kernel.Thread, sdma *cco.Sdma) {
		for k := range rounds {
			sdma.Put(next, w, bytes, w, 0, bytes, 0, cco.RemoteSignal)
			sdma.WaitSignal(prev, 0, uint64(k+1))
		}
		sdma.QuietQueue(next, 0)
	})
}

// fused-off-engine: a ring exchange spreading each rank's block over two
// queue ids, on a machine where queue id 1 of every ring hop sits on a
// fused-off engine. The fix keeps to the live queue.
func fusedOff(p *prog) func() error {
	const bytes = 2048
	return p.ringExchange(bytes, 2, func(w cco.Window, next, prev int, t *kernel.Thread, sdma *cco.Sdma) {
		q := t.ThreadIdx()
		if p.fixed {
			q = 0
		}
		half := uint64(bytes / 2)
		o := uint64(t.ThreadIdx()) * half
		sdma.Put(next, w, bytes+o, w, o, half, q, cco.RemoteSignal)
		// Lanes that share a queue post as one group and signal once.
		sdma.WaitSignal(prev, q, 1)
		sdma.Quiet(next)
	})
}

// block-slot-mismatch: rank 0's CTA b sends slice b on queue b with a
// remote signal; rank 1's CTA b waits for "the signal" on queue 0's slot
// and then uses its slice. CTA 0's wait is right; CTA 1's is released by
// CTA 0's signal, and uses its slice whether or not queue 1 has delivered
// it yet.
func blockSlot(p *prog) func() error {
	const grid, chunk = 2, 16 << 10
	waitQ := func(b int) int {
		if p.fixed {
			return b
		}
		return 0 // bug: every CTA waits on queue 0's slot
	}
	return p.blockSlices(grid, chunk, func(b int) int { return b }, waitQ, "rank 1's CTA %d's slice when its wait returned")
}

// blockSlices is a two-kernel program: rank 0's block b puts its slice
// (pattern(0, b), n bytes) to rank 1 on queue sendQ(b) with a remote
// signal and quiets it; rank 1's block b waits for one signal on slot (0,
// waitQ(b)) and takes its slice, the data it would go on to use. After
// the run every block's slice must have been whole when its wait
// returned (what names block b's in an error).
func (p *prog) blockSlices(grid int, n uint64, sendQ, waitQ func(b int) int, what string) func() error {
	w := p.window(2 * uint64(grid) * n)
	for b := range grid {
		p.fill(w, 0, uint64(b)*n, n, b)
	}
	got := make([][]byte, grid)
	p.launch(0, grid, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		b := t.BlockIdx()
		sdma.Put(1, w[1], uint64(grid+b)*n, w[0], uint64(b)*n, n, sendQ(b), cco.RemoteSignal)
		sdma.QuietQueue(1, sendQ(b))
	})
	p.launch(1, grid, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		b := t.BlockIdx()
		sdma.WaitSignal(0, waitQ(b), 1)
		got[b] = snapshot(sdma, w[1], uint64(grid+b)*n, n)
	})
	return func() error {
		for b := range grid {
			if err := checkBytes(fmt.Sprintf(what, b), got[b], 0, b); err != nil {
				return err
			}
		}
		return nil
	}
}

// ring-off-by-one: a ring all-gather that runs n−2 steps instead of n−1,
// so every rank misses the block of the rank after it.
func ringOffByOne(p *prog) func() error {
	const chunk = 1024
	ranks := p.ranks()
	w := p.window(uint64(ranks) * chunk)
	for me := range ranks {
		p.fill(w, me, uint64(me)*chunk, chunk, 0)
	}
	steps := ranks - 2 // bug
	if p.fixed {
		steps = ranks - 1
	}
	p.launchAll(1, 1, func(me int, t *kernel.Thread, sdma *cco.Sdma) {
		next, prev := p.ring(me)
		for k := range steps {
			owner := uint64((me - k + ranks) % ranks)
			sdma.Put(next, w[me], owner*chunk, w[me], owner*chunk, chunk, 0, cco.RemoteSignal)
			sdma.WaitSignal(prev, 0, uint64(k+1))
		}
		sdma.QuietQueue(next, 0)
	})
	return func() error {
		return p.expectGathered(w, 1, func(me, owner, _ int) (string, uint64, uint64) {
			return fmt.Sprintf("rank %d's block of rank %d", me, owner), uint64(owner) * chunk, chunk
		})
	}
}

// ge-u32-wrap: a relay 0 → 1 → 2 where rank 1's engine forwards once a
// flag rank 0 writes behind its data says the round's data is in. The
// flag holds a running total; after 2^32−1 rounds it is 0xFFFFFFFF and
// this round's total wraps to 0. "Flag ≥ 0" holds at once, so the buggy
// relay forwards before the data arrives; the fix waits for Eq on the
// round's value.
func geWrap(p *prog) func() error {
	const bytes = 8192
	data := p.window(2 * bytes)
	flag := p.window(64)          // [0]: the flag; [8]: rank 0's next total
	before := uint32(0xFFFF_FFFF) // the total after 2^32−1 rounds
	total := before + 1           // this round's: 0
	p.store32(flag, 1, 0, before)
	p.store32(flag, 0, 8, total)
	p.fill(data, 0, 0, bytes, 0)
	p.launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.Put(1, data[1], 0, data[0], 0, bytes, 0)
		sdma.Put(1, flag[1], 0, flag[0], 8, 4, 0) // behind the data, on the same queue
		sdma.QuietQueue(1, 0)
	})
	p.launch(1, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		cmp := cco.SdmaCmpGe // bug: Ge on a running total
		if p.fixed {
			cmp = cco.SdmaCmpEq
		}
		sdma.PostWaitMem(2, 0, flag[1], 0, total, cmp, 0xFFFF_FFFF)
		sdma.Put(2, data[2], bytes, data[1], 0, bytes, 0, cco.RemoteSignal)
	})
	p.launch(2, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) { sdma.WaitSignal(1, 0, 1) })
	return func() error { return p.expect("rank 2's relayed block", data[2], bytes, bytes, 0, 0) }
}

// bcast-per-queue: rank 0 broadcasts a small header to ranks 1 and 2 on
// (1, q0), then puts rank 2's 256 KiB payload on (2, q0), both with remote
// signals. The broadcast's signal also bumps rank 2's [0, q0] slot, which
// rank 2 reads as "the put on (2, q0) landed": released by the broadcast,
// it uses a payload still crossing the link. The fix gives the broadcast
// its own queue id.
func bcastPerQueue(p *prog) func() error {
	const big, small = 256 << 10, 4096
	w := p.window(2*big + 2*small)
	src, bsrc, dst, bdst := uint64(0), uint64(big), uint64(big+small), uint64(2*big+small)
	p.fill(w, 0, src, big, 0)
	p.fill(w, 0, bsrc, small, 1)
	bq := 0 // bug: the broadcast shares queue id 0 with the put
	if p.fixed {
		bq = 1
	}
	var got2, got1 []byte
	p.launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		// The header to both peers, then rank 2's payload.
		sdma.PutBroadcast(1, w[1], bdst, 2, w[2], bdst, w[0], bsrc, small, bq, cco.RemoteSignal)
		sdma.Put(2, w[2], dst, w[0], src, big, 0, cco.RemoteSignal)
		sdma.Quiet(1)
		sdma.Quiet(2)
	})
	p.launch(2, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.WaitSignal(0, 0, 1) // "the put on (2, q0) landed"
		got2 = snapshot(sdma, w[2], dst, big)
		if p.fixed {
			sdma.WaitSignal(0, bq, 1) // the header, on its own queue id
		}
	})
	p.launch(1, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.WaitSignal(0, bq, 1)
		got1 = snapshot(sdma, w[1], bdst, small)
	})
	return func() error {
		return errors.Join(checkBytes("rank 2's put block when its wait returned", got2, 0, 0),
			checkBytes("rank 1's broadcast block", got1, 0, 1))
	}
}

// missing-commit: rank 0 posts four Aggregate puts and quiets without
// committing: quiet returns at once with nothing rung. It then tells rank
// 1 "done" with a signalled put on another queue; rank 1 finds nothing.
func missingCommit(p *prog) func() error {
	const pieces, n = 4, 1024
	w := p.sender(2*pieces*n+64, pieces*n)
	var got []byte
	p.launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		for i := range pieces {
			o := uint64(i * n)
			sdma.Put(1, w[1], pieces*n+o, w[0], o, n, 0, cco.SdmaOptFlagsAggregate)
		}
		if p.fixed {
			sdma.Commit(1, 0)
		}
		sdma.QuietQueue(1, 0)
		sdma.Put(1, w[1], 2*pieces*n, w[0], 2*pieces*n, 8, 1, cco.RemoteSignal) // "done"
		sdma.QuietQueue(1, 1)
	})
	p.launch(1, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.WaitSignal(0, 1, 1)
		got = snapshot(sdma, w[1], pieces*n, pieces*n)
	})
	return func() error { return checkBytes("rank 1's batch after rank 0 said done", got, 0, 0) }
}

// samequeue-broken: lanes 0..3 of one warp put to four different peers
// under ccoSdmaThreadSameQueue, which promises they share one queue. In
// release the group's packets go to one lane's queue reservation laid out
// for another's, and data lands wrong. The fix is Independent.
func sameQueueBroken(p *prog) func() error {
	const n = 2048
	ranks := p.ranks()
	w := p.window(uint64(2 * ranks * n))
	for q := 1; q < ranks; q++ {
		p.fill(w, 0, uint64(q)*n, n, q)
	}
	mode := cco.SdmaThreadSameQueue // bug: the lanes' peers differ
	if p.fixed {
		mode = cco.SdmaThreadIndependent
	}
	p.launch(0, 1, ranks-1, func(t *kernel.Thread, sdma *cco.Sdma) {
		q := t.ThreadIdx() + 1
		sdma.Put(q, w[q], uint64(ranks*n), w[0], uint64(q)*n, n, 0, mode)
		sdma.Quiet(q)
	})
	return func() error {
		for q := 1; q < ranks; q++ {
			if err := p.expect(fmt.Sprintf("rank %d's block from rank 0", q), w[q], uint64(ranks*n), n, 0, q); err != nil {
				return err
			}
		}
		return nil
	}
}

// earlyReuseCompute is the sender's compute between its put and the
// source's next contents: on the calibrated model the 1 MiB copy has read
// its whole source about 19 µs after the put is issued, so 21 µs is about
// 10% of margin, which realistic timing spreads consume now and then.
const earlyReuseCompute = 21 * sim.Microsecond

// early-source-reuse: rank 0 puts 1 MiB to rank 1, computes, and writes
// the next round's data into the source without quiet first. The copy
// reads its source as it goes; a copy still running sends new data.
func earlyReuse(p *prog) func() error {
	const bytes = 1 << 20
	w := p.sender(2*bytes, bytes)
	p.launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.Put(1, w[1], bytes, w[0], 0, bytes, 0, cco.RemoteSignal)
		compute(t, earlyReuseCompute)
		if p.fixed {
			sdma.QuietQueue(1, 0)
		}
		fillLane(sdma, w[0], 0, bytes, 0, 1) // the next round's data
	})
	return p.receive(w, bytes, bytes)
}

// expected-per-lane: eight lanes of one warp put eight slices as one
// SameQueue group with a remote signal; the receiver waits for eight
// signals, but the group signals once.
func expectedPerLane(p *prog) func() error {
	const lanes, n = 8, 512
	w := p.sender(2*lanes*n, lanes*n)
	p.launch(0, 1, lanes, func(t *kernel.Thread, sdma *cco.Sdma) {
		o := uint64(t.ThreadIdx() * n)
		sdma.Put(1, w[1], lanes*n+o, w[0], o, n, 0, cco.SdmaThreadSameQueue, cco.RemoteSignal)
		sdma.QuietQueue(1, 0)
	})
	want := uint64(lanes) // bug: one per lane
	if p.fixed {
		want = 1
	}
	p.launch(1, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) { sdma.WaitSignal(0, 0, want) })
	return func() error { return p.expect("rank 1's slices", w[1], lanes*n, lanes*n, 0, 0) }
}

// noQuietHostGap is the host's work between rank 0's first kernel ending
// and its launch of the second: on the calibrated model the first
// kernel's 1 MiB copy ends about 18 µs after that kernel does, so 20 µs
// is a small margin that timing spreads consume now and then.
const noQuietHostGap = 20 * sim.Microsecond

// no-quiet-across-kernels: rank 0's first kernel puts 1 MiB and exits
// without a quiet; the host waits for it, works, and launches the next
// kernel, which refills the source. Kernel exit does not drain SDMA, so a
// copy still running sends the refill.
func noQuietAcrossKernels(p *prog) func() error {
	const bytes = 1 << 20
	w := p.sender(2*bytes, bytes)
	first := p.launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.Put(1, w[1], bytes, w[0], 0, bytes, 0, cco.RemoteSignal)
		if p.fixed {
			sdma.QuietQueue(1, 0)
		}
	})
	p.launchAfter(first, noQuietHostGap, 0, func(t *kernel.Thread, sdma *cco.Sdma) {
		fillLane(sdma, w[0], 0, bytes, 0, 1)
	})
	return p.receive(w, bytes, bytes)
}

// flagHold is how long the producer CTA keeps the flag set before it
// clears it for its next phase: on the calibrated model the consumer's
// POLL_REGMEM makes its first read about 1.7 µs after launch (issue and
// doorbell), just inside the hold.
const flagHold = 2 * sim.Microsecond

// flag-set-cleared: CTA 0 of rank 0 posts postWaitMem on a local flag and
// a put behind it; CTA 1 sets the flag, and flagHold later clears it to
// reuse it. The engine samples the flag at its poll reads: when none falls
// inside the hold, the queue parks for good. The fix never takes a flag
// back: phases are epochs (1, then 2), and the wait is Ge its epoch.
func flagSetCleared(p *prog) func() error {
	const bytes = 2048
	w := p.sender(2*bytes+64, bytes)
	flag := uint64(2 * bytes)
	p.launch(0, 2, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		if t.BlockIdx() == 0 {
			cmp := cco.SdmaCmpEq
			if p.fixed {
				cmp = cco.SdmaCmpGe
			}
			sdma.PostWaitMem(1, 0, w[0], flag, 1, cmp, 0xFFFF_FFFF)
			sdma.Put(1, w[1], bytes, w[0], 0, bytes, 0, cco.RemoteSignal)
			return
		}
		m := cco.NewMem(t, sdma.DevComm())
		m.StoreRelease32(w[0].LocalPtr(flag), 1)
		compute(t, flagHold)
		next := uint32(0) // bug: cleared for reuse
		if p.fixed {
			next = 2 // the next epoch
		}
		m.StoreRelease32(w[0].LocalPtr(flag), next)
	})
	return p.receive(w, bytes, bytes)
}
