package engine_test

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
)

// rocrStream is a ROCr-style SDMA submission as raw bytes, laid out as
// ROCr's BlitSdma writes it (gfx9 packet layouts, dwords packed with no
// padding): two dependency polls (wait until each dependency's signal
// value reaches 0), the copy, the completion signal's decrement (ATOMIC
// ADD64 of −1), the event mailbox FENCE and the TRAP that raises the
// event. It is built from dwords here, not with package ring's encoders,
// as a captured stream would arrive.
func rocrStream(deps [2]uint64, dst, src, bytes, completion, mailbox uint64, event uint32) []byte {
	le := binary.LittleEndian
	var b []byte
	dw := func(v ...uint32) {
		for _, x := range v {
			b = le.AppendUint32(b, x)
		}
	}
	lo, hi := func(a uint64) uint32 { return uint32(a) }, func(a uint64) uint32 { return uint32(a >> 32) }
	for _, d := range deps {
		// POLL_REGMEM: op 8, func 3 (equal) in 30:28, mem_poll in bit 31;
		// addr; reference 0; mask; interval 0x10, retry 0xFFF (forever).
		dw(1<<31|3<<28|8, lo(d), hi(d), 0, 0xFFFFFFFF, 0xFFF<<16|0x10)
	}
	// COPY_LINEAR: op 1; count = bytes − 1; parameter dword; src; dst.
	dw(1, uint32(bytes-1), 0, lo(src), hi(src), lo(dst), hi(dst))
	// ATOMIC: op 10, atomic op ADD64 (47) in 31:25; addr; src_data −1;
	// cmp_data 0; loop interval 0.
	dw(47<<25|10, lo(completion), hi(completion), 0xFFFFFFFF, 0xFFFFFFFF, 0, 0, 0)
	// FENCE: op 5; addr; data (the event id).
	dw(5, lo(mailbox), hi(mailbox), event)
	// TRAP: op 6; int_context (the event id).
	dw(6, event)
	return b
}

// A foreign producer (ROCr's blit kernel path, a test harness replaying a
// captured stream) drives a queue without the issuer protocol: it maps the
// stream's addresses with AllocAt, makes the queue with its own ring size,
// writes the raw bytes at the write pointer, stores the write pointer and
// rings the doorbell. The engine decodes and runs the packets; memory shows
// the result.
func ExampleNode_NewQueue_rocrStream() {
	s := sim.New(sim.Config{Seed: 1})
	n, _ := engine.NewNode(s, engine.Config{GPUs: 2})
	mem := n.Memory()
	// The addresses the stream was built for, mapped as they are.
	const (
		signals = engine.DefaultBase + 0x10_0000                        // GPU 0: signals and mailbox
		src     = engine.DefaultBase + 0x20_0000                        // GPU 0: source buffer
		dst     = engine.DefaultBase + engine.DefaultStride + 0x20_0000 // GPU 1: destination
	)
	deps := [2]uint64{signals, signals + 0x40}
	completion, mailbox := uint64(signals+0x80), uint64(signals+0xC0)
	for _, r := range []struct {
		addr uint64
		name string
	}{{signals, "signals"}, {src, "src"}, {dst, "dst"}} {
		if _, err := mem.AllocAt(r.addr, 4096, r.name); err != nil {
			fmt.Println(err)
			return
		}
	}
	payload := bytes.Repeat([]byte("rocr"), 256) // 1 KiB
	_ = mem.Write(src, payload)
	_ = mem.Store64(deps[0], 1) // both dependencies still pending
	_ = mem.Store64(deps[1], 1)
	_ = mem.Store64(completion, 1) // ROCr starts a completion signal at 1

	q, err := n.NewQueue(0, 1, 0, ring.Options{Size: 4096}) // ROCr sizes its own rings
	if err != nil {
		fmt.Println(err)
		return
	}
	stream := rocrStream(deps, dst, src, uint64(len(payload)), completion, mailbox, 42)
	s.Spawn("rocr", func(a *sim.Actor) {
		wptr := q.Ring().Wptr()
		q.Ring().Write(wptr, stream)
		end := wptr + uint64(len(stream))
		q.StoreWptr(end)
		q.RingDoorbell(end)
	})
	var done sim.Time
	s.Spawn("host", func(a *sim.Actor) { // hsa_signal_wait on the completion signal
		mem.Await(a, completion, 8, func() bool { v, _ := mem.Load64(completion); return v == 0 },
			func() string { return "completion signal == 0" })
		done = a.Now()
	})
	s.Spawn("dependencies", func(a *sim.Actor) { // two other streams finish later
		a.Sleep(5 * sim.Microsecond)
		_ = mem.Store64(deps[0], 0)
		a.Sleep(5 * sim.Microsecond)
		_ = mem.Store64(deps[1], 0)
	})
	if err := s.Run(); err != nil {
		fmt.Println(err)
		return
	}

	got := make([]byte, len(payload))
	_ = mem.Read(dst, got)
	left, _ := mem.Load64(completion)
	ev, _ := mem.Load32(mailbox)
	fmt.Println("stream bytes:", len(stream))
	fmt.Println("copied:", bytes.Equal(got, payload))
	fmt.Println("completion signal:", left, "after the dependencies:", done > 10*sim.Microsecond)
	fmt.Println("mailbox:", ev)
	for _, f := range n.Faults() {
		fmt.Printf("event: %s ctx=%d at ring offset %#x\n", f.Kind, f.Context, f.Offset)
	}
	r := q.Report()
	fmt.Printf("rptr=%#x wptr=%#x doorbell=%#x\n", r.Rptr, r.Wptr, r.Doorbell)
	// Output:
	// stream bytes: 132
	// copied: true
	// completion signal: 0 after the dependencies: true
	// mailbox: 42
	// event: TRAP ctx=42 at ring offset 0x7c
	// rptr=0x84 wptr=0x84 doorbell=0x84
}
