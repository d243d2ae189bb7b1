package calibrate

import (
	"fmt"
	"math"
	"slices"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/model"
	"github.com/emud-dev/emud/sim"
)

// The scenarios below are the documented measurements re-enacted on the
// emulator through the device API: kernels call cco, cco writes real
// packets into rings, the engine executes them, signals and read pointers
// move, and the scenario reads the emulated clock where the benchmark read
// its clock. Rank 0 issues; rank 1 is the peer; payloads are in rank 0's
// send window and land in the peer's receive window.

// span is a window of emulated time observed by lanes.
type span struct{ start, end sim.Time }

func (s *span) begin(t sim.Time) {
	if s.start < 0 || t < s.start {
		s.start = t
	}
}
func (s *span) finish(t sim.Time) { s.end = max(s.end, t) }
func newSpan() span               { return span{start: -1} }
func (s span) dur() sim.Time      { return s.end - s.start }

func micros(t sim.Time) float64 { return float64(t) / float64(sim.Microsecond) }

// issueCycles: one wave of lanes posts one 64 B put per lane, all on queue
// 0 of peer 1 with ccoSdmaThreadSameQueue, or spread round-robin over 8
// queues (Independent, the default mode). Returns the CU cycles from the
// first lane entering put to the last lane leaving it.
func issueCycles(m model.Model, seed uint64, lanes int, spread bool) (float64, error) {
	b, err := newBench(m, seed, 2, 64<<10)
	if err != nil {
		return 0, err
	}
	sp := newSpan()
	err = b.launch(0, lanes, func(t *kernel.Thread, sdma *cco.Sdma) {
		l := uint64(t.Lane())
		sp.begin(t.Now())
		if spread {
			sdma.Put(1, b.recv[1], 64*l, b.send[0], 64*l, 64, t.Lane()%benchQueues)
		} else {
			sdma.Put(1, b.recv[1], 64*l, b.send[0], 64*l, 64, 0, cco.SdmaThreadSameQueue)
		}
		sp.finish(t.Now())
	})
	if err != nil {
		return 0, err
	}
	if err := b.run("issue"); err != nil {
		return 0, err
	}
	return float64(sp.dur()) / float64(sim.Nanosecond) * m.CUClockGHz(), nil
}

// putQuiet: one wave of ops lanes, lane i moving bytes to or from peer 1 on
// queue i mod queues (ops puts issued together, or one lane issuing them
// back to back when serial), then each lane quiets its queue. Returns µs
// from the first issue to the last quiet returning.
func putQuiet(m model.Model, seed uint64, get bool, bytes uint64, ops, queues int, serial bool) (float64, error) {
	b, err := newBench(m, seed, 2, bytes*uint64(ops))
	if err != nil {
		return 0, err
	}
	sp := newSpan()
	one := func(t *kernel.Thread, sdma *cco.Sdma, i int) {
		off := bytes * uint64(i)
		q := i % queues
		if get {
			sdma.Get(1, b.recv[0], off, b.send[1], off, bytes, q)
		} else {
			sdma.Put(1, b.recv[1], off, b.send[0], off, bytes, q)
		}
	}
	lanes := ops
	if serial {
		lanes = 1
	}
	err = b.launch(0, lanes, func(t *kernel.Thread, sdma *cco.Sdma) {
		sp.begin(t.Now())
		if serial {
			for i := 0; i < ops; i++ {
				one(t, sdma, i)
			}
			for q := 0; q < min(ops, queues); q++ {
				sdma.QuietQueue(1, q)
			}
		} else {
			one(t, sdma, t.Lane())
			sdma.QuietQueue(1, t.Lane()%queues)
		}
		sp.finish(t.Now())
	})
	if err != nil {
		return 0, err
	}
	if err := b.run("put+quiet"); err != nil {
		return 0, err
	}
	return micros(sp.dur()), nil
}

// copiesSpan is the most address space one of copies' windows takes.
const copiesSpan = 4 << 30

