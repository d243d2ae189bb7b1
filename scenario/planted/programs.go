package planted

import (
	"errors"
	"fmt"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/scenario"
	"github.com/emud-dev/emud/sim"
)

// The corpus programs. Sizes are small so that a hunt over hundreds of
// seeds stays cheap; where a bug sits at a timing edge (a compute phase
// just longer than a copy, a flag held just longer than a poll takes to
// start) the edge is stated next to the constant, in terms of the
// calibrated MI355X model, as a latent bug in a real program sits at some
// edge of its machine's timing. Each takes fixed: false runs the bug,
// true its fixed twin.

func init() {
	bug{name: "gin-allgather-multicta", shape: scenario.Shape{Ranks: 4, Queues: 2}, run: runGinAllgather,
		planted: scenario.Planted{Class: "waitSignal watches another slot than the one incremented, only on grids wider than one CTA",
			Source: "RCCL GIN-SDMA all-gather deadlock on grids wider than one CTA"}}.register()
}

// gin-allgather-multicta: a ring all-gather over grid CTAs, CTA b moving
// its slice on queue b with a remote signal. The buggy receiver waits for
// every CTA's signals on queue 0's slot, as one counter for the grid; each
// slot only ever counts its own queue's signals, so any grid wider than
// one CTA deadlocks at the first step.
func runGinAllgather(o scenario.Options, fixed bool) (*scenario.Outcome, error) {
	const ranks, grid, chunk = 4, 2, 4096
	r, w, err := setup(o, ranks, grid, engine.InjectSpec{}, ranks*grid*chunk)
	if err != nil {
		return nil, err
	}
	off := func(owner, b int) uint64 { return uint64(owner*grid+b) * chunk }
	for me := range ranks {
		for b := range grid {
			if err := fill(r, w[me], off(me, b), chunk, me, b); err != nil {
				return nil, err
			}
		}
	}
	err = r.LaunchAll(grid, 1, func(me int, t *kernel.Thread, sdma *cco.Sdma) {
		b := t.BlockIdx()
		next, prev := (me+1)%ranks, (me+ranks-1)%ranks
		for k := range ranks - 1 {
			owner := (me - k + ranks) % ranks
			sdma.Put(next, w[me], off(owner, b), w[me], off(owner, b), chunk, b, cco.RemoteSignal)
			if fixed {
				sdma.WaitSignal(prev, b, uint64(k+1))
			} else {
				sdma.WaitSignal(prev, 0, uint64((k+1)*grid)) // bug: the grid's count on one slot
			}
		}
		sdma.Quiet(next)
	})
	if err != nil {
		return nil, err
	}
	return done(r, func() error {
		return expectGathered(r, w, grid, func(me, owner, b int) (string, uint64, uint64) {
			return fmt.Sprintf("rank %d's slice %d of rank %d", me, b, owner), off(owner, b), chunk
		})
	})
}

func init() {
	bug{name: "late-rank-snapshot", shape: scenario.Shape{Ranks: 4, Queues: 1}, run: runLateRank,
		planted: scenario.Planted{Class: "deadlock that needs one GPU late: expected taken from the slot at kernel entry",
			Source: "RCCL deadlock in ~20% of 16-node runs, reproduced by pausing a GPU in a debugger", Timing: true}}.register()
}

// late-rank-snapshot: a ring exchange where the buggy receiver takes its
// expected count from the slot when its kernel starts ("what is there now,
// plus one"). Launched together, no signal has landed yet and it works;
// when one GPU's launch is late by more than its sender needs to deliver
// (a few µs), the signal is already there, the receiver waits for one
// more that never comes.
func runLateRank(o scenario.Options, fixed bool) (*scenario.Outcome, error) {
	const ranks, bytes = 4, 1024
	r, w, err := setup(o, ranks, 1, engine.InjectSpec{}, 2*bytes)
	if err != nil {
		return nil, err
	}
	for me := range ranks {
		if err := fill(r, w[me], 0, bytes, me, 0); err != nil {
			return nil, err
		}
	}
	err = r.LaunchAll(1, 1, func(me int, t *kernel.Thread, sdma *cco.Sdma) {
		next, prev := (me+1)%ranks, (me+ranks-1)%ranks
		want := uint64(1)
		if !fixed {
			want = cco.NewMem(t, sdma.DevComm()).Load64(slot(r, me, prev, 0)) + 1 // bug: a snapshot, not a maintained count
		}
		sdma.Put(next, w[me], bytes, w[me], 0, bytes, 0, cco.RemoteSignal)
		sdma.WaitSignal(prev, 0, want)
		sdma.QuietQueue(next, 0)
	})
	if err != nil {
		return nil, err
	}
	return done(r, func() error { return expectFromPrev(r, w, bytes, bytes) })
}

