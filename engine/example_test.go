package engine_test

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
)

// A copy from GPU 0 to GPU 1 followed by a signal: the receiver waits on
// the signal and then finds the data there.
func Example() {
	s := sim.New(sim.Config{Seed: 1})
	n, _ := engine.NewNode(s, engine.Config{GPUs: 2})
	mem := n.Memory()
	src, _ := mem.Alloc(0, 4096, "src")
	dst, _ := mem.Alloc(1, 4096, "dst")
	sig, _ := mem.Alloc(1, 64, "signal")
	_ = mem.Write(src, []byte("hello, gpu1"))
	q, _ := n.Queue(0, 1, 0)

	s.Spawn("sender", func(a *sim.Actor) {
		base, _ := q.Reserve(a, 2*ring.Unit) // [COPY][ATOMIC]
		c, at := ring.Copy(dst, src, 11), ring.AtomicAdd64(sig, 1)
		_ = q.WriteUnit(base, &c)
		_ = q.WriteUnit(base+ring.Unit, &at)
		_ = q.Submit(a, base, base+2*ring.Unit)
	})
	s.Spawn("receiver", func(a *sim.Actor) {
		mem.Await(a, sig, 8, func() bool { v, _ := mem.Load64(sig); return v >= 1 },
			func() string { return "signal >= 1" })
		got := make([]byte, 11)
		_ = mem.Read(dst, got)
		fmt.Printf("%s at %v\n", got, a.Now())
	})
	if err := s.Run(); err != nil {
		fmt.Println(err)
	}
	// Output: hello, gpu1 at 2.84388µs
}

// A POLL_REGMEM parks the queue until a flag in local memory holds; the
// copy behind it waits too.
func ExampleQueue_Submit_poll() {
	s := sim.New(sim.Config{Seed: 1})
	n, _ := engine.NewNode(s, engine.Config{GPUs: 2})
	mem := n.Memory()
	flag, _ := mem.Alloc(0, 64, "flag")
	src, _ := mem.Alloc(0, 4096, "src")
	dst, _ := mem.Alloc(1, 4096, "dst")
	_ = mem.Write(src, bytes.Repeat([]byte{7}, 64))
	q, _ := n.Queue(0, 1, 0)
	s.Spawn("kernel", func(a *sim.Actor) {
		base, _ := q.Reserve(a, 2*ring.Unit)
		w := ring.Poll(flag, 1, 0xFFFFFFFF, ring.CmpEQ, 4, ring.RetryForever)
		c := ring.Copy(dst, src, 64)
		_ = q.WriteUnit(base, &w)
		_ = q.WriteUnit(base+ring.Unit, &c)
		_ = q.Submit(a, base, base+2*ring.Unit)
	})
	s.Spawn("host", func(a *sim.Actor) {
		a.Sleep(100 * sim.Microsecond)
		_ = mem.Store32(flag, 1)
		q.AwaitDrained(a, q.QuietTarget())
		v, _ := mem.Load32(dst)
		fmt.Printf("copied %#x after the flag, drained at %v\n", v, a.Now())
	})
	_ = s.Run()
	// Output: copied 0x7070707 after the flag, drained at 102.444451µs
}

// A bad address in a packet is a fault naming the queue, the packet and the
// address; the process does not panic.
func ExampleFault() {
	s := sim.New(sim.Config{Seed: 1})
	n, _ := engine.NewNode(s, engine.Config{GPUs: 2})
	src, _ := n.Memory().Alloc(0, 4096, "src")
	q, _ := n.Queue(0, 1, 0)
	s.Spawn("kernel", func(a *sim.Actor) {
		base, _ := q.Reserve(a, ring.Unit)
		c := ring.Copy(0xdead0000, src, 64)
		_ = q.WriteUnit(base, &c)
		_ = q.Submit(a, base, base+ring.Unit)
	})
	var f *engine.Fault
	if errors.As(s.Run(), &f) {
		fmt.Println(f.Kind, f.Queue, fmt.Sprintf("%#x", f.Addr))
	}
	// Output: VM_HOLE sdma gpu0→gpu1 q0 0xdead0000
}
