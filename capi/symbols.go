//go:build cgo

package main

import (
	"fmt"

	"github.com/emud-dev/emud/sim"
)

// Symbols (hipMemcpyToSymbol, hipMemcpyFromSymbol and their async forms):
// a __device__ or __constant__ variable is one object of the program,
// which every lane of every GPU reads at its host address, so the header
// copies in the calling process itself (a forked rank's own copy) and
// this call does what must come first: the device's (or, async, the
// stream's) work ends, and a copy to a symbol is checked against the
// other GPUs' of the same process. Partial: the GPUs share the one copy,
// so a symbol that host threads of different GPUs fill with different
// bytes is refused, naming it and both GPUs, rather than each GPU
// silently reading the last; the same bytes pass (a table of constants
// every rank loads). The async forms wait for their stream before they
// return (the host goes on later than on a GPU).

// symbolKey is a copy's target: the process (a forked rank's statics
// are its own) and the address.
type symbolKey struct {
	pid  int
	addr uint64
}

// symbolFill is the last copy to a symbol range: its GPU, size and hash.
type symbolFill struct {
	dev  int
	n    uint64
	hash uint64
	site string
}

var symbolFills = map[symbolKey]symbolFill{}

// hipErrorInvalidMemcpyDirection is HIP's (and CUDA's) code for a copy
// kind that does not fit the call.
const hipErrorInvalidMemcpyDirection = 21

// symbolCall is EMUD_H_SYMBOL: a[0] 1 to the symbol, 2 from it; a[1]
// the address, a[2] bytes, a[3] kind, a[4] stream, a[5] async, a[6] the
// bytes' FNV-1a (to).
func symbolCall(h *host, act *sim.Actor, a []uint64, file string, line int, bad func(string, int, error) int) int {
	to := a[0] == 1
	call := "hipMemcpyFromSymbol"
	if to {
		call = "hipMemcpyToSymbol"
	}
	if a[5] != 0 {
		call += "Async"
	}
	if a[0] != 1 && a[0] != 2 {
		return bad("emud symbol copy", hipErrorNotSupported, fmt.Errorf("unknown operation %d (headers and library out of step?)", a[0]))
	}
	// hipMemcpyHostToDevice, DeviceToHost, DeviceToDevice, Default.
	if k := a[3]; k > 4 || k == 0 || (to && k == 2) || (!to && k == 1) {
		return bad(call, hipErrorInvalidMemcpyDirection, fmt.Errorf("kind %d: a copy %s a symbol is hipMemcpy%s, hipMemcpyDeviceToDevice or hipMemcpyDefault", k,
			map[bool]string{true: "to", false: "from"}[to], map[bool]string{true: "HostToDevice", false: "DeviceToHost"}[to]))
	}
	st, err := streamOf(h, a[4])
	if err != nil {
		return bad(call, hipErrorInvalidHandle, err)
	}
	if a[5] != 0 {
		err = st.wait(act)
	} else {
		err = syncDevice(act, h.dev)
	}
	if err != nil {
		return bad(call, hipErrorLaunchFailure, err)
	}
	if !to || a[2] == 0 {
		return hipSuccess
	}
	k := symbolKey{hostPid(h), a[1]}
	site := fmt.Sprintf("%s:%d", file, line)
	if prev, ok := symbolFills[k]; ok && prev.dev != h.dev && (prev.n != a[2] || prev.hash != a[6]) {
		return bad(call, hipErrorInvalidValue, fmt.Errorf("the symbol at %#x was filled for GPU %d (%s) with other bytes: emud's GPUs share one copy of a __device__ or __constant__ variable (partial), so GPU %d's would replace GPU %d's", a[1], prev.dev, prev.site, h.dev, prev.dev))
	}
	symbolFills[k] = symbolFill{dev: h.dev, n: a[2], hash: a[6], site: site}
	return hipSuccess
}