func init() {
	bug{name: "big-copy-stall", shape: scenario.Shape{Ranks: 2, Queues: 1}, faults: bigCopyFaults, run: runBigCopy,
		planted: scenario.Planted{Class: "one unchunked copy at or above the size that stalls the engine, so its signal never fires",
			Source: "MI355X: 256 MiB copies stalled the SDMA engine (the corpus scales the threshold to 1 MiB)"}}.register()
}

// big-copy-stall: rank 0 sends 1 MiB to rank 1 in one copy, on an engine
// that stalls on copies of 1 MiB or more (MI355X's 256 MiB, scaled down).
// The fix chunks the transfer below the stall size.
func runBigCopy(o scenario.Options, fixed bool) (*scenario.Outcome, error) {
	const bytes = 1 << 20
	r, w, err := setup(o, 2, 1, bigCopyFaults, 2*bytes)
	if err != nil {
		return nil, err
	}
	if err := fill(r, w[0], 0, bytes, 0, 0); err != nil {
		return nil, err
	}
	pieces := 1
	if fixed {
		pieces = 4
	}
	if _, err := r.Launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		n := uint64(bytes / pieces)
		for i := range pieces {
			o := uint64(i) * n
			sdma.Put(1, w[1], bytes+o, w[0], o, n, 0, cco.RemoteSignal)
		}
		sdma.QuietQueue(1, 0)
	}); err != nil {
		return nil, err
	}
	if _, err := r.Launch(1, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.WaitSignal(0, 0, uint64(pieces))
	}); err != nil {
		return nil, err
	}
	return done(r, func() error { return expect(r, "rank 1's 1 MiB from rank 0", w[1], bytes, bytes, 0, 0) })
}

func init() {
	bug{name: "lost-completion", shape: scenario.Shape{Ranks: 4, Queues: 1}, faults: lostCompletionFaults, run: runLostCompletion,
		planted: scenario.Planted{Class: "a completion signal ATOMIC lost by the hardware; the waiter has no other evidence",
			Source: "ROCr lost SDMA completion signals in 2.5–14% of runs"}}.register()
}

// lost-completion: four rounds of a ring exchange, each receiver trusting
// its signal alone, on hardware that loses 3% of signal ATOMICs. The twin
// is the same program on healthy hardware: the incident is the driver's,
// the program's part is having no other evidence.
func runLostCompletion(o scenario.Options, fixed bool) (*scenario.Outcome, error) {
	const ranks, rounds, bytes = 4, 4, 512
	faults := lostCompletionFaults
	if fixed {
		faults = engine.InjectSpec{}
	}
	r, w, err := setup(o, ranks, 1, faults, 2*bytes)
	if err != nil {
		return nil, err
	}
	for me := range ranks {
		if err := fill(r, w[me], 0, bytes, me, 0); err != nil {
			return nil, err
		}
	}
	err = r.LaunchAll(1, 1, func(me int, t *kernel.Thread, sdma *cco.Sdma) {
		next, prev := (me+1)%ranks, (me+ranks-1)%ranks
		for k := range rounds {
			sdma.Put(next, w[me], bytes, w[me], 0, bytes, 0, cco.RemoteSignal)
			sdma.WaitSignal(prev, 0, uint64(k+1))
		}
		sdma.QuietQueue(next, 0)
	})
	if err != nil {
		return nil, err
	}
	return done(r, nil)
}

func init() {
	bug{name: "fused-off-engine", shape: scenario.Shape{Ranks: 3, Queues: 2}, faults: fusedOffFaults, run: runFusedOff,
		planted: scenario.Planted{Class: "a queue placed on a dead (fused-off) engine never runs",
			Source: "MORI with SDMA hung on MI308X: queues landed on fused-off engines"}}.register()
}

