// Package blocksum is a 64-bit hash of a block of bytes for receive
// checks: a large received block is read once and its sum compared with
// the expected block's, instead of read beside a copy of what it should
// hold (half the bytes read). The emulated memory (package lsa) can also
// sum a range as copies land in it (lsa.Space.TrackSum), while the bytes
// are still in cache, so that the check reads nothing.
//
// Eight lanes each fold every eighth 64-bit word w of the block into
// their state as s = rotl((s ^ w) × m, 31) (m odd, the same for all; the
// lanes start apart): for a fixed state the step is a bijection of w and
// for a fixed w one of s, so a change confined to one lane's words (any
// single wrong byte, any wrong word) always changes that lane's state,
// and the finish (splitmix64's finaliser over the length and the lanes,
// each step a bijection of the lane it takes in) always changes the sum.
// Wrong data spread over several lanes goes unnoticed only if its effects
// cancel, which for data not built to do so happens about once in 2^64.
// The lanes' chains are independent, so the loop runs at about the speed
// of a compare of two buffers while reading one. Deterministic: no
// per-process seed, so a sum may be kept and compared across runs.
//
// It imports only the standard library and stands on the ground floor
// (internal/layering), so that package lsa can use it.
package blocksum
