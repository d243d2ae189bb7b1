package cco_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/internal/golden"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/race"
	"github.com/emud-dev/emud/sim"
)

// Planted bugs of issue 29's classes, each with its fixed twin, their hang
// reports pinned whole (testdata/diag-*.txt; -update rewrites them).

// zeroedSlot: rank 1 does its own setup (a 64 KiB put and a quiet), then
// zeroes its signal slot for rank 0, while rank 0's put has already
// signalled it; its waitSignal then never returns. The report must say
// the slot was overwritten and name the store, and carry the detector's
// race between the store and the ATOMIC. The fixed twin zeroes the slot
// on the host before the kernels start.
func zeroedSlot(t *testing.T, seed uint64, fixed bool) error {
	r := newRig(t, seed, rigOpts{ranks: 2, race: true, racy: !fixed})
	slot, err := r.dcs[1].SignalPool().Slot(0, 0)
	require.NoError(t, err)
	if fixed {
		require.NoError(t, r.mem.Store64(slot, 0))
	}
	r.launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.Put(1, r.recv[0], 0, r.send[0], 0, 64, 0, cco.RemoteSignal)
		sdma.Quiet(1)
	})
	dc := r.dcs[1]
	r.launch(1, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.Put(0, r.recv[1], 4096, r.send[1], 4096, 60<<10, 0) // setup
		sdma.QuietQueue(0, 0)
		if !fixed {
			cco.NewMem(t, dc).Store64(slot, 0) // the bug: a peer's signal may be there already
		}
		sdma.WaitSignal(0, 0, 1)
	})
	return r.s.Run()
}

// erasedFlag: rank 0 queues a big put and, behind it on the same queue,
// an engine-side wait (postWaitMem) for a flag == 1; its lane sets the
// flag and tells rank 1 (a put with a remote signal on another queue),
// whose next-phase kernel resets the flag to 0 for its own use before the
// engine has reached the wait. The queue parks forever: the report must
// say the flag did reach 1 and name both writes. The fixed twin tells
// rank 1 only after the waiting queue has drained.
func erasedFlag(t *testing.T, seed uint64, fixed bool) error {
	r := newRig(t, seed, rigOpts{ranks: 2, winBytes: 4 << 20})
	flag := r.recv[0].LocalPtr(0x100)
	dc0, dc1 := r.dcs[0], r.dcs[1]
	r.launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.Put(1, r.recv[0], 4096, r.send[0], 4096, 2<<20, 0)
		sdma.PostWaitMem(1, 0, r.recv[0], 0x100, 1, cco.SdmaCmpEq, 0xffffffff)
		sdma.Put(1, r.recv[0], 0, r.send[0], 0, 8, 0)
		cco.NewMem(t, dc0).StoreRelease32(flag, 1) // phase 1 done
		if fixed {
			sdma.QuietQueue(1, 0)
		}
		sdma.Put(1, r.recv[0], 8, r.send[0], 8, 8, 1, cco.RemoteSignal) // tell rank 1
		sdma.QuietQueue(1, 0)
		sdma.QuietQueue(1, 1)
	})
	peerFlag := r.recv[1].LsaPtr(0, 0x100)
	r.launch(1, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.WaitSignal(0, 1, 1)
		cco.NewMem(t, dc1).Store32(peerFlag, 0) // the next phase's reset
	})
	return r.s.Run()
}

func TestPlantedZeroedSlot(t *testing.T) {
	err := zeroedSlot(t, 1, false)
	var h *sim.HangError
	require.ErrorAs(t, err, &h)
	text := h.Text()
	assert.Contains(t, text, "the slot was overwritten: it went from 1 back to 0")
	assert.Contains(t, text, "store64 by kernel \"rank1\"")
	assert.NotContains(t, text, "dropped")
	assert.NotContains(t, text, "lost")
	require.NotNil(t, h.Races, "the detector's report rides in the hang report")
	assert.Contains(t, text, "data races found before the hang")
	golden.Check(t, "diag-zeroed-slot.txt", text)
	j, err := h.JSON()
	require.NoError(t, err)
	assert.Contains(t, string(j), `"races"`)

	for seed := uint64(1); seed <= 5; seed++ {
		assert.NoError(t, zeroedSlot(t, seed, true), "fixed twin, seed %d", seed)
	}
}

