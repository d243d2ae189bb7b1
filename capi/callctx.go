//go:build cgo

package main

/*
#include "lane.h"
*/
import "C"

import (
	"encoding/binary"
	"path/filepath"
	"strings"
	"unsafe"

	"github.com/emud-dev/emud/cxx"
	"github.com/emud-dev/emud/kernel"
)

// ctxSites interns the sites of native calls made with a call context
// (EMUD_CALL_CONTEXT), by the lane's chain of return addresses and its
// call's file and line: a chain is mapped to file:line frames once.
var ctxSites = map[string]*kernel.NativeSite{} // touched only by the running actor

// ctxSite is the site of the lane's pending call with its call context:
// the frames of the lane's own code from the kernel function to the
// function that made the call, each at the line of its call (DWARF line
// tables), with emud's own frames (hip_runtime.h, amdgcn.h, lane.c) left
// out. nil when the lane's code was built without EMUD_CALL_CONTEXT, or
// the program has no line tables: the call's site is then its one frame.
func (ln *lane) ctxSite() *kernel.NativeSite {
	l := ln.l
	n := int(l.nctx)
	if n <= 0 || n > C.EMUD_CTX_FRAMES || l.file == nil {
		return nil
	}
	// The key is the chain's bytes as the lane wrote them, then the call's
	// file pointer and line: one copy, where appending each address a
	// byte at a time was a twentieth of a 100-round put.cpp's CPU.
	var kb [C.EMUD_CTX_FRAMES*8 + 16]byte
	key := append(kb[:0], unsafe.Slice((*byte)(unsafe.Pointer(&l.ctx_pc[0])), n*8)...)
	key = binary.LittleEndian.AppendUint64(key, uint64(uintptr(unsafe.Pointer(l.file))))
	key = binary.LittleEndian.AppendUint64(key, uint64(l.line))
	if s, ok := ctxSites[string(key)]; ok {
		return s
	}
	pcs := unsafe.Slice((*uint64)(unsafe.Pointer(&l.ctx_pc[0])), n)
	s := ctxResolve(pcs, C.GoString(l.file), int(l.line))
	ctxSites[string(key)] = s
	return s
}

// ctxResolve maps a chain of return addresses (innermost first) to the
// frames of the lane's own code, outermost first; the innermost is the
// call's own file and line (its __builtin_FILE/LINE), which names the
// statement as the line table may not for a call over several lines.
func ctxResolve(pcs []uint64, file string, line int) *kernel.NativeSite {
	var frames []kernel.NativeFrame
	for i := len(pcs) - 1; i >= 0; i-- {
		f, ln := pcFileLine(pcs[i])
		if f == "" || emudOwnFile(f) {
			continue
		}
		frames = append(frames, kernel.NativeFrame{File: f, Line: ln, PC: pcs[i]})
	}
	if len(frames) == 0 {
		return nil
	}
	in := &frames[len(frames)-1]
	if filepath.Base(in.File) != filepath.Base(file) {
		return nil // the chain does not end where the call is: no context
	}
	in.Line = line
	for i := range frames {
		frames[i].Loops = cxx.LoopsAt(frames[i].File, frames[i].Line)
	}
	return kernel.NewNativeContext(frames)
}

// emudOwnFiles are emud's files a lane's frames pass through: its HIP
// layer around the call, the lane entry and the launch below the kernel.
var emudOwnFiles = []string{"hip/hip_runtime.h", "emud/amdgcn.h", "emud/abi.h", "include/cooperative_groups.h",
	"include/cuda_runtime.h", "capi/lane.c", "capi/procs.c"}

func emudOwnFile(f string) bool {
	f = filepath.ToSlash(f)
	for _, s := range emudOwnFiles {
		if strings.HasSuffix(f, "/"+s) || f == s {
			return true
		}
	}
	return filepath.Base(f) == "lane.c" || filepath.Base(f) == "procs.c"
}