// fused-off-engine: a ring exchange spreading each rank's block over two
// queue ids, on a machine where queue id 1 of every ring hop sits on a
// fused-off engine. The fix keeps to the live queue.
func runFusedOff(o scenario.Options, fixed bool) (*scenario.Outcome, error) {
	const ranks, bytes = 3, 2048
	r, w, err := setup(o, ranks, 2, fusedOffFaults, 2*bytes)
	if err != nil {
		return nil, err
	}
	for me := range ranks {
		if err := fill(r, w[me], 0, bytes, me, 0); err != nil {
			return nil, err
		}
	}
	err = r.LaunchAll(1, 2, func(me int, t *kernel.Thread, sdma *cco.Sdma) {
		next, prev := (me+1)%ranks, (me+ranks-1)%ranks
		q := t.ThreadIdx()
		if fixed {
			q = 0
		}
		half := uint64(bytes / 2)
		o := uint64(t.ThreadIdx()) * half
		sdma.Put(next, w[me], bytes+o, w[me], o, half, q, cco.RemoteSignal)
		// Lanes that share a queue post as one group and signal once.
		sdma.WaitSignal(prev, q, 1)
		sdma.Quiet(next)
	})
	if err != nil {
		return nil, err
	}
	return done(r, func() error { return expectFromPrev(r, w, bytes, bytes) })
}

func init() {
	bug{name: "block-slot-mismatch", shape: scenario.Shape{Ranks: 2, Queues: 2}, run: runBlockSlot,
		planted: scenario.Planted{Class: "multi-block signal-slot mismatch: every block waits on queue 0's slot, its data came on its own queue",
			Source: "seed document, waitSignal rules: one running total per (srcRank, queueId)", Timing: true}}.register()
}

// block-slot-mismatch: rank 0's CTA b sends slice b on queue b with a
// remote signal; rank 1's CTA b waits for "the signal" on queue 0's slot
// and then uses its slice. CTA 0's wait is right; CTA 1's is released by
// CTA 0's signal, and uses its slice whether or not queue 1 has delivered
// it yet.
func runBlockSlot(o scenario.Options, fixed bool) (*scenario.Outcome, error) {
	const grid, chunk = 2, 16 << 10
	r, w, err := setup(o, 2, grid, engine.InjectSpec{}, 2*grid*chunk)
	if err != nil {
		return nil, err
	}
	for b := range grid {
		if err := fill(r, w[0], uint64(b)*chunk, chunk, 0, b); err != nil {
			return nil, err
		}
	}
	got := make([][]byte, grid)
	if _, err := r.Launch(0, grid, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		b := t.BlockIdx()
		sdma.Put(1, w[1], uint64(grid+b)*chunk, w[0], uint64(b)*chunk, chunk, b, cco.RemoteSignal)
		sdma.QuietQueue(1, b)
	}); err != nil {
		return nil, err
	}
	if _, err := r.Launch(1, grid, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		b := t.BlockIdx()
		q := 0 // bug: every CTA waits on queue 0's slot
		if fixed {
			q = b
		}
		sdma.WaitSignal(0, q, 1)
		got[b] = snapshot(sdma, w[1], uint64(grid+b)*chunk, chunk)
	}); err != nil {
		return nil, err
	}
	return done(r, func() error {
		for b := range grid {
			if err := checkBytes(fmt.Sprintf("rank 1's CTA %d's slice when its wait returned", b), got[b], 0, b); err != nil {
				return err
			}
		}
		return nil
	})
}

func init() {
	bug{name: "ring-off-by-one", shape: scenario.Shape{Ranks: 4, Queues: 1}, run: runRingOffByOne,
		planted: scenario.Planted{Class: "off-by-one ring step: an all-gather ring of n−2 steps",
			Source: "ring collectives' classic bug"}}.register()
}

