package ring_test

import (
	"encoding/binary"
	"fmt"

	"github.com/emud-dev/emud/ring"
)

func ExampleCopy() {
	p := ring.Copy(0x200000000, 0x100000040, 64)
	b := p.AppendTo(nil)
	for i := 0; i < len(b); i += 4 {
		fmt.Printf("DW%d %08x\n", i/4, binary.LittleEndian.Uint32(b[i:]))
	}
	fmt.Println(p.String())
	// Output:
	// DW0 00000001
	// DW1 0000003f
	// DW2 00000000
	// DW3 00000040
	// DW4 00000001
	// DW5 00000000
	// DW6 00000002
	// COPY_LINEAR 64 B src=0x100000040 dst=0x200000000
}

func ExampleRing() {
	r, err := ring.New(ring.Options{Start: 0x1000})
	if err != nil {
		panic(err)
	}
	// One put: a COPY unit followed by its signal ATOMIC unit.
	base, _ := r.Reserve(2 * ring.Unit)
	for !r.Fits(base, 2*ring.Unit) {
		// a real issuer would wait for the engine to advance rptr
	}
	cp := ring.Copy(0x7f0000000000, 0x7e0000000000, 4096)
	sig := ring.AtomicAdd64(0x7f0000100008, 1)
	_ = r.WriteUnit(base, &cp)
	_ = r.WriteUnit(base+ring.Unit, &sig)
	for !r.CanSubmit(base) {
		// wait for earlier issuers to ring
	}
	_ = r.Submit(base, base+2*ring.Unit)
	fmt.Printf("doorbell=0x%x committed=0x%x unrung=%d\n", r.Doorbell(), r.CommittedWptr(), r.Unrung())

	// Engine side: execute up to the doorbell, writing rptr back per packet.
	var p ring.Packet
	for ptr := r.Rptr(); ptr < r.Doorbell(); {
		n, err := r.DecodeAt(&p, ptr, r.Doorbell()-ptr)
		if err != nil {
			panic(err)
		}
		if p.Kind != ring.KindNop {
			fmt.Printf("0x%x: %s\n", ptr, p.String())
		}
		ptr += uint64(n)
		_ = r.SetRptr(ptr)
	}
	fmt.Printf("rptr=0x%x\n", r.Rptr())
	// Output:
	// doorbell=0x1040 committed=0x1040 unrung=0
	// 0x1000: COPY_LINEAR 4096 B src=0x7e0000000000 dst=0x7f0000000000
	// 0x1020: ATOMIC ADD64 [0x7f0000100008] += 1
	// rptr=0x1040
}

func ExampleDecode() {
	// ROCr's standard poll: wait until mem32 == 1, retry forever.
	b := []byte{
		0x08, 0x00, 0x00, 0xb0, // header 0xB0000008
		0x40, 0x00, 0x00, 0x00, 0x00, 0x7f, 0x00, 0x00, // address
		0x01, 0x00, 0x00, 0x00, // reference
		0xff, 0xff, 0xff, 0xff, // mask
		0x04, 0x00, 0xff, 0x0f, // interval 4, retry 0xfff
	}
	var p ring.Packet
	n, err := ring.Decode(&p, b, ring.GFX94x)
	fmt.Println(n, err)
	fmt.Println(p.String())

	_, err = ring.Decode(&p, []byte{0x04, 0, 0, 0}, ring.GFX94x)
	fmt.Println(err)
	// Output:
	// 24 <nil>
	// POLL_REGMEM mem[0x7f0000000040] & 0xffffffff == 1 interval=4 retry=forever
	// ring offset 0x0: INDIRECT (op 4): not emulated
}
