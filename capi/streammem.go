//go:build cgo

package main

import (
	"fmt"
	"path/filepath"
	"sync/atomic"

	"github.com/emud-dev/emud/race"
	"github.com/emud-dev/emud/sim"
)

// Stream memory operations (hipStreamWriteValue32/64,
// hipStreamWaitValue32/64): a word written, or waited for, in a stream's
// order. A write lands after the stream's earlier work, atomically, and
// wakes whatever waits on the word (a lane's poll, another stream's
// wait); a wait holds the stream's later work until its condition holds
// on the word, which a lane, an engine, another stream's write or a host
// thread's store makes true (a host's plain store is seen at the host's
// next HIP call, when its stores are announced). For the race detector a
// write is an atomic store that releases the word and a wait's end an
// atomic load that acquires it, as a lane's atomics are: work after a
// wait is ordered after what the writer did before its write. A wait
// whose condition never holds is a hang naming the stream, the word, its
// value and the condition.

// HIP's wait conditions (hipStreamWaitValueGte ... Nor).
const (
	waitGte = 0
	waitEq  = 1
	waitAnd = 2
	waitNor = 3
)

// streamMemCond reports whether the word's value v meets the wait's
// condition (HIP's definitions: the mask applies to the word, and for
// Nor to the value too).
func streamMemCond(v, value, mask uint64, flags uint64, width uint64) bool {
	m := v & mask
	switch flags {
	case waitGte:
		return m >= value
	case waitEq:
		return m == value
	case waitAnd:
		return m&value != 0
	default: // waitNor
		all := ^uint64(0)
		if width == 4 {
			all = 0xffffffff
		}
		return ^(m|value&mask)&all != 0
	}
}

var streamMemCondNames = [...]string{"≥", "==", "& (nonzero)", "nor (nonzero)"}

// loadWord reads the width-byte word at p atomically.
func loadWord(p, width uint64) uint64 {
	if width == 4 {
		return uint64(atomic.LoadUint32((*uint32)(ptr(p))))
	}
	return atomic.LoadUint64((*uint64)(ptr(p)))
}

// streamMemCall is EMUD_H_STREAM_MEMOP: a[0] 1 write, 2 wait; a[1]
// stream, a[2] pointer, a[3] value, a[4] width (4 or 8), a[5] flags,
// a[6] mask.
func streamMemCall(h *host, act *sim.Actor, a []uint64, file string, line int, bad func(string, int, error) int) int {
	write := a[0] == 1
	width, p, value, flags, mask := a[4], a[2], a[3], a[5], a[6]
	call := fmt.Sprintf("hipStreamWaitValue%d", 8*width)
	if write {
		call = fmt.Sprintf("hipStreamWriteValue%d", 8*width)
	}
	if (a[0] != 1 && a[0] != 2) || (width != 4 && width != 8) {
		return bad("emud stream memory operation", hipErrorNotSupported, fmt.Errorf("unknown operation %d of width %d (headers and library out of step?)", a[0], width))
	}
	st, err := streamOf(h, a[1])
	if err != nil {
		return bad(call, hipErrorInvalidHandle, err)
	}
	if p%width != 0 {
		return bad(call, hipErrorInvalidValue, fmt.Errorf("%#x is not aligned to its %d-byte word", p, width))
	}
	if err := rt.mem.Check(call, p, width); err != nil {
		return bad(call, hipErrorInvalidValue, fmt.Errorf("%w (the word must be device memory or hipHostMalloc's)", err))
	}
	if write && flags != 0 {
		return bad(call, hipErrorInvalidValue, fmt.Errorf("flags %#x: hipStreamWriteValue takes 0", flags))
	}
	if !write && flags > waitNor {
		return bad(call, hipErrorInvalidValue, fmt.Errorf("flags %#x: not hipStreamWaitValueGte, Eq, And or Nor", flags))
	}
	if width == 4 {
		value, mask = value&0xffffffff, mask&0xffffffff
	}
	info := &race.Info{Kind: race.KindHost, OpKind: race.OpHost, Op: call,
		Who: fmt.Sprintf("%s on %s (%s)", call, st, h.name), Site: fmt.Sprintf("%s:%d", filepath.Base(file), line)}
	queueJob(act, st, call, info.Who, func(w *sim.Actor) {
		if write {
			w.Sleep(memOpLatency)
			streamMemRace(w, info, p, width, true)
			if width == 4 {
				atomic.StoreUint32((*uint32)(ptr(p)), uint32(value))
			} else {
				atomic.StoreUint64((*uint64)(ptr(p)), value)
			}
			rt.mem.Watch().Notify(p, p+width)
			return
		}
		w.Await(sim.Wait{List: rt.mem.Watch(), Lo: p, Hi: p + width,
			Pred: func() bool { return streamMemCond(loadWord(p, width), value, mask, flags, width) },
			Text: func() string {
				return fmt.Sprintf("%s at %s waits for the word at %#x (now %#x) & %#x %s %#x", call, info.Site, p, loadWord(p, width), mask, streamMemCondNames[flags], value)
			}})
		streamMemRace(w, info, p, width, false)
	})
	return hipSuccess
}

// streamMemRace records the operation's atomic access of its word: a
// write releases the word, a wait's end acquires it and its writers.
func streamMemRace(w *sim.Actor, info *race.Info, p, width uint64, write bool) {
	d := rt.s.Race()
	t := w.RaceThread()
	if d == nil || t == nil {
		return
	}
	atomicAccess(d, t, d.Space(rt.mem, "LSA memory"), p, p+width, info, write)
}