func TestPlantedErasedFlag(t *testing.T) {
	var h *sim.HangError
	seed := uint64(1)
	for ; seed <= 20; seed++ {
		if errors.As(erasedFlag(t, seed, false), &h) {
			break
		}
	}
	require.NotNil(t, h, "no seed in 1..20 hangs")
	text := h.Text()
	assert.Contains(t, text, "but the flag did reach the value before the engine read it: it became 0x1")
	assert.Contains(t, text, "then was reset to 0x0")
	assert.Contains(t, text, `store32 by kernel "rank1"`)
	assert.Contains(t, text, `kernel "rank0"`)
	golden.Check(t, fmt.Sprintf("diag-erased-flag-seed%d.txt", seed), text)

	for seed := uint64(1); seed <= 5; seed++ {
		assert.NoError(t, erasedFlag(t, seed, true), "fixed twin, seed %d", seed)
	}
}

// No report says a signal was dropped or lost unless a fault plan dropped
// one: the planted bugs here under 20 seeds (the corpus's sweep is in
// package scenario/planted).
func TestPlantedNeverSayDropped(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		for name, run := range map[string]func(*testing.T, uint64, bool) error{"zeroed-slot": zeroedSlot, "erased-flag": erasedFlag} {
			err := run(t, seed, false)
			var h *sim.HangError
			var re *race.Error
			var text string
			switch {
			case errors.As(err, &h):
				text = h.Text()
			case errors.As(err, &re):
				text = re.Text()
			}
			for _, w := range []string{"dropped", "lost"} {
				assert.False(t, strings.Contains(text, w), "%s seed %d says %q:\n%s", name, seed, w, text)
			}
		}
	}
}

// stalePipeline: rank 0 sends two chunks on one queue, each put raising
// rank 1's slot; rank 1 believes the pipeline is one deep and waits for
// the count 1 before reading chunk 1, so chunk 0's signal releases it
// while chunk 1 is still landing. The race report must say the lane did
// wait and that a stale signal released it. The fixed twin waits for 2.
func stalePipeline(t *testing.T, seed uint64, fixed bool) error {
	r := newRig(t, seed, rigOpts{ranks: 2, race: true, racy: !fixed})
	const chunk = 16 << 10
	r.launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.Put(1, r.recv[0], 0, r.send[0], 0, chunk, 0, cco.RemoteSignal)
		sdma.Put(1, r.recv[0], chunk, r.send[0], chunk, chunk, 0, cco.RemoteSignal)
		sdma.QuietQueue(1, 0)
	})
	dc := r.dcs[1]
	want := uint64(1)
	if fixed {
		want = 2
	}
	r.launch(1, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.WaitSignal(0, 0, want) // the bug: chunk 1 is the second signal
		cco.NewMem(t, dc).Load32(r.recv[1].LocalPtr(chunk))
	})
	return r.s.Run()
}

func TestPlantedStalePipeline(t *testing.T) {
	var re *race.Error
	require.ErrorAs(t, stalePipeline(t, 1, false), &re)
	text := re.Text()
	assert.Contains(t, text, "the lane did wait (waitSignal on signalBuf[0 × 2 + 0] ≥ 1")
	assert.Contains(t, text, "a stale signal, raised for an earlier packet, released the wait early")
	golden.Check(t, "diag-stale-pipeline.txt", text)
	for seed := uint64(1); seed <= 5; seed++ {
		assert.NoError(t, stalePipeline(t, seed, true), "fixed twin, seed %d", seed)
	}
}

