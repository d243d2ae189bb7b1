package engine

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/model"
	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
)

// Conformance: one test per class of bug that emulators of this hardware
// have had (emud issue 24), each run against emud and against a
// deliberately broken variant written in the test, which must fail it.
// Covered, one test each: the fixed-length decoder
// (TestConformanceCompactDecoder), the doorbell observed without acquiring
// the write pointer (TestConformanceDoorbellAcquiresWptr), the completion
// waiter started before the doorbell (TestConformanceWaiterBeforeDoorbell)
// and the poll that livelocks its writer (TestConformancePollLivelock).

// decoder is how an engine walks a stream: the length of the packet at b
// and its kind.
type decoder func(b []byte) (int, ring.Kind, error)

func emudDecoder(d ring.Dialect) decoder {
	return func(b []byte) (int, ring.Kind, error) {
		var p ring.Packet
		n, err := ring.Decode(&p, b, d)
		return n, p.Kind, err
	}
}

// fixedLenDecoder is the bug: it takes every COPY_LINEAR_WAIT_SIGNAL to be
// gfx950's 19 dwords, so on gfx1250 it swallows the compact packets after
// a short one without executing them.
func fixedLenDecoder(b []byte) (int, ring.Kind, error) {
	var p ring.Packet
	n, err := ring.Decode(&p, b, ring.GFX1250)
	if err == nil && p.Kind == ring.KindCopyWaitSignal {
		n = min(76, len(b))
	}
	return n, p.Kind, err
}

// checkCompactStream walks a gfx1250 stream of compact fused packets with
// dec and reports whether it saw every packet, in order, and ended on the
// stream's end.
func checkCompactStream(dec decoder) error {
	s := &ring.SignalBlock{Op: ring.AtomicOpAdd64, Addr: 0x1000, Data: 1}
	w := &ring.WaitBlock{Func: ring.CmpGE, Addr: 0x2000, Ref: 1, Mask: ^uint64(0)}
	pkts := []ring.Packet{
		ring.CopyWaitSignal(ring.GFX1250, 0x10000, 0x20000, 64, nil, s), // 12 DW
		ring.CopyWaitSignal(ring.GFX1250, 0x10040, 0x20040, 64, w, nil), // 14 DW
		ring.CopyWaitSignal(ring.GFX1250, 0x10080, 0x20080, 64, nil, s), // 12 DW
		ring.CopyWaitSignal(ring.GFX1250, 0x100c0, 0x200c0, 64, w, s),   // 19 DW
	}
	var b []byte
	for i := range pkts {
		b = pkts[i].AppendTo(b)
	}
	var seen int
	for at := 0; at < len(b); {
		n, k, err := dec(b[at:])
		if err != nil {
			return fmt.Errorf("at byte %d: %w", at, err)
		}
		if k == ring.KindCopyWaitSignal {
			seen++
		}
		at += n
	}
	if seen != len(pkts) {
		return fmt.Errorf("executed %d of %d compact packets", seen, len(pkts))
	}
	return nil
}

func TestConformanceCompactDecoder(t *testing.T) {
	require.NoError(t, checkCompactStream(emudDecoder(ring.GFX1250)))
	assert.Error(t, checkCompactStream(fixedLenDecoder), "the broken variant must fail")

	// And emud's engine executes them: every copy lands and both signals
	// count.
	r := newRig(t, 1, Config{GPUs: 1, Model: model.GFX1250Preset()})
	mem := r.n.Memory()
	src, dst, sig, flag := r.alloc(0, 256), r.alloc(0, 256), r.alloc(0, 64), r.alloc(0, 64)
	require.NoError(t, mem.Store64(flag, 1))
	require.NoError(t, mem.Write(src, pattern(256, 3)))
	s := &ring.SignalBlock{Op: ring.AtomicOpAdd64, Addr: sig, Data: 1}
	w := &ring.WaitBlock{Func: ring.CmpGE, Addr: flag, Ref: 1, Mask: ^uint64(0)}
	var pkts []ring.Packet
	for i, blk := range [][2]bool{{false, true}, {true, false}, {false, true}, {true, true}} {
		var wb *ring.WaitBlock
		var sb *ring.SignalBlock
		if blk[0] {
			wb = w
		}
		if blk[1] {
			sb = s
		}
		off := uint64(64 * i)
		pkts = append(pkts, ring.CopyWaitSignal(ring.GFX1250, dst+off, src+off, 64, wb, sb))
	}
	rawStream(r, r.queue(0, 0, 0), 0, pkts...)
	require.NoError(t, r.s.Run())
	got := make([]byte, 256)
	require.NoError(t, mem.Read(dst, got))
	assert.Equal(t, pattern(256, 3), got)
	v, _ := mem.Load64(sig)
	assert.Equal(t, uint64(3), v)
}

