package bugs

import (
	"errors"
	"fmt"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/sim"
)

// The corpus. Sizes are small so that a hunt over hundreds of seeds stays
// cheap; where a bug sits at a timing edge (a compute phase just longer
// than a copy, a flag held just longer than a poll takes to start) the
// edge is stated next to the constant, in terms of the calibrated MI355X
// model, as a latent bug in a real program sits at some edge of its
// machine's timing.

// done is a run's common end: the sim's verdict, then the data checks.
func (r *rig) done(check func() error) (Outcome, error) {
	err := r.s.Run()
	out := Outcome{Steps: r.s.Steps(), End: r.s.Now(), Digest: r.s.Digest(), Model: r.n.Model().Name(),
		Ranks: len(r.dcs), Injected: r.n.Injected()}
	if err == nil && check != nil {
		err = check()
	}
	return out, err
}

// expectFromPrev checks that every rank holds, at off of its window, the
// n bytes its ring predecessor sent (pattern(prev, 0)).
func (r *rig) expectFromPrev(w []cco.Window, off, n uint64) error {
	ranks := len(w)
	for me := range ranks {
		prev := (me + ranks - 1) % ranks
		if err := r.expect(fmt.Sprintf("rank %d's block from rank %d", me, prev), w[me], off, n, prev, 0); err != nil {
			return err
		}
	}
	return nil
}

// setup is newRig and one window of size bytes on every rank.
func setup(c Config, ranks, queues int, faults engine.InjectSpec, size uint64) (*rig, []cco.Window, error) {
	r, err := newRig(c, ranks, queues, faults)
	if err != nil {
		return nil, nil, err
	}
	w, err := r.window(size)
	return r, w, err
}

// snapshot is a receiver's CU reading n bytes of its window at off when
// it believes they have landed (through cco.Mem, as lane code does): the
// data it would go on to use.
func snapshot(sdma *cco.Sdma, w cco.Window, off, n uint64) []byte {
	b := make([]byte, n)
	cco.NewMem(sdma.Thread(), sdma.DevComm()).Read(w.LocalPtr(off), b)
	return b
}

func checkBytes(what string, got []byte, rank, tag int) error {
	want := pattern(uint64(len(got)), rank, tag)
	for i := range got {
		if got[i] != want[i] {
			return &WrongData{What: what, Offset: uint64(i), Got: got[i], Want: want[i]}
		}
	}
	return nil
}