// copies: one thread of GPU src issues ops copies of bytes each to GPU dst
// (src == dst: a local copy), back to back, copy i on queue i mod queues
// toward dst, then quiets every queue it used. Returns µs from the first
// issue until the last quiet returns: everything has drained.
//
// The windows are phantom (no bytes stored), so only their address space
// grows with the row: up to copiesSpan, copy i has its own range; past
// it every copy uses the same one, which times the same (a phantom copy's
// time does not depend on its addresses) and keeps a 64 × 1 GiB row
// inside a rank's VMM.
//
// A row with one end in host memory (model.Host) is timed the same way on
// the GPU end: its copies go between its window and a phantom host buffer
// with putPtr on its loopback queues (which sit on the general engines,
// those of the GPU's link to the host).
//
// With pull, GPU dst's thread gets the copies from peer src on its queues
// toward src (its engine reads across the link).
func copies(m model.Model, seed uint64, src, dst int, bytes uint64, ops, queues int, pull bool) (float64, error) {
	win, stride := bytes*uint64(ops), bytes
	if win > copiesSpan {
		win, stride = bytes, 0
	}
	host := src == model.Host || dst == model.Host
	gpu := src
	if src == model.Host || pull {
		gpu = dst
	}
	b, err := newBench(m, seed, max(2, gpu+1, dst+1, src+1), win)
	if err != nil {
		return 0, err
	}
	var hostBuf uint64
	if host {
		if hostBuf, err = b.hostMem().AllocPhantom(model.Host, win, "host buffer"); err != nil {
			return 0, err
		}
	}
	peer := dst
	switch {
	case host:
		peer = gpu
	case pull:
		peer = src
	}
	sp := newSpan()
	err = b.launch(gpu, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sp.begin(t.Now())
		for i := 0; i < ops; i++ {
			off := stride * uint64(i)
			switch {
			case src == model.Host:
				sdma.PutPtr(gpu, b.recv[gpu].LocalPtr(off), hostBuf+off, bytes, i%queues)
			case dst == model.Host:
				sdma.PutPtr(gpu, hostBuf+off, b.send[gpu].LocalPtr(off), bytes, i%queues)
			case pull:
				sdma.Get(src, b.recv[dst], off, b.send[src], off, bytes, i%queues)
			default:
				sdma.Put(dst, b.recv[dst], off, b.send[src], off, bytes, i%queues)
			}
		}
		for q := 0; q < min(ops, queues); q++ {
			sdma.QuietQueue(peer, q)
		}
		sp.finish(t.Now())
	})
	if err != nil {
		return 0, err
	}
	if err := b.run("copies"); err != nil {
		return 0, err
	}
	return micros(sp.dur()), nil
}

// grouped64 is the 64-lane SameQueue post of 64 B or per-lane bytes copies
// to peer 1 queue 0, the shape of engine.*, scatter.* and signal.* rows.
// It returns the issue time (µs), the engine time from the doorbell to the
// last packet executed (µs), the time until the sender's quiet returns, and
// the time until the receiver's waitSignal returns (µs; signalled runs only).
type grouped64 struct {
	issue, engine, quiet, wait float64
}