// ring-off-by-one: a ring all-gather that runs n−2 steps instead of n−1,
// so every rank misses the block of the rank after it.
func runRingOffByOne(o scenario.Options, fixed bool) (*scenario.Outcome, error) {
	const ranks, chunk = 4, 1024
	r, w, err := setup(o, ranks, 1, engine.InjectSpec{}, ranks*chunk)
	if err != nil {
		return nil, err
	}
	for me := range ranks {
		if err := fill(r, w[me], uint64(me)*chunk, chunk, me, 0); err != nil {
			return nil, err
		}
	}
	steps := ranks - 2 // bug
	if fixed {
		steps = ranks - 1
	}
	err = r.LaunchAll(1, 1, func(me int, t *kernel.Thread, sdma *cco.Sdma) {
		next, prev := (me+1)%ranks, (me+ranks-1)%ranks
		for k := range steps {
			owner := uint64((me - k + ranks) % ranks)
			sdma.Put(next, w[me], owner*chunk, w[me], owner*chunk, chunk, 0, cco.RemoteSignal)
			sdma.WaitSignal(prev, 0, uint64(k+1))
		}
		sdma.QuietQueue(next, 0)
	})
	if err != nil {
		return nil, err
	}
	return done(r, func() error {
		return expectGathered(r, w, 1, func(me, owner, _ int) (string, uint64, uint64) {
			return fmt.Sprintf("rank %d's block of rank %d", me, owner), uint64(owner) * chunk, chunk
		})
	})
}

func init() {
	bug{name: "ge-u32-wrap", shape: scenario.Shape{Ranks: 3, Queues: 1}, run: runGeWrap,
		planted: scenario.Planted{Class: "Ge on a running total across the u32 wrap: the engine compares 32 bits and releases early",
			Source: "seed document, postWaitMemPutPtr: use Eq on a per-call epoch", Timing: true}}.register()
}

// ge-u32-wrap: a relay 0 → 1 → 2 where rank 1's engine forwards once a
// flag rank 0 writes behind its data says the round's data is in. The
// flag holds a running total; after 2^32−1 rounds it is 0xFFFFFFFF and
// this round's total wraps to 0. "Flag ≥ 0" holds at once, so the buggy
// relay forwards before the data arrives; the fix waits for Eq on the
// round's value.
func runGeWrap(o scenario.Options, fixed bool) (*scenario.Outcome, error) {
	const bytes = 8192
	r, err := newEnv(o, 3, 1, engine.InjectSpec{})
	if err != nil {
		return nil, err
	}
	data, err := r.Window(2 * bytes)
	if err != nil {
		return nil, err
	}
	flag, err := r.Window(64) // [0]: the flag; [8]: rank 0's next total
	if err != nil {
		return nil, err
	}
	before := uint32(0xFFFF_FFFF) // the total after 2^32−1 rounds
	total := before + 1           // this round's: 0
	if err := r.Mem().Store32(flag[1].LocalPtr(0), before); err != nil {
		return nil, err
	}
	if err := r.Mem().Store32(flag[0].LocalPtr(8), total); err != nil {
		return nil, err
	}
	if err := fill(r, data[0], 0, bytes, 0, 0); err != nil {
		return nil, err
	}
	if _, err := r.Launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.Put(1, data[1], 0, data[0], 0, bytes, 0)
		sdma.Put(1, flag[1], 0, flag[0], 8, 4, 0) // behind the data, on the same queue
		sdma.QuietQueue(1, 0)
	}); err != nil {
		return nil, err
	}
	if _, err := r.Launch(1, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		cmp := cco.SdmaCmpGe // bug: Ge on a running total
		if fixed {
			cmp = cco.SdmaCmpEq
		}
		sdma.PostWaitMem(2, 0, flag[1], 0, total, cmp, 0xFFFF_FFFF)
		sdma.Put(2, data[2], bytes, data[1], 0, bytes, 0, cco.RemoteSignal)
	}); err != nil {
		return nil, err
	}
	if _, err := r.Launch(2, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.WaitSignal(1, 0, 1)
	}); err != nil {
		return nil, err
	}
	return done(r, func() error { return expect(r, "rank 2's relayed block", data[2], bytes, bytes, 0, 0) })
}

func init() {
	bug{name: "bcast-per-queue", shape: scenario.Shape{Ranks: 3, Queues: 2}, run: runBcastPerQueue,
		planted: scenario.Planted{Class: "broadcast signals counted per queue: a broadcast's remote signal releases a wait meant for a put",
			Source: "seed document, putBroadcast: a signal slot counts per (source rank, queueId), not per physical queue"}}.register()
}

