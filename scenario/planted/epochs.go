package planted

import (
	"errors"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/sim"
)

// epochBytes is the block each signal-epoch program sends.
const epochBytes = 4096

// launchNamed starts fn as rank's kernel called name, <<<1, 1>>>.
func (p *prog) launchNamed(name string, rank int, fn kernelFn) *kernel.Kernel {
	if p.err != nil {
		return nil
	}
	k, err := p.LaunchNamed(name, rank, 1, 1, fn)
	p.fail(err)
	return k
}

// stale-epoch-across-calls: two calls of a point-to-point step, each a
// send kernel on rank 0 and a receive kernel on rank 1, the second call's
// kernels launched by each host once its first has finished. Rank 1's
// receive kernel waits for 1 signal in both calls, as if the slot started
// at 0 each call; it keeps the running total, so the second call's wait
// holds at once on the first call's signal and reads the second block
// before it lands. The fix waits for the running total (2).
func staleAcrossCalls(p *prog) func() error {
	const n = epochBytes
	w := p.window(4 * n) // rank 0: the calls' blocks at 0 and n; rank 1: their destinations at 2n and 3n
	p.fill(w, 0, 0, n, 0)
	p.fill(w, 0, n, n, 1)
	var got1, got2 []byte
	send := func(call uint64) kernelFn {
		return func(t *kernel.Thread, sdma *cco.Sdma) {
			sdma.Put(1, w[1], (2+call)*n, w[0], call*n, n, 0, cco.RemoteSignal)
			sdma.QuietQueue(1, 0)
		}
	}
	send1 := p.launchNamed("send-call1", 0, send(0))
	recv1 := p.launchNamed("recv-call1", 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.WaitSignal(0, 0, 1)
		got1 = snapshot(sdma, w[1], 2*n, n)
	})
	expected := uint64(1) // bug: the call's own count, not the slot's running total
	if p.fixed {
		expected = 2
	}
	p.after(send1, 0, "send-call2", send(1))
	p.after(recv1, 1, "recv-call2", func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.WaitSignal(0, 0, expected)
		got2 = snapshot(sdma, w[1], 3*n, n)
	})
	return func() error {
		return errors.Join(checkBytes("rank 1's call-1 block as its kernel read it", got1, 0, 0),
			checkBytes("rank 1's call-2 block as its kernel read it", got2, 0, 1))
	}
}

// after is rank's host launching fn, called name, once kernel k has
// finished (a stream's order, or a host sync); a failed launch fails the
// run.
func (p *prog) after(k *kernel.Kernel, rank int, name string, fn kernelFn) {
	if p.err != nil {
		return
	}
	p.Sim.Spawn("host "+name, func(a *sim.Actor) {
		if err := k.Wait(a); err != nil {
			return
		}
		if _, err := p.LaunchNamed(name, rank, 1, 1, fn); err != nil {
			p.Sim.Fail(err)
		}
	})
}

// shared-slot-across-kernels: two kernels on rank 0, launched together (two
// streams), each put a block to rank 1 with a remote signal on queue id 0,
// so both signals land on rank 1's one slot [0, q0]. Rank 1 waits for 1
// signal and reads kernel A's 64 KiB block, then for 2 and reads kernel
// B's small one: when B's signal lands first, the first wait returns on
// it while A's block is still crossing. The fix gives kernel B its own
// queue id, so each block has its own slot.
func sharedAcrossKernels(p *prog) func() error {
	const big, small = 64 << 10, 1024
	w := p.window(2 * (big + small)) // rank 0: A's block at 0, B's at big; rank 1: at big+small and 2big+small
	dA, dB := uint64(big+small), uint64(2*big+small)
	p.fill(w, 0, 0, big, 0)
	p.fill(w, 0, big, small, 1)
	qb := 0 // bug: kernel B signals on the slot kernel A's block counts on
	if p.fixed {
		qb = 1
	}
	var gotA, gotB []byte
	p.launchNamed("send-a", 0, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.Put(1, w[1], dA, w[0], 0, big, 0, cco.RemoteSignal)
		sdma.QuietQueue(1, 0)
	})
	p.launchNamed("send-b", 0, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.Put(1, w[1], dB, w[0], big, small, qb, cco.RemoteSignal)
		sdma.QuietQueue(1, qb)
	})
	p.launchNamed("recv", 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.WaitSignal(0, 0, 1) // "kernel A's block is in"
		gotA = snapshot(sdma, w[1], dA, big)
		if p.fixed {
			sdma.WaitSignal(0, qb, 1)
		} else {
			sdma.WaitSignal(0, 0, 2)
		}
		gotB = snapshot(sdma, w[1], dB, small)
	})
	return func() error {
		return errors.Join(checkBytes("rank 1's block from kernel send-a as its kernel read it", gotA, 0, 0),
			checkBytes("rank 1's block from kernel send-b as its kernel read it", gotB, 0, 1))
	}
}

// asyncMemsetWork is the work queued on rank 1's stream ahead of its
// memset: about the time rank 0's put takes, so the seed decides which
// lands last.
const asyncMemsetWork = 3 * sim.Microsecond

// async-memset-before-put: rank 1's host clears its receive buffer with an
// asynchronous memset on its stream (a fill kernel, as hipMemsetAsync
// runs on device memory) behind earlier work, then launches its receive
// kernel on the same stream; rank 0 is told to send at once, not after
// the memset has run. When the put lands first the memset zeroes it. The
// fix launches rank 0's put once the memset has completed (a stream sync
// and a barrier between the hosts).
func asyncMemset(p *prog) func() error {
	const n = epochBytes
	w := p.sender(2*n, n)
	memset := p.launchNamed("memset-async", 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		compute(t, asyncMemsetWork) // the stream's earlier work
		cco.NewMem(sdma.Thread(), sdma.DevComm()).Write(w[1].LocalPtr(n), make([]byte, n))
	})
	put := func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.Put(1, w[1], n, w[0], 0, n, 0, cco.RemoteSignal)
		sdma.QuietQueue(1, 0)
	}
	if p.fixed {
		p.after(memset, 0, "send", put)
	} else {
		p.launchNamed("send", 0, put)
	}
	var got []byte
	p.after(memset, 1, "recv", func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.WaitSignal(0, 0, 1)
		got = snapshot(sdma, w[1], n, n)
	})
	return func() error {
		return errors.Join(checkBytes("rank 1's block as its kernel read it", got, 0, 0), p.expect("rank 1's block from rank 0", w[1], n, n, 0, 0))
	}
}

// u64-counter-wrap: rank 1's slot for rank 0 starts at ^0, a "never
// signalled" sentinel, and the receiver counts from it: expected is the
// slot's start plus one, which wraps to 0, and rank 0's signal wraps the
// counter past 2^64 to 0 too. "Slot ≥ 0" holds at once, so the receiver
// reads before the data lands. The fix starts the slot at 0.
func u64Wrap(p *prog) func() error {
	const n = epochBytes
	w := p.sender(2*n, n)
	start := ^uint64(0) // bug: a sentinel in a counter
	if p.fixed {
		start = 0
	}
	p.store64(p.slot(1, 0, 0), start)
	var got []byte
	p.launchNamed("send", 0, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.Put(1, w[1], n, w[0], 0, n, 0, cco.RemoteSignal)
		sdma.QuietQueue(1, 0)
	})
	p.launchNamed("recv", 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.WaitSignal(0, 0, start+1)
		got = snapshot(sdma, w[1], n, n)
	})
	return func() error { return checkBytes("rank 1's block as its kernel read it", got, 0, 0) }
}
