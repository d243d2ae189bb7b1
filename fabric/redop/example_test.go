package redop_test

import (
	"encoding/binary"
	"fmt"

	"github.com/emud-dev/emud/fabric/redop"
)

func ExampleCheck() {
	fmt.Println(redop.Check(redop.Sum, redop.F32, false))
	fmt.Println(redop.Check(redop.Sum, redop.S32, false))
	fmt.Println(redop.Check(redop.Sum, redop.F64, false))
	fmt.Println(redop.Check(redop.Sum, redop.F64, true))
	// Output:
	// <nil>
	// redop: ncclCftOpSum on int32_t: unsupported reduction: NCCL CFT has no trait for this pair (cft-semantics §8)
	// <nil>
	// redop: pullRed with ncclCftOpSum on double: unsupported reduction: f64 add has no pullRed form (cft-semantics §8)
}

func ExampleApply() {
	// Two half values: 1.0 + 2^-11 is a tie and rounds to even (1.0);
	// 65504 + 16 rounds to +Inf.
	dst := []byte{0x00, 0x3C, 0xFF, 0x7B}
	src := []byte{0x00, 0x10, 0x00, 0x4C}
	if err := redop.Apply(redop.Sum, redop.F16, dst, src); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%#04x %#04x\n", binary.LittleEndian.Uint16(dst), binary.LittleEndian.Uint16(dst[2:]))
	// Output:
	// 0x3c00 0x7c00
}

func ExampleApplyMasked() {
	dst := make([]byte, 8) // two uint32_t, both 0
	src := []byte{5, 0, 0, 0, 7, 0, 0, 0}
	mask := []byte{0, 0, 0, 0, 1, 1, 1, 1} // second element only
	err := redop.ApplyMasked(redop.Or, redop.U32, dst, src, mask)
	fmt.Println(binary.LittleEndian.Uint32(dst), binary.LittleEndian.Uint32(dst[4:]), err)

	// A mask that covers half an element is a misuse; nothing is written.
	err = redop.ApplyMasked(redop.Or, redop.U32, dst, src, []byte{1, 1, 0, 0, 0, 0, 0, 0})
	fmt.Println(err)
	// Output:
	// 0 7 <nil>
	// redop: uint32_t element 0 (bytes 0..3) has 2 of 4 bytes enabled: partial element in mask
}

func ExampleReduce() {
	// pullRed over three members' int32_t copies.
	le := func(v int32) []byte { return binary.LittleEndian.AppendUint32(nil, uint32(v)) }
	out := make([]byte, 4)
	if err := redop.Reduce(redop.Min, redop.S32, out, le(3), le(-8), le(5)); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(int32(binary.LittleEndian.Uint32(out)))
	// Output:
	// -8
}

func ExampleOp_String() {
	fmt.Println(redop.Sum, redop.Xor)
	// Output:
	// ncclCftOpSum ncclCftOpXor
}

func ExampleType_Size() {
	for _, t := range []redop.Type{redop.BF16, redop.F32, redop.S64} {
		fmt.Println(t, t.Size())
	}
	// Output:
	// __nv_bfloat16 2
	// float 4
	// int64_t 8
}

func ExampleAllOps() {
	// The op × type table of spec §8, as pullRed sees it.
	for _, op := range redop.AllOps() {
		fmt.Printf("%-13s", op)
		for _, t := range redop.AllTypes() {
			if redop.Check(op, t, true) == nil {
				fmt.Printf(" %s", t)
			}
		}
		fmt.Println()
	}
	// Output:
	// ncclCftOpSum  uint32_t uint64_t half __nv_bfloat16 float
	// ncclCftOpMin  uint32_t int32_t uint64_t int64_t half __nv_bfloat16
	// ncclCftOpMax  uint32_t int32_t uint64_t int64_t half __nv_bfloat16
	// ncclCftOpAnd  uint32_t int32_t uint64_t int64_t
	// ncclCftOpOr   uint32_t int32_t uint64_t int64_t
	// ncclCftOpXor  uint32_t int32_t uint64_t int64_t
}
