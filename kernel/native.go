package kernel

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
)

// NativeSite is a convergence point of lane code that is not Go (a C++
// kernel run by package capi): its program position cannot be read from
// the Go stack, so the caller names it: the function, file and line of the
// device call (from __builtin_FUNCTION/FILE/LINE at the call) and the
// line spans of the loops of that function that enclose the line,
// outermost first. Lanes at one NativeSite form one group; groups are
// ordered as for Go lanes (package doc), with one frame: the lower
// iteration of a shared loop first, then the lower line. NativeSites are
// interned: one per (function, file, line).
type NativeSite struct{ s *site }

var nativeSites struct {
	sync.Mutex
	m map[nativeKey]*NativeSite
}

type nativeKey struct {
	fn, file string
	line     int
}

// NewNativeSite returns the interned site of (fn, file, line); loops are
// read on first sight of the point and kept.
func NewNativeSite(fn, file string, line int, loops [][2]int) *NativeSite {
	return internNative(nativeKey{fn, file, line}, func() *site {
		f := frame{fn: fn, file: file, line: line}
		for _, l := range loops {
			f.loops = append(f.loops, nativeLoop(file, l))
		}
		return &site{frames: []frame{f}, nloops: len(f.loops), base: []int{0},
			show: fmt.Sprintf("%s:%d", filepath.Base(file), line)}
	})
}

// internNative returns the site interned under k, building it with build
// (under the lock, so build may intern loops) on first sight.
func internNative(k nativeKey, build func() *site) *NativeSite {
	nativeSites.Lock()
	defer nativeSites.Unlock()
	if ns := nativeSites.m[k]; ns != nil {
		return ns
	}
	if nativeSites.m == nil {
		nativeSites.m = map[nativeKey]*NativeSite{}
	}
	ns := &NativeSite{build()}
	nativeSites.m[k] = ns
	return ns
}

// nativeLoop interns a loop span of a native file, so two sites inside
// one loop share its *loop (loops are compared by pointer).
func nativeLoop(file string, l [2]int) *loop {
	k := nativeKey{"loop", file, l[0]<<20 | l[1]}
	if ns := nativeSites.m[k]; ns != nil {
		return ns.s.frames[0].loops[0]
	}
	lp := &loop{start: l[0], end: l[1]}
	nativeSites.m[k] = &NativeSite{&site{frames: []frame{{loops: []*loop{lp}}}}}
	return lp
}

// String is the site's file:line.
func (ns *NativeSite) String() string { return ns.s.show }

// AtNative makes the lane's next convergence point (its next Converge,
// ConvergeIf, Ballot, barrier, or a device call built on them) ns rather
// than the Go caller's position. Native lane drivers set it before every
// device call they make on the lane's behalf.
func (t *Thread) AtNative(ns *NativeSite) { t.native = ns }

// NativeFrame is one frame of a native lane's call context: the function
// (may be empty when the caller cannot name it; frames are then told apart
// by file and line), its file and line, and the line spans of the loops of
// that function enclosing the line, outermost first.
type NativeFrame struct {
	Fn, File string
	Line     int
	Loops    [][2]int
	// PC is the frame's return address: two calls on one line are two
	// points, the lower address first (0: the line is one point).
	PC uint64
}

// NewNativeContext returns the interned site of a native device call
// together with its call context: frames, outermost (the kernel function)
// first, innermost (the function that made the call) last. Lanes at one
// context form one group, and groups are ordered frame by frame as Go
// lanes are (package doc), so a helper reached from two places of its
// caller is two points, ordered by the caller's lines and loop iterations.
func NewNativeContext(frames []NativeFrame) *NativeSite {
	if len(frames) == 0 {
		return nil
	}
	var kb strings.Builder
	for _, f := range frames {
		fmt.Fprintf(&kb, "%s\x00%s\x00%d\x00%x\x00", f.Fn, f.File, f.Line, f.PC)
	}
	return internNative(nativeKey{fn: "ctx", file: kb.String()}, func() *site {
		s := &site{frames: make([]frame, len(frames)), base: make([]int, len(frames))}
		for i, f := range frames {
			fr := frame{fn: f.Fn, file: f.File, line: f.Line, pc: f.PC}
			for _, l := range f.Loops {
				fr.loops = append(fr.loops, nativeLoop(f.File, l))
			}
			s.frames[i] = fr
			s.base[i] = s.nloops
			s.nloops += len(fr.loops)
		}
		in := frames[len(frames)-1]
		s.show = fmt.Sprintf("%s:%d", filepath.Base(in.File), in.Line)
		return s
	})
}