// aliasedSlot: rank 0's two blocks each put a chunk to rank 1 with a
// remote signal, both on queue 0, so both signals raise one slot; rank
// 1's block b waits for 1 on that slot and reads chunk b. The first
// block's signal releases both waits, and the other block's chunk is
// still landing. The race report must say the signal that released the
// wait was the other block's. The fixed twin gives each block its own
// queue id (its own slot).
func aliasedSlot(t *testing.T, seed uint64, fixed bool) error {
	r := newRig(t, seed, rigOpts{ranks: 2, queues: 2, race: true, racy: !fixed})
	const chunk = 16 << 10
	queue := func(b int) int {
		if fixed {
			return b
		}
		return 0 // the bug: both blocks on one queue id, one slot
	}
	r.launch(0, 2, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		b := t.BlockIdx()
		sdma.Put(1, r.recv[0], uint64(b)*chunk, r.send[0], uint64(b)*chunk, chunk, queue(b), cco.RemoteSignal)
		sdma.QuietQueue(1, queue(b))
	})
	dc := r.dcs[1]
	r.launch(1, 2, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		b := t.BlockIdx()
		sdma.WaitSignal(0, queue(b), 1)
		cco.NewMem(t, dc).Load32(r.recv[1].LocalPtr(uint64(b) * chunk))
	})
	return r.s.Run()
}

func TestPlantedAliasedSlot(t *testing.T) {
	var re *race.Error
	require.ErrorAs(t, aliasedSlot(t, 1, false), &re)
	text := re.Text()
	assert.Contains(t, text, "another block's signal")
	assert.Regexp(t, `packet posted by kernel "rank0" GPU 0 block (\d) wave 0 lane 0, but the signal that released the wait was posted by kernel "rank0" GPU 0 block (\d)`, text)
	assert.NotContains(t, text, "stale signal")
	golden.Check(t, "diag-aliased-slot.txt", text)
	for seed := uint64(1); seed <= 5; seed++ {
		assert.NoError(t, aliasedSlot(t, seed, true), "fixed twin, seed %d", seed)
	}
}

// baselineRead: rank 1 does its setup (a 256 KiB put and a quiet), then
// reads its slot for rank 0 as a baseline and waits for one more; rank 0's
// put signalled it already, so the wait needs a second signal. The report
// must say expected came from a read of the slot that already counted the
// put's signal, naming the read. The fixed twin waits for 1.
func baselineRead(t *testing.T, seed uint64, fixed bool) error {
	r := newRig(t, seed, rigOpts{ranks: 2, winBytes: 512 << 10, racy: !fixed})
	slot, err := r.dcs[1].SignalPool().Slot(0, 0)
	require.NoError(t, err)
	r.launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.Put(1, r.recv[0], 0, r.send[0], 0, 1024, 0, cco.RemoteSignal)
		sdma.Quiet(1)
	})
	dc := r.dcs[1]
	r.launch(1, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.Put(0, r.recv[1], 4096, r.send[1], 4096, 256<<10, 0) // setup
		sdma.QuietQueue(0, 0)
		want := uint64(1)
		if !fixed {
			want = cco.NewMem(t, dc).Load64(slot) + 1 // the bug: the baseline already counts rank 0's signal
		}
		sdma.WaitSignal(0, 0, want)
	})
	return r.s.Run()
}

func TestPlantedBaselineRead(t *testing.T) {
	var h *sim.HangError
	require.ErrorAs(t, baselineRead(t, 1, false), &h)
	text := h.Text()
	assert.Contains(t, text, "expected looks taken from a read of the slot: load64 by kernel \"rank1\"")
	assert.Contains(t, text, "which already counted the signal of rank 0's put of 1024 B")
	assert.NotContains(t, text, "dropped")
	golden.Check(t, "diag-baseline-read.txt", text)
	for seed := uint64(1); seed <= 5; seed++ {
		assert.NoError(t, baselineRead(t, seed, true), "fixed twin, seed %d", seed)
	}
}