func init() {
	register(&Bug{
		Name:   "gin-allgather-multicta",
		Class:  "waitSignal watches another slot than the one incremented, only on grids wider than one CTA",
		Source: "RCCL GIN-SDMA all-gather deadlock on grids wider than one CTA",
		run:    runGinAllgather,
	})
	register(&Bug{
		Name:   "late-rank-snapshot",
		Timing: true,
		Class:  "deadlock that needs one GPU late: expected taken from the slot at kernel entry",
		Source: "RCCL deadlock in ~20% of 16-node runs, reproduced by pausing a GPU in a debugger",
		run:    runLateRank,
	})
	register(&Bug{
		Name:   "big-copy-stall",
		Class:  "one unchunked copy at or above the size that stalls the engine, so its signal never fires",
		Source: "MI355X: 256 MiB copies stalled the SDMA engine (the corpus scales the threshold to 1 MiB)",
		Faults: engine.InjectSpec{Plan: engine.InjectPlan{StallBytes: 1 << 20}},
		run:    runBigCopy,
	})
	register(&Bug{
		Name:   "lost-completion",
		Class:  "a completion signal ATOMIC lost by the hardware; the waiter has no other evidence",
		Source: "ROCr lost SDMA completion signals in 2.5–14% of runs",
		Faults: engine.InjectSpec{Plan: engine.InjectPlan{SignalDropRate: 0.03}},
		run:    runLostCompletion,
	})
	register(&Bug{
		Name:   "fused-off-engine",
		Class:  "a queue placed on a dead (fused-off) engine never runs",
		Source: "MORI with SDMA hung on MI308X: queues landed on fused-off engines",
		Faults: engine.InjectSpec{Plan: engine.InjectPlan{DeadQueues: []engine.QueueID{{GPU: 0, Peer: 1, Q: 1}, {GPU: 1, Peer: 2, Q: 1}, {GPU: 2, Peer: 0, Q: 1}}}},
		run:    runFusedOff,
	})
	register(&Bug{
		Name:   "block-slot-mismatch",
		Timing: true,
		Class:  "multi-block signal-slot mismatch: every block waits on queue 0's slot, its data came on its own queue",
		Source: "seed document, waitSignal rules: one running total per (srcRank, queueId)",
		run:    runBlockSlot,
	})
	register(&Bug{
		Name:   "ring-off-by-one",
		Class:  "off-by-one ring step: an all-gather ring of n−2 steps",
		Source: "ring collectives' classic bug",
		run:    runRingOffByOne,
	})
	register(&Bug{
		Name:   "ge-u32-wrap",
		Timing: true,
		Class:  "Ge on a running total across the u32 wrap: the engine compares 32 bits and releases early",
		Source: "seed document, postWaitMemPutPtr: use Eq on a per-call epoch",
		run:    runGeWrap,
	})
	register(&Bug{
		Name:   "bcast-per-queue",
		Class:  "broadcast signals counted per queue: a broadcast's remote signal releases a wait meant for a put",
		Source: "seed document, putBroadcast: a signal slot counts per (source rank, queueId), not per physical queue",
		run:    runBcastPerQueue,
	})
	register(&Bug{
		Name:   "missing-commit",
		Class:  "a missing commit: an Aggregate batch never rung, so quiet returns with nothing sent",
		Source: "seed document, Completion: quiet drains to the last rung packet",
		run:    runMissingCommit,
	})
	register(&Bug{
		Name:   "samequeue-broken",
		Class:  "a broken SameQueue promise: lanes with different peers posting as one group",
		Source: "seed document, ccoSdmaThreadMode: silent corruption in release",
		run:    runSameQueueBroken,
	})
	register(&Bug{
		Name:   "early-source-reuse",
		Timing: true,
		Class:  "early source reuse: the source is overwritten before the copy has read it",
		Source: "seed document, Completion: do not reuse a source buffer before the op completes",
		run:    runEarlyReuse,
	})
	register(&Bug{
		Name:   "expected-per-lane",
		Class:  "expected counted per lane: a group's put signals once, not once per lane",
		Source: "seed document, waitSignal rules: one put() call advances the counter by one",
		run:    runExpectedPerLane,
	})
	register(&Bug{
		Name:   "no-quiet-across-kernels",
		Timing: true,
		Class:  "a missing quiet before reuse across kernels: kernel exit does not drain SDMA",
		Source: "seed document, Completion: nothing has happened when put returns; you must drain",
		run:    runNoQuietAcrossKernels,
	})
	register(&Bug{
		Name:   "flag-set-cleared",
		Timing: true,
		Class:  "postWaitMem on a flag that is set, then cleared before the engine's next poll",
		Source: "seed document, postWaitMem sharp edges: the engine samples the flag; a flag that flips back is missed",
		run:    runFlagSetCleared,
	})
}

