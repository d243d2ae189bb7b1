package engine

import (
	"errors"
	"testing"

	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
)

const fuzzBase = 4 << 30 // GPU 0's slice starts at 0x1_0000_0000, easy for the fuzzer to hit

// FuzzEngineRing rings arbitrary bytes on a queue. Whatever they hold, the
// engine must end in success, a fault or a hang report: never a panic, and
// never a write outside backed memory.
func FuzzEngineRing(f *testing.F) {
	buf := uint64(fuzzBase)
	seeds := [][]ring.Packet{
		{ring.Copy(buf+256, buf, 64), ring.AtomicAdd64(buf+1024, 1)},
		{ring.Poll(buf, 0, 0, ring.CmpAlways, 4, ring.RetryForever), ring.Fence(buf+8, 1)},
		{ring.Poll(buf, 1, ^uint32(0), ring.CmpEQ, 1, 2), ring.Trap(5)},
		{ring.TimestampGlobal(buf + 64), ring.Nop(2)},
		{ring.WriteLinear(buf+16, []uint32{1, 2})},
		{ring.Copy(buf+0x10000, buf, 64)}, // past the buffer: VM hole
		{ring.AtomicAdd64(buf+3, 1)},      // misaligned
	}
	for _, pk := range seeds {
		var b []byte
		for i := range pk {
			b = pk[i].AppendTo(b)
		}
		f.Add(b)
	}
	bc := ring.Broadcast(buf+512, buf+1024+8, buf, 100)
	f.Add(bc.AppendTo(nil))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 4096 {
			b = b[:4096]
		}
		s := sim.New(sim.Config{Seed: 1, Watchdog: 10 * sim.Millisecond})
		n, err := NewNode(s, Config{GPUs: 2, Base: fuzzBase, Stride: 4 << 30, KeepGoingOnFault: true})
		if err != nil {
			t.Fatal(err)
		}
		addr, _ := n.Memory().Alloc(0, 4096, "buf")
		if addr != buf {
			t.Fatalf("buffer at %#x, want %#x", addr, buf)
		}
		q, _ := n.Queue(0, 1, 0)
		end := uint64(len(b)) &^ 3
		q.Ring().Write(0, b)
		s.Spawn("host", func(a *sim.Actor) { q.RingDoorbell(end) })
		err = s.Run()
		var h *sim.HangError
		var fl *Fault
		if err != nil && !errors.As(err, &h) && !errors.As(err, &fl) {
			t.Fatalf("unexpected error: %v", err)
		}
		if h != nil && len(h.Waiters) == 0 {
			t.Fatal("hang report with no waiters")
		}
		if rs := n.Memory().Regions(); len(rs) != 1 || rs[0].Size != 4096 {
			t.Fatalf("memory map changed: %+v", rs)
		}
		if q.Ring().Rptr() > end {
			t.Fatalf("rptr %#x beyond the doorbell %#x", q.Ring().Rptr(), end)
		}
	})
}