// bcast-per-queue: rank 0 broadcasts a small header to ranks 1 and 2 on
// (1, q0), then puts rank 2's 256 KiB payload on (2, q0), both with remote
// signals. The broadcast's signal also bumps rank 2's [0, q0] slot, which
// rank 2 reads as "the put on (2, q0) landed": released by the broadcast,
// it uses a payload still crossing the link. The fix gives the broadcast
// its own queue id.
func runBcastPerQueue(o scenario.Options, fixed bool) (*scenario.Outcome, error) {
	const big, small = 256 << 10, 4096
	r, w, err := setup(o, 3, 2, engine.InjectSpec{}, 2*big+2*small)
	if err != nil {
		return nil, err
	}
	src, bsrc, dst, bdst := uint64(0), uint64(big), uint64(big+small), uint64(2*big+small)
	if err := fill(r, w[0], src, big, 0, 0); err != nil {
		return nil, err
	}
	if err := fill(r, w[0], bsrc, small, 0, 1); err != nil {
		return nil, err
	}
	bq := 0 // bug: the broadcast shares queue id 0 with the put
	if fixed {
		bq = 1
	}
	var got2, got1 []byte
	if _, err := r.Launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		// The header to both peers, then rank 2's payload.
		sdma.PutBroadcast(1, w[1], bdst, 2, w[2], bdst, w[0], bsrc, small, bq, cco.RemoteSignal)
		sdma.Put(2, w[2], dst, w[0], src, big, 0, cco.RemoteSignal)
		sdma.Quiet(1)
		sdma.Quiet(2)
	}); err != nil {
		return nil, err
	}
	if _, err := r.Launch(2, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.WaitSignal(0, 0, 1) // "the put on (2, q0) landed"
		got2 = snapshot(sdma, w[2], dst, big)
		if fixed {
			sdma.WaitSignal(0, bq, 1) // the header, on its own queue id
		}
	}); err != nil {
		return nil, err
	}
	if _, err := r.Launch(1, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.WaitSignal(0, bq, 1)
		got1 = snapshot(sdma, w[1], bdst, small)
	}); err != nil {
		return nil, err
	}
	return done(r, func() error {
		return errors.Join(checkBytes("rank 2's put block when its wait returned", got2, 0, 0),
			checkBytes("rank 1's broadcast block", got1, 0, 1))
	})
}

func init() {
	bug{name: "missing-commit", shape: scenario.Shape{Ranks: 2, Queues: 2}, run: runMissingCommit,
		planted: scenario.Planted{Class: "a missing commit: an Aggregate batch never rung, so quiet returns with nothing sent",
			Source: "seed document, Completion: quiet drains to the last rung packet"}}.register()
}

// missing-commit: rank 0 posts four Aggregate puts and quiets without
// committing: quiet returns at once with nothing rung. It then tells rank
// 1 "done" with a signalled put on another queue; rank 1 finds nothing.
func runMissingCommit(o scenario.Options, fixed bool) (*scenario.Outcome, error) {
	const pieces, n = 4, 1024
	r, w, err := sender(o, 2, 2, 2*pieces*n+64, pieces*n)
	if err != nil {
		return nil, err
	}
	var got []byte
	if _, err := r.Launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		for i := range pieces {
			o := uint64(i * n)
			sdma.Put(1, w[1], pieces*n+o, w[0], o, n, 0, cco.SdmaOptFlagsAggregate)
		}
		if fixed {
			sdma.Commit(1, 0)
		}
		sdma.QuietQueue(1, 0)
		sdma.Put(1, w[1], 2*pieces*n, w[0], 2*pieces*n, 8, 1, cco.RemoteSignal) // "done"
		sdma.QuietQueue(1, 1)
	}); err != nil {
		return nil, err
	}
	if _, err := r.Launch(1, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.WaitSignal(0, 1, 1)
		got = snapshot(sdma, w[1], pieces*n, pieces*n)
	}); err != nil {
		return nil, err
	}
	return done(r, func() error { return checkBytes("rank 1's batch after rank 0 said done", got, 0, 0) })
}