// gin-allgather-multicta: a ring all-gather over grid CTAs, CTA b moving
// its slice on queue b with a remote signal. The buggy receiver waits for
// every CTA's signals on queue 0's slot, as one counter for the grid; each
// slot only ever counts its own queue's signals, so any grid wider than
// one CTA deadlocks at the first step.
func runGinAllgather(c Config, fixed bool) (Outcome, error) {
	const ranks, grid, chunk = 4, 2, 4096
	r, w, err := setup(c, ranks, grid, engine.InjectSpec{}, ranks*grid*chunk)
	if err != nil {
		return Outcome{}, err
	}
	off := func(owner, b int) uint64 { return uint64(owner*grid+b) * chunk }
	for me := range ranks {
		for b := range grid {
			if err := r.fill(w[me], off(me, b), chunk, me, b); err != nil {
				return Outcome{}, err
			}
		}
	}
	err = r.launchAll(grid, 1, func(me int, t *kernel.Thread, sdma *cco.Sdma) {
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
		return Outcome{}, err
	}
	return r.done(func() error {
		for me := range ranks {
			for owner := range ranks {
				for b := range grid {
					if err := r.expect(fmt.Sprintf("rank %d's slice %d of rank %d", me, b, owner), w[me], off(owner, b), chunk, owner, b); err != nil {
						return err
					}
				}
			}
		}
		return nil
	})
}

// late-rank-snapshot: a ring exchange where the buggy receiver takes its
// expected count from the slot when its kernel starts ("what is there now,
// plus one"). Launched together, no signal has landed yet and it works;
// when one GPU's launch is late by more than its sender needs to deliver
// (a few µs), the signal is already there, the receiver waits for one
// more that never comes.
func runLateRank(c Config, fixed bool) (Outcome, error) {
	const ranks, bytes = 4, 1024
	r, w, err := setup(c, ranks, 1, engine.InjectSpec{}, 2*bytes)
	if err != nil {
		return Outcome{}, err
	}
	for me := range ranks {
		if err := r.fill(w[me], 0, bytes, me, 0); err != nil {
			return Outcome{}, err
		}
	}
	err = r.launchAll(1, 1, func(me int, t *kernel.Thread, sdma *cco.Sdma) {
		next, prev := (me+1)%ranks, (me+ranks-1)%ranks
		want := uint64(1)
		if !fixed {
			want = cco.NewMem(t, sdma.DevComm()).Load64(r.slot(me, prev, 0)) + 1 // bug: a snapshot, not a maintained count
		}
		sdma.Put(next, w[me], bytes, w[me], 0, bytes, 0, cco.RemoteSignal)
		sdma.WaitSignal(prev, 0, want)
		sdma.QuietQueue(next, 0)
	})
	if err != nil {
		return Outcome{}, err
	}
	return r.done(func() error { return r.expectFromPrev(w, bytes, bytes) })
}

// big-copy-stall: rank 0 sends 1 MiB to rank 1 in one copy, on an engine
// that stalls on copies of 1 MiB or more (MI355X's 256 MiB, scaled down).
// The fix chunks the transfer below the stall size.
func runBigCopy(c Config, fixed bool) (Outcome, error) {
	const bytes = 1 << 20
	b := Lookup1("big-copy-stall")
	r, w, err := setup(c, 2, 1, b.Faults, 2*bytes)
	if err != nil {
		return Outcome{}, err
	}
	if err := r.fill(w[0], 0, bytes, 0, 0); err != nil {
		return Outcome{}, err
	}
	pieces := 1
	if fixed {
		pieces = 4
	}
	if _, err := r.launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		n := uint64(bytes / pieces)
		for i := range pieces {
			o := uint64(i) * n
			sdma.Put(1, w[1], bytes+o, w[0], o, n, 0, cco.RemoteSignal)
		}
		sdma.QuietQueue(1, 0)
	}); err != nil {
		return Outcome{}, err
	}
	if _, err := r.launch(1, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.WaitSignal(0, 0, uint64(pieces))
	}); err != nil {
		return Outcome{}, err
	}
	return r.done(func() error { return r.expect("rank 1's 1 MiB from rank 0", w[1], bytes, bytes, 0, 0) })
}

// Lookup1 is Lookup for names the corpus itself registers.
func Lookup1(name string) *Bug {
	b, err := Lookup(name)
	if err != nil {
		panic(err)
	}
	return b
}

// lost-completion: four rounds of a ring exchange, each receiver trusting
// its signal alone, on hardware that loses 3% of signal ATOMICs. The twin
// is the same program on healthy hardware: the incident is the driver's,
// the program's part is having no other evidence.
func runLostCompletion(c Config, fixed bool) (Outcome, error) {
	const ranks, rounds, bytes = 4, 4, 512
	faults := Lookup1("lost-completion").Faults
	if fixed {
		faults = engine.InjectSpec{}
	}
	r, w, err := setup(c, ranks, 1, faults, 2*bytes)
	if err != nil {
		return Outcome{}, err
	}
	for me := range ranks {
		if err := r.fill(w[me], 0, bytes, me, 0); err != nil {
			return Outcome{}, err
		}
	}
	err = r.launchAll(1, 1, func(me int, t *kernel.Thread, sdma *cco.Sdma) {
		next, prev := (me+1)%ranks, (me+ranks-1)%ranks
		for k := range rounds {
			sdma.Put(next, w[me], bytes, w[me], 0, bytes, 0, cco.RemoteSignal)
			sdma.WaitSignal(prev, 0, uint64(k+1))
		}
		sdma.QuietQueue(next, 0)
	})
	if err != nil {
		return Outcome{}, err
	}
	return r.done(nil)
}

