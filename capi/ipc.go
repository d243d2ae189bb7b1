//go:build cgo

package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/emud-dev/emud/sim"
)

// Interprocess memory handles (hipIpcGetMemHandle, hipIpcOpenMemHandle,
// hipIpcCloseMemHandle and CUDA's twins): the way ranks that are
// processes share device buffers without MORI or NCCL (a custom
// all-reduce's peer buffers, exchanged by MPI_Allgather or a file).
//
// Every rank of an emulated node, thread or process, maps device memory
// at the same addresses (procs.c), so a handle needs no mapping: it
// carries the allocation's base, size and serial, the offset of the
// pointer it was made from, the GPU and the process that made it, and a
// check word. Opening it checks all of that against the allocations still
// live and returns the address: HIP's base plus offset, CUDA's base (a
// CUDA handle names its whole allocation). What a handle is sent through
// (MPI, a file, a shared page) orders the exporter's writes before the
// importer's reads for the race detector, if anything does: open and
// close are no synchronisation, as on a GPU.
//
// Partial: a pointer closed, or opened from a handle whose allocation its
// exporter freed later, still reaches the memory (a GPU's mapping would
// be gone: a fault); a handle may be opened in the process that made it
// (CUDA documents handles as opened by other processes).

// ipcMagic starts every handle emud makes ("EMUDIPC1", little endian).
const ipcMagic = 0x3143504944554d45

// ipcHandle is a handle's eight words, as hipIpcMemHandle_t's 64 bytes
// hold them.
type ipcHandle struct {
	magic, pid, base, size, offset, serial, gpu, check uint64
}

func (hd ipcHandle) words() [8]uint64 {
	return [8]uint64{hd.magic, hd.pid, hd.base, hd.size, hd.offset, hd.serial, hd.gpu, hd.check}
}

func ipcHandleOf(w []uint64) ipcHandle {
	return ipcHandle{w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]}
}

// sum is the handle's check word: a mix of the other seven, so that a
// handle's bytes changed on the way (a short copy, a wrong slot of an
// all-gather) are not taken for another allocation's.
func (hd ipcHandle) sum() uint64 {
	x := uint64(0x9e3779b97f4a7c15)
	w := hd.words()
	for _, w := range w[:7] {
		x ^= w
		x *= 0xbf58476d1ce4e5b9
		x ^= x >> 31
	}
	return x
}

// ipcOpened counts, per process and address, the opens not yet closed.
type ipcKey struct {
	pid  int
	addr uint64
}

var ipcOpened = map[ipcKey]int{}

// hostPid is the process of host thread h: a forked or apart rank's
// (its proxy's record), else this one.
func hostPid(h *host) int {
	if pid, ok := procs.pids[h.id]; ok {
		return pid
	}
	return os.Getpid()
}

// ipcCall is EMUD_H_IPC: a[0] 1 get (a[1] pointer -> a[2..9] handle),
// 2 open (a[1..8] handle, a[9] flags, a[10] 1 for CUDA's base -> a[11]
// pointer), 3 close (a[1] pointer).
func ipcCall(h *host, act *sim.Actor, a []uint64, bad func(string, int, error) int) int {
	switch a[0] {
	case 1:
		hd, code, err := ipcGet(h, a[1])
		if err != nil {
			return bad("hipIpcGetMemHandle", code, err)
		}
		w := hd.words()
		copy(a[2:10], w[:])
	case 2:
		p, code, err := ipcOpen(h, ipcHandleOf(a[1:9]), a[9], a[10] != 0)
		if err != nil {
			return bad("hipIpcOpenMemHandle", code, err)
		}
		a[11] = p
	case 3:
		// HIP finishes the null stream first: what the importer queued
		// there on the memory ends before its mapping does.
		st, err := streamOf(h, 0)
		if err == nil {
			err = st.wait(act)
		}
		if err != nil {
			return bad("hipIpcCloseMemHandle", hipErrorLaunchFailure, err)
		}
		k := ipcKey{hostPid(h), a[1]}
		if ipcOpened[k] == 0 {
			return bad("hipIpcCloseMemHandle", hipErrorInvalidHandle, fmt.Errorf("%#x was not returned by hipIpcOpenMemHandle in this process (or is closed as often as it was opened)", a[1]))
		}
		if ipcOpened[k]--; ipcOpened[k] == 0 {
			delete(ipcOpened, k)
		}
	default:
		return bad("emud IPC call", hipErrorNotSupported, fmt.Errorf("unknown IPC call %d (headers and library out of step?)", a[0]))
	}
	return hipSuccess
}

// ipcGet makes the handle of the allocation holding p.
func ipcGet(h *host, p uint64) (ipcHandle, int, error) {
	g := rt.mem.GPUOf(p)
	if g < 0 {
		return ipcHandle{}, hipErrorInvalidDevicePointer, fmt.Errorf("%#x is not device memory (a handle names a hipMalloc or ccoMemAlloc allocation)", p)
	}
	r, err := rt.mem.Region("hipIpcGetMemHandle", p, 1)
	if err != nil {
		return ipcHandle{}, hipErrorInvalidDevicePointer, err
	}
	serial := uint64(0)
	if strings.HasPrefix(r.Name, "hipMalloc") {
		b, live := hipLive[r.Base]
		if !live {
			return ipcHandle{}, hipErrorInvalidDevicePointer, fmt.Errorf("%#x is in a hipMalloc block that was freed", p)
		}
		serial = b.serial
	}
	hd := ipcHandle{magic: ipcMagic, pid: uint64(hostPid(h)), base: r.Base, size: r.Size, offset: p - r.Base, serial: serial, gpu: uint64(g)}
	hd.check = hd.sum()
	return hd, hipSuccess, nil
}

// ipcOpen checks hd and returns the address it opens to.
func ipcOpen(h *host, hd ipcHandle, flags uint64, baseOnly bool) (uint64, int, error) {
	if flags != 1 {
		return 0, hipErrorInvalidValue, fmt.Errorf("flags %#x: the flags must be hipIpcMemLazyEnablePeerAccess (1)", flags)
	}
	if hd.magic != ipcMagic || hd.check != hd.sum() {
		return 0, hipErrorInvalidHandle, fmt.Errorf("the handle was not made by hipIpcGetMemHandle, or its bytes changed after (its first word %#x)", hd.magic)
	}
	if !ipcKnownPid(int(hd.pid)) {
		return 0, hipErrorInvalidHandle, fmt.Errorf("the handle was made by process %d, which is not a rank of this emulated node", hd.pid)
	}
	r, err := rt.mem.Region("hipIpcOpenMemHandle", hd.base, 1)
	stale := err != nil || r.Base != hd.base || r.Size != hd.size || rt.mem.GPUOf(hd.base) != int(hd.gpu)
	if !stale && strings.HasPrefix(r.Name, "hipMalloc") {
		b, live := hipLive[hd.base]
		stale = !live || b.serial != hd.serial
	}
	if stale {
		return 0, hipErrorInvalidHandle, fmt.Errorf("the allocation the handle names (%d B at %#x on GPU %d, made by process %d) was freed since the handle was made", hd.size, hd.base, hd.gpu, hd.pid)
	}
	p := hd.base + hd.offset
	if baseOnly {
		p = hd.base
	}
	ipcOpened[ipcKey{hostPid(h), p}]++
	return p, hipSuccess, nil
}

// ipcKnownPid reports whether pid is this process or one of its ranks'.
func ipcKnownPid(pid int) bool {
	if pid == os.Getpid() {
		return true
	}
	for _, p := range procs.pids {
		if p == pid {
			return true
		}
	}
	return false
}
