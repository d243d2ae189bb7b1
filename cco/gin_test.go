package cco_test

import (
	"encoding/binary"
	"testing"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPutSignals: GIN's post over SDMA (Sdma.PutSignals) copies the bytes
// and then adds each signal's value at its word, once per posting lane;
// with a warp or block coop only the leader posts; a bare signal copies
// nothing; more than MaxSignalsAt signals fail the kernel naming the call.
func TestPutSignals(t *testing.T) {
	const chunk, sigOff, ctrOff = 256, 8192, 8200 // words past the data, in the receive windows
	for _, c := range []struct {
		name          string
		lanes         int
		coop          cco.Coop
		bytes         uint64
		value         uint64
		counter       bool
		wantSig, want uint64 // the peer's signal word, this rank's counter word
		err           string
	}{
		{name: "put, signal and counter per lane", lanes: 4, coop: cco.CoopThread, bytes: chunk, value: 3, counter: true, wantSig: 12, want: 4},
		{name: "bare signal", lanes: 1, coop: cco.CoopThread, value: 5, wantSig: 5},
		{name: "warp coop posts once", lanes: 64, coop: cco.CoopWarp, bytes: chunk, value: 1, counter: true, wantSig: 1, want: 1}, // one wave of 64
		{name: "block coop posts once", lanes: 64, coop: cco.CoopBlock, bytes: chunk, value: 1, counter: true, wantSig: 1, want: 1},
		{name: "three signals", lanes: 1, coop: cco.CoopThread, value: 1, err: "gin put: 3 signals on one post; at most 2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, 1, rigOpts{ranks: 2, winBytes: 16384})
			r.fillBytes(r.send[0], 0, patterned(7, 64*chunk))
			r.launch(0, 1, c.lanes, func(th *kernel.Thread, s *cco.Sdma) {
				off := uint64(th.ThreadIdx()) * chunk
				sigs := []cco.SignalAt{{Addr: r.recv[0].LsaPtr(1, sigOff), Value: c.value}}
				if c.counter {
					sigs = append(sigs, cco.SignalAt{Addr: r.recv[0].LocalPtr(ctrOff), Value: 1})
				}
				if c.err != "" {
					sigs = append(sigs, sigs[0], sigs[0])
				}
				var dst, src uint64
				if c.bytes > 0 {
					dst, src = r.recv[0].LsaPtr(1, off), r.send[0].LocalPtr(off)
				}
				s.PutSignals("gin put", 1, dst, src, c.bytes, 0, c.coop, sigs...)
				s.Quiet(1)
			})
			err := r.s.Run()
			if c.err != "" {
				assert.ErrorContains(t, err, c.err)
				return
			}
			require.NoError(t, err)
			word := func(rank int, off uint64) uint64 {
				return binary.LittleEndian.Uint64(r.readBytes(r.recv[rank], off, 8))
			}
			assert.Equal(t, c.wantSig, word(1, sigOff), "the peer's signal word")
			assert.Equal(t, c.want, word(0, ctrOff), "this rank's counter word")
			posters := c.lanes
			if c.coop != cco.CoopThread {
				posters = 1 // lane 0 of the one wave, thread 0 of the block
			}
			if c.bytes > 0 {
				assert.Equal(t, patterned(7, 64*chunk)[:posters*chunk], r.readBytes(r.recv[1], 0, uint64(posters*chunk)), "the copies landed")
			} else {
				assert.Equal(t, make([]byte, chunk), r.readBytes(r.recv[1], 0, chunk), "a bare signal copies nothing")
			}
		})
	}
}

// TestWaitWord: a GIN wait returns once its word reaches the value in
// NCCL's rolling compare of its bits (also across a wrap), gives up at its
// deadline with TimedOut, is a hang naming the word, the value expected
// and the value there when nothing raises it, and refuses a bit width
// outside [1, 64].
func TestWaitWord(t *testing.T) {
	const off = 8192
	for _, c := range []struct {
		name       string
		word       uint64 // the word before the kernel
		raise      bool   // a bare signal of +1 raises it first
		least      uint64
		bits       int
		deadline   sim.Time // after the start; 0 none
		timedOut   bool
		hang, fail string
	}{
		{name: "raised by a signal", raise: true, least: 1, bits: 64},
		{name: "already there", word: 7, least: 5, bits: 64},
		{name: "rolling past a wrap", word: 0x105, least: 0xff, bits: 8},
		{name: "times out", least: 1, bits: 64, deadline: 10 * sim.Microsecond, timedOut: true},
		{name: "hangs", least: 1, bits: 64, hang: "ncclGin::waitSignal on signal 0 of rank 0: expects 1, has 0 (kernel"},
		{name: "bad bits", least: 1, bits: 0, fail: "bits 0 outside [1, 64]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, 1, rigOpts{ranks: 2, winBytes: 16384})
			addr := r.recv[0].LocalPtr(off)
			require.NoError(t, r.mem.Store64(addr, c.word))
			var w *cco.WordWait
			var took sim.Time
			r.launch(0, 1, 1, func(th *kernel.Thread, s *cco.Sdma) {
				if c.raise {
					s.PutSignals("gin signal", 0, 0, 0, 0, 0, cco.CoopThread, cco.SignalAt{Addr: addr, Value: 1})
				}
				w = &cco.WordWait{Call: "ncclGin::waitSignal", What: "signal 0 of rank 0", Addr: addr, Least: c.least, Bits: c.bits, Deadline: -1}
				start := th.Now()
				if c.deadline > 0 {
					w.Deadline = start + c.deadline
				}
				s.WaitWord(w)
				took = th.Now() - start
			})
			err := r.s.Run()
			switch {
			case c.hang != "":
				var h *sim.HangError
				require.ErrorAs(t, err, &h)
				assert.Contains(t, h.Text(), c.hang)
				return
			case c.fail != "":
				assert.ErrorContains(t, err, c.fail)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.timedOut, w.TimedOut)
			if c.timedOut {
				assert.GreaterOrEqual(t, took, c.deadline)
			}
		})
	}
}