// fused-off-engine: a ring exchange spreading each rank's block over two
// queue ids, on a machine where queue id 1 of every ring hop sits on a
// fused-off engine. The fix keeps to the live queue.
func runFusedOff(c Config, fixed bool) (Outcome, error) {
	const ranks, bytes = 3, 2048
	r, w, err := setup(c, ranks, 2, Lookup1("fused-off-engine").Faults, 2*bytes)
	if err != nil {
		return Outcome{}, err
	}
	for me := range ranks {
		if err := r.fill(w[me], 0, bytes, me, 0); err != nil {
			return Outcome{}, err
		}
	}
	err = r.launchAll(1, 2, func(me int, t *kernel.Thread, sdma *cco.Sdma) {
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
		return Outcome{}, err
	}
	return r.done(func() error { return r.expectFromPrev(w, bytes, bytes) })
}

// block-slot-mismatch: rank 0's CTA b sends slice b on queue b with a
// remote signal; rank 1's CTA b waits for "the signal" on queue 0's slot
// and then uses its slice. CTA 0's wait is right; CTA 1's is released by
// CTA 0's signal, and uses its slice whether or not queue 1 has delivered
// it yet.
func runBlockSlot(c Config, fixed bool) (Outcome, error) {
	const grid, chunk = 2, 16 << 10
	r, w, err := setup(c, 2, grid, engine.InjectSpec{}, 2*grid*chunk)
	if err != nil {
		return Outcome{}, err
	}
	for b := range grid {
		if err := r.fill(w[0], uint64(b)*chunk, chunk, 0, b); err != nil {
			return Outcome{}, err
		}
	}
	got := make([][]byte, grid)
	if _, err := r.launch(0, grid, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		b := t.BlockIdx()
		sdma.Put(1, w[1], uint64(grid+b)*chunk, w[0], uint64(b)*chunk, chunk, b, cco.RemoteSignal)
		sdma.QuietQueue(1, b)
	}); err != nil {
		return Outcome{}, err
	}
	if _, err := r.launch(1, grid, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		b := t.BlockIdx()
		q := 0 // bug: every CTA waits on queue 0's slot
		if fixed {
			q = b
		}
		sdma.WaitSignal(0, q, 1)
		got[b] = snapshot(sdma, w[1], uint64(grid+b)*chunk, chunk)
	}); err != nil {
		return Outcome{}, err
	}
	return r.done(func() error {
		for b := range grid {
			if err := checkBytes(fmt.Sprintf("rank 1's CTA %d's slice when its wait returned", b), got[b], 0, b); err != nil {
				return err
			}
		}
		return nil
	})
}