// pollLivelock runs a POLL on a flag that a CU stores 10 µs in: poll is the
// engine's poll; it must return with the flag seen and the number of reads
// it made, or an error.
type pollFn func(r *rig, q *Queue, flag uint64) (reads uint64, err error)

// emudPoll: emud's engine parks the POLL on a subscription, so the writer
// runs, and the engine re-reads only at poll-interval ticks.
func emudPoll(r *rig, q *Queue, flag uint64) (uint64, error) {
	var reads uint64
	r.s.Spawn("producer", func(a *sim.Actor) {
		if err := post(a, q, ring.Poll(flag, 1, ^uint32(0), ring.CmpEQ, 4, ring.RetryForever)); err != nil {
			panic(err)
		}
		q.AwaitDrained(a, q.QuietTarget())
		reads = q.poll.reads
	})
	r.s.Spawn("cu", func(a *sim.Actor) {
		a.Sleep(10 * sim.Microsecond)
		if err := r.n.Memory().Store32(flag, 1); err != nil {
			panic(err)
		}
	})
	return reads, r.s.Run()
}

// spinPoll is the bug: the engine re-reads the flag at the same instant
// without ever letting time pass, so the writer, due later, never runs.
// Bounded here so the test ends.
func spinPoll(r *rig, _ *Queue, flag uint64) (uint64, error) {
	var reads uint64
	var err error
	r.s.Spawn("spinning engine", func(a *sim.Actor) {
		for {
			v, _ := r.n.Memory().Load32(flag)
			if reads++; v == 1 {
				return
			}
			if reads == 100000 {
				err = errors.New("livelock: 100000 reads at one instant, the writer's store never landed")
				return
			}
		}
	})
	r.s.Spawn("cu", func(a *sim.Actor) {
		a.Sleep(10 * sim.Microsecond)
		_ = r.n.Memory().Store32(flag, 1)
	})
	if runErr := r.s.Run(); runErr != nil {
		return reads, runErr
	}
	return reads, err
}

// checkPoll: the writer's update lands and the engine's reads are bounded
// by the wait over the poll interval (a few, not thousands).
func checkPoll(t *testing.T, poll pollFn) error {
	r := newRig(t, 1, Config{GPUs: 1})
	flag := r.alloc(0, 64)
	reads, err := poll(r, r.queue(0, 0, 0), flag)
	if err != nil {
		return err
	}
	v, _ := r.n.Memory().Load32(flag)
	if v != 1 {
		return fmt.Errorf("the writer's store never landed")
	}
	if reads > 100 {
		return fmt.Errorf("%d reads for a 10 µs wait", reads)
	}
	return nil
}

func TestConformancePollLivelock(t *testing.T) {
	require.NoError(t, checkPoll(t, emudPoll))
	assert.Error(t, checkPoll(t, spinPoll), "the broken variant must fail")
}

// completionWaiter waits on a signal slot that an ATOMIC rung later will
// bump; it returns the value it saw when it stopped waiting.
type completionWaiter func(r *rig, a *sim.Actor, sig uint64) uint64

// emudWaiter subscribes to the slot before the doorbell and is woken by the
// engine's ATOMIC itself (Memory.Await).
func emudWaiter(r *rig, a *sim.Actor, sig uint64) uint64 {
	mem := r.n.Memory()
	mem.Await(a, sig, 8, func() bool { v, _ := mem.Load64(sig); return v >= 1 }, func() string { return "signal" })
	v, _ := mem.Load64(sig)
	return v
}

// doorbellWaiter is the bug: a waiter started before the doorbell that is
// woken by the doorbell's publication instead of the completion, and reads
// the slot once then.
func doorbellWaiter(r *rig, a *sim.Actor, sig uint64) uint64 {
	a.Sleep(5*sim.Microsecond + 1) // just after the producer rings
	v, _ := r.n.Memory().Load64(sig)
	return v
}