func runGrouped64(m model.Model, seed uint64, lanes int, bytes uint64, sig bool, perCopy bool) (grouped64, error) {
	var r grouped64
	b, err := newBench(m, seed, 2, bytes*uint64(lanes))
	if err != nil {
		return r, err
	}
	sp, issue := newSpan(), newSpan()
	var doorbell, drained sim.Time
	var waited sim.Time
	opts := []cco.Option{cco.SdmaThreadSameQueue}
	expected := uint64(1)
	if sig {
		opts = append(opts, cco.RemoteSignal)
		if perCopy {
			opts = append(opts, cco.SdmaOptFlagsSignalPerCopy)
			expected = uint64(lanes)
		}
	}
	err = b.launch(0, lanes, func(t *kernel.Thread, sdma *cco.Sdma) {
		l := uint64(t.Lane())
		sp.begin(t.Now())
		issue.begin(t.Now())
		sdma.Put(1, b.recv[1], bytes*l, b.send[0], bytes*l, bytes, 0, opts...)
		issue.finish(t.Now())
		if t.Lane() == 0 {
			doorbell = t.Now()
			b.observeDrain(0, 1, 0, &drained)
		}
		sdma.QuietQueue(1, 0)
		sp.finish(t.Now())
	})
	if err != nil {
		return r, err
	}
	if sig {
		err = b.launch(1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
			sdma.WaitSignal(0, 0, expected)
			waited = t.Now()
		})
		if err != nil {
			return r, err
		}
	}
	if err := b.run("grouped post"); err != nil {
		return r, err
	}
	r.issue = micros(issue.dur())
	r.engine = micros(drained - doorbell)
	r.quiet = micros(sp.dur())
	r.wait = micros(waited - sp.start)
	return r, nil
}

// waitVsQuiet: rank 0 puts bytes to peer 1 with a remote signal and quiets;
// rank 1 waits for the signal. Returns waitSignal's return minus quiet's
// return (µs), and the larger of the two terms: each completion's latency
// from the put's call.
func waitVsQuiet(m model.Model, seed uint64, bytes uint64) (delta, term float64, err error) {
	b, err := newBench(m, seed, 2, bytes)
	if err != nil {
		return 0, 0, err
	}
	var start, quiet, wait sim.Time
	if err := b.launch(0, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		start = t.Now()
		sdma.Put(1, b.recv[1], 0, b.send[0], 0, bytes, 0, cco.RemoteSignal)
		sdma.QuietQueue(1, 0)
		quiet = t.Now()
	}); err != nil {
		return 0, 0, err
	}
	if err := b.launch(1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.WaitSignal(0, 0, 1)
		wait = t.Now()
	}); err != nil {
		return 0, 0, err
	}
	if err := b.run("wait vs quiet"); err != nil {
		return 0, 0, err
	}
	return micros(wait - quiet), micros(max(wait, quiet) - start), nil
}

// chainIssue: warps single-lane waves each post one 64 B put to peer 1,
// all on queue 0 or each on its own queue. Returns µs from the first post
// to the last put returning.
func chainIssue(m model.Model, seed uint64, warps int, oneQueue bool) (float64, error) {
	b, err := newBench(m, seed, 2, 64*uint64(warps))
	if err != nil {
		return 0, err
	}
	sp := newSpan()
	if err := b.launchWaves(0, warps, func(t *kernel.Thread, sdma *cco.Sdma) {
		w := t.BlockIdx()
		q := w % benchQueues
		if oneQueue {
			q = 0
		}
		sp.begin(t.Now())
		sdma.Put(1, b.recv[1], 64*uint64(w), b.send[0], 64*uint64(w), 64, q)
		sp.finish(t.Now())
	}); err != nil {
		return 0, err
	}
	if err := b.run("commit chain"); err != nil {
		return 0, err
	}
	return micros(sp.dur()), nil
}

// ringCapacity posts Aggregate single-copy puts without signals on one
// queue until a put cannot return: the run hangs there, and the count of
// puts that returned is the capacity.
func ringCapacity(m model.Model, seed uint64) (float64, error) {
	b, err := newBench(m, seed, 2, 64)
	if err != nil {
		return 0, err
	}
	returned := 0
	if err := b.launch(0, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		for i := 0; i < 1<<20; i++ {
			sdma.Put(1, b.recv[1], 0, b.send[0], 0, 64, 0, cco.SdmaOptFlagsAggregate)
			returned++
		}
	}); err != nil {
		return 0, err
	}
	err = b.Sim.Run()
	if _, hang := err.(*sim.HangError); !hang {
		return 0, fmt.Errorf("ring capacity: expected the uncommitted batch to hang, got %v", err)
	}
	return float64(returned), nil
}