// ring-off-by-one: a ring all-gather that runs n−2 steps instead of n−1,
// so every rank misses the block of the rank after it.
func runRingOffByOne(c Config, fixed bool) (Outcome, error) {
	const ranks, chunk = 4, 1024
	r, w, err := setup(c, ranks, 1, engine.InjectSpec{}, ranks*chunk)
	if err != nil {
		return Outcome{}, err
	}
	for me := range ranks {
		if err := r.fill(w[me], uint64(me)*chunk, chunk, me, 0); err != nil {
			return Outcome{}, err
		}
	}
	steps := ranks - 2 // bug
	if fixed {
		steps = ranks - 1
	}
	err = r.launchAll(1, 1, func(me int, t *kernel.Thread, sdma *cco.Sdma) {
		next, prev := (me+1)%ranks, (me+ranks-1)%ranks
		for k := range steps {
			owner := uint64((me - k + ranks) % ranks)
			sdma.Put(next, w[me], owner*chunk, w[me], owner*chunk, chunk, 0, cco.RemoteSignal)
			sdma.WaitSignal(prev, 0, uint64(k+1))
		}
		sdma.QuietQueue(next, 0)
	})
	if err != nil {
		return Outcome{}, err
	}
	return r.done(func() error {
		for me := range ranks {
			for owner := range ranks {
				if err := r.expect(fmt.Sprintf("rank %d's block of rank %d", me, owner), w[me], uint64(owner)*chunk, chunk, owner, 0); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// ge-u32-wrap: a relay 0 → 1 → 2 where rank 1's engine forwards once a
// flag rank 0 writes behind its data says the round's data is in. The
// flag holds a running total; after 2^32−1 rounds it is 0xFFFFFFFF and
// this round's total wraps to 0. "Flag ≥ 0" holds at once, so the buggy
// relay forwards before the data arrives; the fix waits for Eq on the
// round's value.
func runGeWrap(c Config, fixed bool) (Outcome, error) {
	const bytes = 8192
	r, err := newRig(c, 3, 1, engine.InjectSpec{})
	if err != nil {
		return Outcome{}, err
	}
	data, err := r.window(2 * bytes)
	if err != nil {
		return Outcome{}, err
	}
	flag, err := r.window(64) // [0]: the flag; [8]: rank 0's next total
	if err != nil {
		return Outcome{}, err
	}
	before := uint32(0xFFFF_FFFF) // the total after 2^32−1 rounds
	total := before + 1           // this round's: 0
	if err := r.mem.Store32(flag[1].LocalPtr(0), before); err != nil {
		return Outcome{}, err
	}
	if err := r.mem.Store32(flag[0].LocalPtr(8), total); err != nil {
		return Outcome{}, err
	}
	if err := r.fill(data[0], 0, bytes, 0, 0); err != nil {
		return Outcome{}, err
	}
	if _, err := r.launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.Put(1, data[1], 0, data[0], 0, bytes, 0)
		sdma.Put(1, flag[1], 0, flag[0], 8, 4, 0) // behind the data, on the same queue
		sdma.QuietQueue(1, 0)
	}); err != nil {
		return Outcome{}, err
	}
	if _, err := r.launch(1, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		cmp := cco.SdmaCmpGe // bug: Ge on a running total
		if fixed {
			cmp = cco.SdmaCmpEq
		}
		sdma.PostWaitMem(2, 0, flag[1], 0, total, cmp, 0xFFFF_FFFF)
		sdma.Put(2, data[2], bytes, data[1], 0, bytes, 0, cco.RemoteSignal)
	}); err != nil {
		return Outcome{}, err
	}
	if _, err := r.launch(2, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.WaitSignal(1, 0, 1)
	}); err != nil {
		return Outcome{}, err
	}
	return r.done(func() error { return r.expect("rank 2's relayed block", data[2], bytes, bytes, 0, 0) })
}

// bcast-per-queue: rank 0 broadcasts a small header to ranks 1 and 2 on
// (1, q0), then puts rank 2's 256 KiB payload on (2, q0), both with remote
// signals. The broadcast's signal also bumps rank 2's [0, q0] slot, which
// rank 2 reads as "the put on (2, q0) landed": released by the broadcast,
// it uses a payload still crossing the link. The fix gives the broadcast
// its own queue id.
func runBcastPerQueue(c Config, fixed bool) (Outcome, error) {
	const big, small = 256 << 10, 4096
	r, w, err := setup(c, 3, 2, engine.InjectSpec{}, 2*big+2*small)
	if err != nil {
		return Outcome{}, err
	}
	src, bsrc, dst, bdst := uint64(0), uint64(big), uint64(big+small), uint64(2*big+small)
	if err := r.fill(w[0], src, big, 0, 0); err != nil {
		return Outcome{}, err
	}
	if err := r.fill(w[0], bsrc, small, 0, 1); err != nil {
		return Outcome{}, err
	}
	bq := 0 // bug: the broadcast shares queue id 0 with the put
	if fixed {
		bq = 1
	}
	var got2, got1 []byte
	if _, err := r.launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		// The header to both peers, then rank 2's payload.
		sdma.PutBroadcast(1, w[1], bdst, 2, w[2], bdst, w[0], bsrc, small, bq, cco.RemoteSignal)
		sdma.Put(2, w[2], dst, w[0], src, big, 0, cco.RemoteSignal)
		sdma.Quiet(1)
		sdma.Quiet(2)
	}); err != nil {
		return Outcome{}, err
	}
	if _, err := r.launch(2, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.WaitSignal(0, 0, 1) // "the put on (2, q0) landed"
		got2 = snapshot(sdma, w[2], dst, big)
		if fixed {
			sdma.WaitSignal(0, bq, 1) // the header, on its own queue id
		}
	}); err != nil {
		return Outcome{}, err
	}
	if _, err := r.launch(1, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.WaitSignal(0, bq, 1)
		got1 = snapshot(sdma, w[1], bdst, small)
	}); err != nil {
		return Outcome{}, err
	}
	return r.done(func() error {
		return errors.Join(checkBytes("rank 2's put block when its wait returned", got2, 0, 0),
			checkBytes("rank 1's broadcast block", got1, 0, 1))
	})
}