func init() {
	bug{name: "samequeue-broken", shape: scenario.Shape{Ranks: 5, Queues: 1}, run: runSameQueueBroken,
		planted: scenario.Planted{Class: "a broken SameQueue promise: lanes with different peers posting as one group",
			Source: "seed document, ccoSdmaThreadMode: silent corruption in release"}}.register()
}

// samequeue-broken: lanes 0..3 of one warp put to four different peers
// under ccoSdmaThreadSameQueue, which promises they share one queue. In
// release the group's packets go to one lane's queue reservation laid out
// for another's, and data lands wrong. The fix is Independent.
func runSameQueueBroken(o scenario.Options, fixed bool) (*scenario.Outcome, error) {
	const ranks, n = 5, 2048
	r, w, err := setup(o, ranks, 1, engine.InjectSpec{}, 2*ranks*n)
	if err != nil {
		return nil, err
	}
	for p := 1; p < ranks; p++ {
		if err := fill(r, w[0], uint64(p)*n, n, 0, p); err != nil {
			return nil, err
		}
	}
	mode := cco.SdmaThreadSameQueue // bug: the lanes' peers differ
	if fixed {
		mode = cco.SdmaThreadIndependent
	}
	if _, err := r.Launch(0, 1, ranks-1, func(t *kernel.Thread, sdma *cco.Sdma) {
		p := t.ThreadIdx() + 1
		sdma.Put(p, w[p], ranks*n, w[0], uint64(p)*n, n, 0, mode)
		sdma.Quiet(p)
	}); err != nil {
		return nil, err
	}
	return done(r, func() error {
		for p := 1; p < ranks; p++ {
			if err := expect(r, fmt.Sprintf("rank %d's block from rank 0", p), w[p], ranks*n, n, 0, p); err != nil {
				return err
			}
		}
		return nil
	})
}

// earlyReuseCompute is the sender's compute between its put and the
// source's next contents: on the calibrated model the 1 MiB copy has read
// its whole source about 19 µs after the put is issued, so 21 µs is about
// 10% of margin, which realistic timing spreads consume now and then.
const earlyReuseCompute = 21 * sim.Microsecond

func init() {
	bug{name: "early-source-reuse", shape: scenario.Shape{Ranks: 2, Queues: 1}, run: runEarlyReuse,
		planted: scenario.Planted{Class: "early source reuse: the source is overwritten before the copy has read it",
			Source: "seed document, Completion: do not reuse a source buffer before the op completes", Timing: true}}.register()
}

// early-source-reuse: rank 0 puts 1 MiB to rank 1, computes, and writes
// the next round's data into the source without quiet first. The copy
// reads its source as it goes; a copy still running sends new data.
func runEarlyReuse(o scenario.Options, fixed bool) (*scenario.Outcome, error) {
	const bytes = 1 << 20
	r, w, err := sender(o, 2, 1, 2*bytes, bytes)
	if err != nil {
		return nil, err
	}
	if _, err := r.Launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.Put(1, w[1], bytes, w[0], 0, bytes, 0, cco.RemoteSignal)
		compute(t, earlyReuseCompute)
		if fixed {
			sdma.QuietQueue(1, 0)
		}
		fillLane(sdma, w[0], 0, bytes, 0, 1) // the next round's data
	}); err != nil {
		return nil, err
	}
	return receive(r, w, bytes, bytes)
}

func init() {
	bug{name: "expected-per-lane", shape: scenario.Shape{Ranks: 2, Queues: 1}, run: runExpectedPerLane,
		planted: scenario.Planted{Class: "expected counted per lane: a group's put signals once, not once per lane",
			Source: "seed document, waitSignal rules: one put() call advances the counter by one"}}.register()
}

// expected-per-lane: eight lanes of one warp put eight slices as one
// SameQueue group with a remote signal; the receiver waits for eight
// signals, but the group signals once.
func runExpectedPerLane(o scenario.Options, fixed bool) (*scenario.Outcome, error) {
	const lanes, n = 8, 512
	r, w, err := sender(o, 2, 1, 2*lanes*n, lanes*n)
	if err != nil {
		return nil, err
	}
	if _, err := r.Launch(0, 1, lanes, func(t *kernel.Thread, sdma *cco.Sdma) {
		o := uint64(t.ThreadIdx() * n)
		sdma.Put(1, w[1], lanes*n+o, w[0], o, n, 0, cco.SdmaThreadSameQueue, cco.RemoteSignal)
		sdma.QuietQueue(1, 0)
	}); err != nil {
		return nil, err
	}
	want := uint64(lanes) // bug: one per lane
	if fixed {
		want = 1
	}
	if _, err := r.Launch(1, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) { sdma.WaitSignal(0, 0, want) }); err != nil {
		return nil, err
	}
	return done(r, func() error { return expect(r, "rank 1's slices", w[1], lanes*n, lanes*n, 0, 0) })
}

