package scenario

import (
	"encoding/binary"
	"math/bits"
)

// blockSum is a 64-bit hash of b for the receive check (patternEqual): a
// large received block is read once and its sum compared with the
// expected block's, kept from the first run, instead of read beside a
// cached copy of what it should hold (half the bytes read).
//
// Eight lanes each fold every eighth 64-bit word w of b into their state
// as s = rotl((s ^ w) × m, 31) (m odd, the same for all; the lanes
// start apart): for a fixed state the step is a
// bijection of w and for a fixed w one of s, so a change confined to one
// lane's words (any single wrong byte, any wrong word) always changes
// that lane's state, and the finish (mix64 over the length and the
// lanes, each step a bijection of the lane it takes in) always changes
// the sum. Wrong data spread over several lanes goes unnoticed only if
// its effects cancel, which for data not built to do so happens about
// once in 2^64. The lanes' chains are independent, so the loop runs at
// about the speed of a compare of two buffers on this machine's cores
// while reading one. Deterministic: no per-process seed.
func blockSum(b []byte) uint64 {
	var h blockSummer
	h.write(b)
	return h.sum()
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

// blockSummer is blockSum a piece at a time: every write but the last
// must be a multiple of 64 bytes long.
type blockSummer struct {
	s    [8]uint64
	n    uint64 // bytes written
	tail bool   // a write of a length not a multiple of 64 came: no more
	init bool
}

func (h *blockSummer) write(b []byte) {
	if h.tail {
		panic("scenario: blockSummer written after a write of a length not a multiple of 64") // a bug in this package
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

func (h *blockSummer) sum() uint64 {
	if !h.init {
		h.write(nil)
	}
	v := mix64(h.n)
	for _, s := range h.s {
		v = mix64(v ^ s)
	}
	return v
}