func checkCompletionWaiter(t *testing.T, w completionWaiter) error {
	r := newRig(t, 1, Config{GPUs: 2})
	src, dst, sig := r.alloc(0, 4096), r.alloc(1, 4096), r.alloc(1, 64)
	require.NoError(t, r.n.Memory().Write(src, pattern(4096, 9)))
	q := r.queue(0, 1, 0)
	var seen uint64
	r.s.Spawn("waiter", func(a *sim.Actor) { seen = w(r, a, sig) })
	r.s.Spawn("producer", func(a *sim.Actor) {
		a.Sleep(5 * sim.Microsecond)
		if err := post(a, q, ring.Copy(dst, src, 4096), ring.AtomicAdd64(sig, 1)); err != nil {
			panic(err)
		}
	})
	if err := r.s.Run(); err != nil {
		return err
	}
	if seen != 1 {
		return fmt.Errorf("the waiter stopped waiting and saw %d, not the completion's 1", seen)
	}
	got := make([]byte, 4096)
	require.NoError(t, r.n.Memory().Read(dst, got))
	if !assert.ObjectsAreEqual(pattern(4096, 9), got) {
		return errors.New("the copy had not landed when the signal did")
	}
	return nil
}

func TestConformanceWaiterBeforeDoorbell(t *testing.T) {
	require.NoError(t, checkCompletionWaiter(t, emudWaiter))
	assert.Error(t, checkCompletionWaiter(t, doorbellWaiter), "the broken variant must fail")
}

// ringFetcher is how an engine, told by a doorbell store that the ring
// holds bytes up to v, reads them: it returns the bytes it decodes.
type ringFetcher func(r *rig, q *Queue, snapshot []byte, v uint64) []byte

// emudFetch: emud's engine reads the ring when its fetch runs, after the
// doorbell store; the producer stored the packet bytes and the write
// pointer before ringing (ROCr's order), so everything up to v is there.
func emudFetch(_ *rig, q *Queue, _ []byte, v uint64) []byte {
	b := make([]byte, v)
	q.Ring().Read(0, b)
	return b
}

// staleFetch is the bug: the engine takes the doorbell's value but decodes
// ring bytes it fetched before the producer's write-pointer store became
// visible (no acquire of wptr), so it walks stale contents.
func staleFetch(_ *rig, _ *Queue, snapshot []byte, v uint64) []byte {
	return snapshot[:v]
}

// checkDoorbellAcquire: a producer writes a COPY and an ATOMIC, stores
// the write pointer, then rings; the engine's fetch must see both packets.
// For emud the real engine then runs them: the copy lands and the signal
// counts one.
func checkDoorbellAcquire(t *testing.T, fetch ringFetcher) error {
	r := newRig(t, 1, Config{GPUs: 1})
	mem := r.n.Memory()
	src, dst, sig := r.alloc(0, 256), r.alloc(0, 256), r.alloc(0, 64)
	require.NoError(t, mem.Write(src, pattern(256, 5)))
	q := r.queue(0, 0, 0)
	pkts := []ring.Packet{ring.Copy(dst, src, 256), ring.AtomicAdd64(sig, 1)}
	var raw []byte
	for i := range pkts {
		raw = pkts[i].AppendTo(raw)
	}
	snapshot := make([]byte, q.Ring().Size())
	q.Ring().Read(0, snapshot) // what a prefetching engine holds before the stores
	var fetched []byte
	r.s.Spawn("producer", func(a *sim.Actor) {
		a.Sleep(sim.Microsecond)
		q.Ring().Write(0, raw)
		q.StoreWptr(uint64(len(raw)))
		q.RingDoorbell(uint64(len(raw)))
		fetched = fetch(r, q, snapshot, q.Ring().Doorbell())
	})
	if err := r.s.Run(); err != nil {
		return err
	}
	var kinds []ring.Kind
	for at := 0; at < len(fetched); {
		var p ring.Packet
		n, err := ring.Decode(&p, fetched[at:], ring.GFX94x)
		if err != nil {
			return fmt.Errorf("fetch at byte %d: %w", at, err)
		}
		kinds = append(kinds, p.Kind)
		at += n
	}
	if !assert.ObjectsAreEqual([]ring.Kind{ring.KindCopy, ring.KindAtomic}, kinds) {
		return fmt.Errorf("the fetch decoded %v, not the producer's COPY, ATOMIC", kinds)
	}
	got := make([]byte, 256)
	require.NoError(t, mem.Read(dst, got))
	if v, _ := mem.Load64(sig); v != 1 || !assert.ObjectsAreEqual(pattern(256, 5), got) {
		return fmt.Errorf("the engine did not run the rung packets (signal %d)", v)
	}
	return nil
}

func TestConformanceDoorbellAcquiresWptr(t *testing.T) {
	require.NoError(t, checkDoorbellAcquire(t, emudFetch))
	assert.Error(t, checkDoorbellAcquire(t, staleFetch), "the broken variant must fail")
}