// noQuietHostGap is the host's work between rank 0's first kernel ending
// and its launch of the second: on the calibrated model the first
// kernel's 1 MiB copy ends about 18 µs after that kernel does, so 20 µs
// is a small margin that timing spreads consume now and then.
const noQuietHostGap = 20 * sim.Microsecond

func init() {
	bug{name: "no-quiet-across-kernels", shape: scenario.Shape{Ranks: 2, Queues: 1}, run: runNoQuietAcrossKernels,
		planted: scenario.Planted{Class: "a missing quiet before reuse across kernels: kernel exit does not drain SDMA",
			Source: "seed document, Completion: nothing has happened when put returns; you must drain", Timing: true}}.register()
}

// no-quiet-across-kernels: rank 0's first kernel puts 1 MiB and exits
// without a quiet; the host waits for it, works, and launches the next
// kernel, which refills the source. Kernel exit does not drain SDMA, so a
// copy still running sends the refill.
func runNoQuietAcrossKernels(o scenario.Options, fixed bool) (*scenario.Outcome, error) {
	const bytes = 1 << 20
	r, w, err := sender(o, 2, 1, 2*bytes, bytes)
	if err != nil {
		return nil, err
	}
	first, err := r.Launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.Put(1, w[1], bytes, w[0], 0, bytes, 0, cco.RemoteSignal)
		if fixed {
			sdma.QuietQueue(1, 0)
		}
	})
	if err != nil {
		return nil, err
	}
	r.Sim.Spawn("host0", func(a *sim.Actor) {
		if err := first.Wait(a); err != nil {
			return
		}
		a.Sleep(noQuietHostGap)
		if _, err := r.Launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
			fillLane(sdma, w[0], 0, bytes, 0, 1)
		}); err != nil {
			r.Sim.Fail(err)
		}
	})
	return receive(r, w, bytes, bytes)
}

// flagHold is how long the producer CTA keeps the flag set before it
// clears it for its next phase: on the calibrated model the consumer's
// POLL_REGMEM makes its first read about 1.7 µs after launch (issue and
// doorbell), just inside the hold.
const flagHold = 2 * sim.Microsecond

func init() {
	bug{name: "flag-set-cleared", shape: scenario.Shape{Ranks: 2, Queues: 1}, run: runFlagSetCleared,
		planted: scenario.Planted{Class: "postWaitMem on a flag that is set, then cleared before the engine's next poll",
			Source: "seed document, postWaitMem sharp edges: the engine samples the flag; a flag that flips back is missed", Timing: true}}.register()
}

// flag-set-cleared: CTA 0 of rank 0 posts postWaitMem on a local flag and
// a put behind it; CTA 1 sets the flag, and flagHold later clears it to
// reuse it. The engine samples the flag at its poll reads: when none falls
// inside the hold, the queue parks for good. The fix never takes a flag
// back: phases are epochs (1, then 2), and the wait is Ge its epoch.
func runFlagSetCleared(o scenario.Options, fixed bool) (*scenario.Outcome, error) {
	const bytes = 2048
	r, w, err := setup(o, 2, 1, engine.InjectSpec{}, 2*bytes+64)
	if err != nil {
		return nil, err
	}
	flag := uint64(2 * bytes)
	if err := fill(r, w[0], 0, bytes, 0, 0); err != nil {
		return nil, err
	}
	if _, err := r.Launch(0, 2, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		if t.BlockIdx() == 0 {
			cmp := cco.SdmaCmpEq
			if fixed {
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
		if fixed {
			next = 2 // the next epoch
		}
		m.StoreRelease32(w[0].LocalPtr(flag), next)
	}); err != nil {
		return nil, err
	}
	return receive(r, w, bytes, bytes)
}
