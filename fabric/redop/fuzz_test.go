package redop

import (
	"bytes"
	"testing"
)

// FuzzApply feeds arbitrary op/type values and buffers to every entry point.
// None may panic; a rejected call must leave its destination untouched, and
// an accepted one must have had valid arguments.
func FuzzApply(f *testing.F) {
	f.Add(uint8(Sum), uint8(F16), []byte{0x00, 0x3C, 0xFF, 0x7B}, []byte{0x00, 0x3C, 0x00, 0x4C}, []byte{1, 1, 0, 0})
	f.Add(uint8(Min), uint8(BF16), []byte{0xC0, 0x7F}, []byte{0x80, 0x3F}, []byte{1, 0})
	f.Add(uint8(Xor), uint8(S64), bytes.Repeat([]byte{0xAA}, 16), bytes.Repeat([]byte{0x55}, 16), bytes.Repeat([]byte{1}, 16))
	f.Add(uint8(Sum), uint8(S32), []byte{1, 2, 3, 4}, []byte{1, 2, 3, 4}, []byte{1, 1, 1, 1})
	f.Add(uint8(9), uint8(200), []byte{1}, []byte{}, []byte{})
	f.Add(uint8(Sum), uint8(F64), make([]byte, 8), make([]byte, 7), make([]byte, 8))
	f.Fuzz(func(t *testing.T, op, typ uint8, dst, src, mask []byte) {
		o, ty := Op(op), Type(typ)
		checkErr := Check(o, ty, false)

		d := bytes.Clone(dst)
		err := Apply(o, ty, d, src)
		if err != nil {
			if !bytes.Equal(d, dst) {
				t.Fatalf("Apply failed (%v) but changed dst", err)
			}
		} else if checkErr != nil || len(dst) != len(src) || len(dst)%ty.Size() != 0 {
			t.Fatalf("Apply accepted bad input: op=%v type=%v len %d/%d", o, ty, len(dst), len(src))
		}

		d = bytes.Clone(dst)
		if err := ApplyMasked(o, ty, d, src, mask); err != nil && !bytes.Equal(d, dst) {
			t.Fatalf("ApplyMasked failed (%v) but changed dst", err)
		}

		out := bytes.Clone(dst)
		if err := Reduce(o, ty, out, src, dst); err != nil && !bytes.Equal(out, dst) {
			t.Fatalf("Reduce failed (%v) but changed out", err)
		}
		_ = o.String() + ty.String()
	})
}