// postWait variants: how the put behind the flag is triggered.
type postWaitKind int

const (
	pwCUPoll    postWaitKind = iota // the CU polls the flag, then puts
	pwPreplaced                     // packets posted (Aggregate); the CU polls, then commits
	pwEngine                        // postWaitMem: the engine polls the flag
	pwPutPtr                        // postWaitMemPutPtr (one reservation, one doorbell)
)

// postWaitLatency: the host sets rank 0's flag at a seeded instant while
// the trigger waits; returns µs from the flag store to the put's data
// having landed on peer 1 (the queue's read pointer passing the COPY). The
// documented figures are medians of 100; this runs runs seeds with the
// flag landing at evenly spread instants relative to the pollers, so the
// poll phase is sampled as on hardware, and returns their mean.
func postWaitLatency(m model.Model, seed uint64, kind postWaitKind, bytes uint64, runs int) (float64, error) {
	var lat []float64
	for i := 0; i < runs; i++ {
		s := seed*1000 + uint64(i)
		b, err := newBench(m, s, 2, bytes)
		if err != nil {
			return 0, err
		}
		// Flag time: after the posting settled, spread over a 12 µs window
		// by the golden-ratio sequence, so that any number of runs samples
		// the phases of pollers of any period (about 1 µs here) evenly;
		// a fixed step would alias with a period near it.
		at := 20*sim.Microsecond + sim.Time(math.Mod((float64(i)+0.5)*0.6180339887498949, 1)*12*float64(sim.Microsecond))
		var set, done sim.Time
		b.setFlagAt(0, at, 1, &set)
		flag := b.flags[0]
		err = b.launch(0, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
			switch kind {
			case pwCUPoll:
				b.cuPoll(t, 0, 1)
				sdma.Put(1, b.recv[1], 0, b.send[0], 0, bytes, 0)
			case pwPreplaced:
				sdma.Put(1, b.recv[1], 0, b.send[0], 0, bytes, 0, cco.SdmaOptFlagsAggregate)
				b.cuPoll(t, 0, 1)
				sdma.Commit(1, 0)
			case pwEngine:
				sdma.PostWaitMem(1, 0, flag, 0, 1, cco.SdmaCmpEq, 0xFFFFFFFF)
				sdma.Put(1, b.recv[1], 0, b.send[0], 0, bytes, 0)
			case pwPutPtr:
				sdma.PostWaitMemPutPtr(1, 0, flag, 0, 1, cco.SdmaCmpEq, 0xFFFFFFFF, b.recv[1].LsaPtr(1, 0), b.send[0].LocalPtr(0), bytes)
			}
			b.observeDrain(0, 1, 0, &done)
		})
		if err != nil {
			return 0, err
		}
		if err := b.run("post wait"); err != nil {
			return 0, err
		}
		lat = append(lat, micros(done-set))
	}
	// The mean, not the median: over evenly sampled phases the latency is
	// uniform within a poll period, where the two agree, and the mean
	// moves smoothly with the parameters (a fit can follow it).
	var sum float64
	for _, l := range lat {
		sum += l
	}
	return sum / float64(len(lat)), nil
}

// putPtrHolds: a postWaitMemPutPtr whose flag already holds, against a
// plain put of the same bytes; µs from the call to the data landing.
func putPtrHolds(m model.Model, seed uint64, bytes uint64, withWait bool) (float64, error) {
	b, err := newBench(m, seed, 2, bytes)
	if err != nil {
		return 0, err
	}
	if err := b.hostMem().Store32(b.flags[0].LocalPtr(0), 1); err != nil {
		return 0, err
	}
	var start, done sim.Time
	flag := b.flags[0]
	if err := b.launch(0, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		start = t.Now()
		if withWait {
			sdma.PostWaitMemPutPtr(1, 0, flag, 0, 1, cco.SdmaCmpEq, 0xFFFFFFFF, b.recv[1].LsaPtr(1, 0), b.send[0].LocalPtr(0), bytes)
		} else {
			sdma.PutPtr(1, b.recv[1].LsaPtr(1, 0), b.send[0].LocalPtr(0), bytes, 0)
		}
		b.observeDrain(0, 1, 0, &done)
	}); err != nil {
		return 0, err
	}
	if err := b.run("putPtr"); err != nil {
		return 0, err
	}
	return micros(done - start), nil
}

