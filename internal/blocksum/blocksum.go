package blocksum

import (
	"encoding/binary"
	"math/bits"
)

// Of is the sum of b: Summer fed b in one Write.
func Of(b []byte) uint64 {
	var h Summer
	h.Write(b)
	return h.Sum()
}

// The lanes' starting states and their one multiplier (odd): constants of
// the golden-ratio and xxHash families. One multiplier stays in a
// register; one a lane would be reloaded every word (the loop is short of
// registers).
const (
	sumM0  = 0x9e3779b97f4a7c15
	sumM1  = 0xc2b2ae3d27d4eb4f
	sumM2  = 0x165667b19e3779f9
	sumM3  = 0xd6e8feb86659fd93
	sumMul = sumM1
)

// Summer is Of a piece at a time: every Write but the last must be a
// multiple of 64 bytes long (Whole says whether another may follow). Its
// zero value is ready.
type Summer struct {
	s    [8]uint64
	n    uint64 // bytes written
	tail bool   // a write of a length not a multiple of 64 came: no more
	init bool
}

func (h *Summer) Write(b []byte) {
	if h.tail {
		panic("blocksum: Summer written after a write of a length not a multiple of 64") // a bug in the caller
	}
	if !h.init {
		h.s = [8]uint64{sumM0, sumM1, sumM2, sumM3, sumM0 ^ sumM1, sumM1 ^ sumM2, sumM2 ^ sumM3, sumM3 ^ sumM0}
		h.init = true
	}
	h.n += uint64(len(b))
	// The lanes in locals: the compiler keeps them in registers.
	s0, s1, s2, s3, s4, s5, s6, s7 := h.s[0], h.s[1], h.s[2], h.s[3], h.s[4], h.s[5], h.s[6], h.s[7]
	for len(b) >= 64 {
		c := b[:64:64]
		s0 = bits.RotateLeft64((s0^binary.LittleEndian.Uint64(c[0:]))*sumMul, 31)
		s1 = bits.RotateLeft64((s1^binary.LittleEndian.Uint64(c[8:]))*sumMul, 31)
		s2 = bits.RotateLeft64((s2^binary.LittleEndian.Uint64(c[16:]))*sumMul, 31)
		s3 = bits.RotateLeft64((s3^binary.LittleEndian.Uint64(c[24:]))*sumMul, 31)
		s4 = bits.RotateLeft64((s4^binary.LittleEndian.Uint64(c[32:]))*sumMul, 31)
		s5 = bits.RotateLeft64((s5^binary.LittleEndian.Uint64(c[40:]))*sumMul, 31)
		s6 = bits.RotateLeft64((s6^binary.LittleEndian.Uint64(c[48:]))*sumMul, 31)
		s7 = bits.RotateLeft64((s7^binary.LittleEndian.Uint64(c[56:]))*sumMul, 31)
		b = b[64:]
	}
	h.s = [8]uint64{s0, s1, s2, s3, s4, s5, s6, s7}
	if len(b) == 0 {
		return
	}
	// The last words go to lanes 0.. in order, a last partial word padded
	// with zeros (the length, in the finish, tells the padding apart).
	h.tail = true
	for l := 0; len(b) > 0; l++ {
		var w [8]byte
		k := copy(w[:], b)
		b = b[k:]
		h.s[l] = bits.RotateLeft64((h.s[l]^binary.LittleEndian.Uint64(w[:]))*sumMul, 31)
	}
}

// Whole reports whether every Write so far was a multiple of 64 bytes
// long, so that another may follow.
func (h *Summer) Whole() bool { return !h.tail }

// Sum is the sum of the bytes written so far.
func (h *Summer) Sum() uint64 {
	if !h.init {
		h.Write(nil)
	}
	v := mix64(h.n)
	for _, s := range h.s {
		v = mix64(v ^ s)
	}
	return v
}

// mix64 is the splitmix64 finaliser (scenario's pattern uses the same).
func mix64(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