// missing-commit: rank 0 posts four Aggregate puts and quiets without
// committing: quiet returns at once with nothing rung. It then tells rank
// 1 "done" with a signalled put on another queue; rank 1 finds nothing.
func runMissingCommit(c Config, fixed bool) (Outcome, error) {
	const pieces, n = 4, 1024
	r, w, err := setup(c, 2, 2, engine.InjectSpec{}, 2*pieces*n+64)
	if err != nil {
		return Outcome{}, err
	}
	if err := r.fill(w[0], 0, pieces*n, 0, 0); err != nil {
		return Outcome{}, err
	}
	var got []byte
	if _, err := r.launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
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
		return Outcome{}, err
	}
	if _, err := r.launch(1, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.WaitSignal(0, 1, 1)
		got = snapshot(sdma, w[1], pieces*n, pieces*n)
	}); err != nil {
		return Outcome{}, err
	}
	return r.done(func() error { return checkBytes("rank 1's batch after rank 0 said done", got, 0, 0) })
}

// samequeue-broken: lanes 0..3 of one warp put to four different peers
// under ccoSdmaThreadSameQueue, which promises they share one queue. In
// release the group's packets go to one lane's queue reservation laid out
// for another's, and data lands wrong. The fix is Independent.
func runSameQueueBroken(c Config, fixed bool) (Outcome, error) {
	const ranks, n = 5, 2048
	r, w, err := setup(c, ranks, 1, engine.InjectSpec{}, 2*ranks*n)
	if err != nil {
		return Outcome{}, err
	}
	for p := 1; p < ranks; p++ {
		if err := r.fill(w[0], uint64(p)*n, n, 0, p); err != nil {
			return Outcome{}, err
		}
	}
	mode := cco.SdmaThreadSameQueue // bug: the lanes' peers differ
	if fixed {
		mode = cco.SdmaThreadIndependent
	}
	if _, err := r.launch(0, 1, ranks-1, func(t *kernel.Thread, sdma *cco.Sdma) {
		p := t.ThreadIdx() + 1
		sdma.Put(p, w[p], ranks*n, w[0], uint64(p)*n, n, 0, mode)
		sdma.Quiet(p)
	}); err != nil {
		return Outcome{}, err
	}
	return r.done(func() error {
		for p := 1; p < ranks; p++ {
			if err := r.expect(fmt.Sprintf("rank %d's block from rank 0", p), w[p], ranks*n, n, 0, p); err != nil {
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

// early-source-reuse: rank 0 puts 1 MiB to rank 1, computes, and writes
// the next round's data into the source without quiet first. The copy
// reads its source as it goes; a copy still running sends new data.
func runEarlyReuse(c Config, fixed bool) (Outcome, error) {
	const bytes = 1 << 20
	r, w, err := setup(c, 2, 1, engine.InjectSpec{}, 2*bytes)
	if err != nil {
		return Outcome{}, err
	}
	if err := r.fill(w[0], 0, bytes, 0, 0); err != nil {
		return Outcome{}, err
	}
	if _, err := r.launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.Put(1, w[1], bytes, w[0], 0, bytes, 0, cco.RemoteSignal)
		compute(t, earlyReuseCompute)
		if fixed {
			sdma.QuietQueue(1, 0)
		}
		fillLane(sdma, w[0], 0, bytes, 0, 1) // the next round's data
	}); err != nil {
		return Outcome{}, err
	}
	if _, err := r.launch(1, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) { sdma.WaitSignal(0, 0, 1) }); err != nil {
		return Outcome{}, err
	}
	return r.done(func() error { return r.expect("rank 1's block from rank 0", w[1], bytes, bytes, 0, 0) })
}

// expected-per-lane: eight lanes of one warp put eight slices as one
// SameQueue group with a remote signal; the receiver waits for eight
// signals, but the group signals once.
func runExpectedPerLane(c Config, fixed bool) (Outcome, error) {
	const lanes, n = 8, 512
	r, w, err := setup(c, 2, 1, engine.InjectSpec{}, 2*lanes*n)
	if err != nil {
		return Outcome{}, err
	}
	if err := r.fill(w[0], 0, lanes*n, 0, 0); err != nil {
		return Outcome{}, err
	}
	if _, err := r.launch(0, 1, lanes, func(t *kernel.Thread, sdma *cco.Sdma) {
		o := uint64(t.ThreadIdx() * n)
		sdma.Put(1, w[1], lanes*n+o, w[0], o, n, 0, cco.SdmaThreadSameQueue, cco.RemoteSignal)
		sdma.QuietQueue(1, 0)
	}); err != nil {
		return Outcome{}, err
	}
	want := uint64(lanes) // bug: one per lane
	if fixed {
		want = 1
	}
	if _, err := r.launch(1, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) { sdma.WaitSignal(0, 0, want) }); err != nil {
		return Outcome{}, err
	}
	return r.done(func() error { return r.expect("rank 1's slices", w[1], lanes*n, lanes*n, 0, 0) })
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
func runNoQuietAcrossKernels(c Config, fixed bool) (Outcome, error) {
	const bytes = 1 << 20
	r, w, err := setup(c, 2, 1, engine.InjectSpec{}, 2*bytes)
	if err != nil {
		return Outcome{}, err
	}
	if err := r.fill(w[0], 0, bytes, 0, 0); err != nil {
		return Outcome{}, err
	}
	first, err := r.launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.Put(1, w[1], bytes, w[0], 0, bytes, 0, cco.RemoteSignal)
		if fixed {
			sdma.QuietQueue(1, 0)
		}
	})
	if err != nil {
		return Outcome{}, err
	}
	r.s.Spawn("host0", func(a *sim.Actor) {
		if err := first.Wait(a); err != nil {
			return
		}
		a.Sleep(noQuietHostGap)
		if _, err := r.launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
			fillLane(sdma, w[0], 0, bytes, 0, 1)
		}); err != nil {
			r.s.Fail(err)
		}
	})
	if _, err := r.launch(1, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) { sdma.WaitSignal(0, 0, 1) }); err != nil {
		return Outcome{}, err
	}
	return r.done(func() error { return r.expect("rank 1's block from rank 0", w[1], bytes, bytes, 0, 0) })
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
func runFlagSetCleared(c Config, fixed bool) (Outcome, error) {
	const bytes = 2048
	r, w, err := setup(c, 2, 1, engine.InjectSpec{}, 2*bytes+64)
	if err != nil {
		return Outcome{}, err
	}
	flag := uint64(2 * bytes)
	if err := r.fill(w[0], 0, bytes, 0, 0); err != nil {
		return Outcome{}, err
	}
	if _, err := r.launch(0, 2, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
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
		return Outcome{}, err
	}
	if _, err := r.launch(1, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) { sdma.WaitSignal(0, 0, 1) }); err != nil {
		return Outcome{}, err
	}
	return r.done(func() error { return r.expect("rank 1's block from rank 0", w[1], bytes, bytes, 0, 0) })
}