// bcastKind is what a broadcast-row transfer does with two destinations.
type bcastKind int

const (
	bcRemote2     bcastKind = iota // putBroadcast to peers 1 and 2
	bcLocalRemote                  // putBroadcast to peer 1 and this GPU
	bcLocal2                       // putBroadcast to two local buffers
	bcTwoPuts1Q                    // two puts (to peers 1 and 2) on one queue
	bcTwoPuts2Q                    // two puts (to peers 1 and 2) on two queues
)

// bcastGBps moves bytes to each of two destinations and returns delivered
// bytes (2 × bytes) per µs of the whole operation, in GB/s.
func bcastGBps(m model.Model, seed uint64, kind bcastKind, bytes uint64) (float64, error) {
	b, err := newBench(m, seed, 3, 2*bytes)
	if err != nil {
		return 0, err
	}
	sp := newSpan()
	src := b.send[0].LocalPtr(0)
	lanes := 1
	if kind == bcTwoPuts2Q {
		lanes = 2
	}
	if err := b.launch(0, lanes, func(t *kernel.Thread, sdma *cco.Sdma) {
		sp.begin(t.Now())
		switch kind {
		case bcRemote2:
			sdma.PutBroadcast(1, b.recv[1], 0, 2, b.recv[2], 0, b.send[0], 0, bytes, 0)
			sdma.QuietQueue(1, 0)
		case bcLocalRemote:
			sdma.PutBroadcast(1, b.recv[1], 0, 0, b.recv[0], 0, b.send[0], 0, bytes, 0)
			sdma.QuietQueue(1, 0)
		case bcLocal2:
			sdma.PutBroadcast(0, b.recv[0], 0, 0, b.recv[0], bytes, b.send[0], 0, bytes, 0)
			sdma.QuietQueue(0, 0)
		case bcTwoPuts1Q:
			// One queue (toward peer 1) carries both copies; the second
			// writes peer 2's memory through its LSA address.
			sdma.PutPtr(1, b.recv[1].LsaPtr(1, 0), src, bytes, 0)
			sdma.PutPtr(1, b.recv[2].LsaPtr(2, 0), src, bytes, 0)
			sdma.QuietQueue(1, 0)
		case bcTwoPuts2Q:
			p := 1 + t.Lane()
			sdma.Put(p, b.recv[p], 0, b.send[0], 0, bytes, 0)
			sdma.QuietQueue(p, 0)
		}
		sp.finish(t.Now())
	}); err != nil {
		return 0, err
	}
	if err := b.run("broadcast"); err != nil {
		return 0, err
	}
	return float64(2*bytes) / (float64(sp.dur()) / float64(sim.Nanosecond)), nil
}

// gatherGBps: a CU kernel packs bytes within its GPU; GB/s.
func gatherGBps(m model.Model, seed uint64, bytes uint64) (float64, error) {
	b, err := newBench(m, seed, 1, bytes)
	if err != nil {
		return 0, err
	}
	sp := newSpan()
	if err := b.launch(0, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sp.begin(t.Now())
		kernel.Converge(t, cuCopyCall, &cuCopyArgs{mem: b.hostMem(), m: m, dst: b.recv[0].LocalPtr(0), src: b.send[0].LocalPtr(0), n: bytes})
		sp.finish(t.Now())
	}); err != nil {
		return 0, err
	}
	if err := b.run("gather"); err != nil {
		return 0, err
	}
	return float64(bytes) / (float64(sp.dur()) / float64(sim.Nanosecond)), nil
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
