package cco_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every row of the seed's "Failure modes" table, plus the seed's debug
// checks and MORI's hazards: in release mode the symptom appears as on
// hardware; with debug on the run stops at the offending call with the rule
// named.

// trap asserts err is a kernel failure at call whose message contains want.
func trap(t *testing.T, err error, call, want string) *kernel.LaneError {
	t.Helper()
	var le *kernel.LaneError
	require.ErrorAs(t, err, &le, "want a trap in %s, got %v", call, err)
	assert.Equal(t, call, le.Call)
	assert.Contains(t, le.Error(), want)
	return le
}

// hang asserts err is a hang with a cause naming each row (sim.Row) among
// wants in its Row field, and whose causes' words include every other
// want (a string).
func hang(t *testing.T, err error, wants ...any) *sim.HangError {
	t.Helper()
	var h *sim.HangError
	require.ErrorAs(t, err, &h, "want a hang, got %v", err)
	var said []string
	for _, c := range h.Causes {
		said = append(said, c.String())
	}
	all := strings.Join(said, "\n")
	for _, w := range wants {
		row, ok := w.(sim.Row)
		if !ok {
			assert.Contains(t, all, w, "hang report:\n%s", h.Text())
			continue
		}
		found := false
		for _, c := range h.Causes {
			found = found || c.Row == row
		}
		assert.True(t, found, "no cause names row %v in its Row field; report:\n%s", row, h.Text())
	}
	return h
}

// Row: "every call silently does nothing" — MORI_ENABLE_SDMA not set, or
// set to a false value.
func TestFailureNoSdma(t *testing.T) {
	for _, v := range []string{"", "0", "false", "OFF", "no"} {
		env := cco.Env{}
		if v != "" {
			env["MORI_ENABLE_SDMA"] = v
		}
		for seed := uint64(1); seed <= seeds; seed++ {
			r := newRig(t, seed, rigOpts{ranks: 2, env: env, debug: true})
			require.Equal(t, 0, r.dcs[0].Sdma.SdmaNumQueue)
			r.fillBytes(r.recv[1], 0, []byte{0xee, 0xee})
			r.fillBytes(r.send[0], 0, []byte{1, 2})
			r.launch(0, 1, 64, func(t *kernel.Thread, sdma *cco.Sdma) {
				sdma.Put(1, r.recv[0], 0, r.send[0], 0, 2, 0, cco.RemoteSignal)
				sdma.Get(1, r.recv[0], 0, r.send[0], 0, 2, 0)
				sdma.Commit(1, 0)
				sdma.Quiet(1)
				sdma.QuietQueue(1, 0, cco.CoopWarp)
				sdma.WaitSignal(1, 0, 1) // returns at once
				sdma.PostWaitMem(1, 0, r.recv[0], 0, 1, cco.SdmaCmpEq, 0xffffffff)
			})
			require.NoError(t, r.s.Run(), "MORI_ENABLE_SDMA=%q seed %d", v, seed)
			assert.Equal(t, []byte{0xee, 0xee}, r.readBytes(r.recv[1], 0, 2))
			assert.Empty(t, r.node.Queues(), "no queue was ever touched")
		}
	}
}

// Row: "waitSignal never returns" — expected shared across queues, or
// counted per lane when the sender signals once per group, or a srcRank that
// is not an LSA rank.
func TestFailureWaitSignalNeverReturns(t *testing.T) {
	cases := []struct {
		name   string
		sender func(sdma *cco.Sdma, r *rig)
		lanes  int
		src    int
		exp    uint64
		cause  string
	}{
		{"expected shared across queues", func(sdma *cco.Sdma, r *rig) {
			if sdma.Thread().Lane() == 0 {
				sdma.Put(1, r.recv[0], 0, r.send[0], 0, 64, 0, cco.RemoteSignal)
				sdma.Put(1, r.recv[0], 64, r.send[0], 64, 64, 1, cco.RemoteSignal)
			}
		}, 1, 0, 2, "expected looks shared across queues"},
		{"expected counted per lane", func(sdma *cco.Sdma, r *rig) {
			off := uint64(sdma.Thread().Lane()) * 64
			sdma.Put(1, r.recv[0], off, r.send[0], off, 64, 0, cco.RemoteSignal, cco.SdmaThreadSameQueue)
		}, 4, 0, 4, "expected looks counted per lane"},
		{"srcRank not an LSA rank", func(sdma *cco.Sdma, r *rig) {}, 1, 2, 1, "not an LSA rank"},
		// The receiver waits on queue 0's slot while the sender signals
		// queue 1: not a shared expected, a disagreement on the queue; the
		// report names the put meant to release the wait.
		{"the sender signalled on another queue", func(sdma *cco.Sdma, r *rig) {
			sdma.Put(1, r.recv[0], 0, r.send[0], 0, 64, 1, cco.RemoteSignal)
		}, 1, 0, 1, "the sender signalled on another queue: rank 0's signals toward this rank went to queue [1]'s slot, never queue 0's; the put meant to satisfy it is rank 0's put of 64 B on queue (peer 1, queueId 1), posted at"},
		{"nothing ever posted", func(sdma *cco.Sdma, r *rig) {}, 1, 0, 1, "rank 0 never posted a signal toward this slot"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for seed := uint64(1); seed <= seeds; seed++ {
				r := newRig(t, seed, rigOpts{ranks: 2})
				r.launch(0, 1, tc.lanes, func(t *kernel.Thread, sdma *cco.Sdma) {
					tc.sender(sdma, r)
					sdma.Quiet(1)
				})
				r.launch(1, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) { sdma.WaitSignal(tc.src, 0, tc.exp) })
				h := hang(t, r.s.Run(), cco.RowWaitSignal, tc.cause)
				assert.Contains(t, h.Text(), "waitSignal on rank 1")
			}
		})
	}
	for _, tc := range []struct {
		name   string
		inject engine.InjectPlan
		cause  string
	}{
		{"a dropped signal ATOMIC", engine.InjectPlan{SignalDropRate: 1},
			"has run its signal ATOMIC (the queue's rptr is past it), but the fault plan dropped 1 signal ATOMIC(s) toward this slot"},
		{"a queue on a dead engine", engine.InjectPlan{DeadQueues: []engine.QueueID{{GPU: 0, Peer: 1, Q: 0}}},
			"is still on its queue, which is stuck"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, 1, rigOpts{ranks: 2, engineCfg: func(c *engine.Config) { c.Inject = &tc.inject }})
			r.launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
				sdma.Put(1, r.recv[0], 0, r.send[0], 0, 64, 0, cco.RemoteSignal)
			})
			r.launch(1, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) { sdma.WaitSignal(0, 0, 1) })
			h := hang(t, r.s.Run(), cco.RowWaitSignal, tc.cause)
			assert.Contains(t, h.Text(), "injected fault", "the injected fault is among the causes")
			assert.Contains(t, h.Text(), "the put meant to satisfy it, rank 0's put of 64 B on queue (peer 1, queueId 0), posted at ", "the report names the put")
		})
	}
	t.Run("debug traps a bad srcRank", func(t *testing.T) {
		r := newRig(t, 1, rigOpts{ranks: 2, debug: true})
		r.launch(1, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) { sdma.WaitSignal(2, 0, 1) })
		trap(t, r.s.Run(), "waitSignal", "debug check 5 (bad srcRank)")
	})
}

// Row: "quiet returns but data is stale" — aggregate puts never committed.
func TestFailureQuietStale(t *testing.T) {
	for seed := uint64(1); seed <= seeds; seed++ {
		r := newRig(t, seed, rigOpts{ranks: 2})
		r.fillBytes(r.send[0], 0, patterned(1, 256))
		r.fillBytes(r.recv[1], 0, make([]byte, 256))
		returned := false
		r.launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
			sdma.Put(1, r.recv[0], 0, r.send[0], 0, 256, 0, cco.SdmaOptFlagsAggregate)
			sdma.QuietQueue(1, 0)
			returned = true
		})
		require.NoError(t, r.s.Run(), "seed %d", seed)
		assert.True(t, returned, "quiet returned")
		assert.Equal(t, make([]byte, 256), r.readBytes(r.recv[1], 0, 256), "stale: the uncommitted put never ran")
		qu, _ := r.node.Queue(0, 1, 0)
		assert.Equal(t, uint64(cco.Unit), qu.Ring().Unrung(), "the COPY is reserved but not rung")
	}
	r := newRig(t, 1, rigOpts{ranks: 2, debug: true})
	r.launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.Put(1, r.recv[0], 0, r.send[0], 0, 256, 0, cco.SdmaOptFlagsAggregate)
		sdma.QuietQueue(1, 0)
	})
	trap(t, r.s.Run(), "quietQueue", "debug check 4 (uncommitted Aggregate puts)")
}

// Row: "a put inside an Aggregate batch never returns" — over 256 KiB − 32
// B posted on one queue without commit.
func TestFailureAggregateBatchTooBig(t *testing.T) {
	const puts = 8192 // 8191 fit
	posted := 0
	for seed := uint64(1); seed <= seeds; seed++ {
		r := newRig(t, seed, rigOpts{ranks: 2})
		posted = 0
		r.launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
			for i := 0; i < puts; i++ {
				sdma.Put(1, r.recv[0], 0, r.send[0], 0, 8, 0, cco.SdmaOptFlagsAggregate)
				posted++
			}
			sdma.Commit(1, 0)
		})
		hang(t, r.s.Run(), cco.RowAggregate, "8191 packets", "commit sooner")
		assert.Equal(t, puts-1, posted, "seed %d: the 8192nd put never returns", seed)
	}
	r := newRig(t, 1, rigOpts{ranks: 2, debug: true})
	posted = 0
	r.launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		for i := 0; i < puts; i++ {
			sdma.Put(1, r.recv[0], 0, r.send[0], 0, 8, 0, cco.SdmaOptFlagsAggregate)
			posted++
		}
	})
	trap(t, r.s.Run(), "put", "debug check 1 (ring full)")
	assert.Equal(t, puts-1, posted, "the trap is at the put that would overfill")
}

// MORI hazard: Aggregate posts followed by a put without Aggregate before
// commit: the put's commit chain waits forever.
func TestFailureAggregateThenPlainPut(t *testing.T) {
	for seed := uint64(1); seed <= seeds; seed++ {
		r := newRig(t, seed, rigOpts{ranks: 2, queues: 4})
		r.launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
			for i := 0; i < 3; i++ {
				sdma.Put(1, r.recv[0], 0, r.send[0], 0, 8, 2, cco.SdmaOptFlagsAggregate)
			}
			sdma.Put(1, r.recv[0], 0, r.send[0], 0, 8, 2)
		})
		h := hang(t, r.s.Run(), "aggregate puts were never committed: 3 packets reserved on rank 0 → 1 queue 2, doorbell behind by 96 bytes")
		assert.Contains(t, h.Text(), "commit chain")
	}
	r := newRig(t, 1, rigOpts{ranks: 2, queues: 4, debug: true})
	r.launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.Put(1, r.recv[0], 0, r.send[0], 0, 8, 2, cco.SdmaOptFlagsAggregate)
		sdma.Put(1, r.recv[0], 0, r.send[0], 0, 8, 2)
	})
	trap(t, r.s.Run(), "put", "debug check 2 (commit chain stalled)")
}

// Row: "wrong data with several lanes per wave" — SameQueue set while lanes
// target different queues. Each lane writes its COPY into its own queue's
// ring at the offset the leader reserved on the leader's queue; only the
// leader's queue is rung.
func TestFailureSameQueuePromiseBroken(t *testing.T) {
	const chunk = 64
	for seed := uint64(1); seed <= seeds; seed++ {
		r := newRig(t, seed, rigOpts{ranks: 2, queues: 2})
		data := patterned(int(seed), 4*chunk)
		r.fillBytes(r.send[0], 0, data)
		r.fillBytes(r.recv[1], 0, make([]byte, 4*chunk))
		r.launch(0, 1, 4, func(t *kernel.Thread, sdma *cco.Sdma) {
			l := t.Lane()
			sdma.Put(1, r.recv[0], uint64(l*chunk), r.send[0], uint64(l*chunk), chunk, l%2, cco.SdmaThreadSameQueue)
			sdma.Quiet(1)
		})
		require.NoError(t, r.s.Run(), "seed %d: silent in release", seed)
		got := r.readBytes(r.recv[1], 0, 4*chunk)
		for l := 0; l < 4; l++ {
			want := data[l*chunk : (l+1)*chunk]
			if l%2 == 1 {
				want = make([]byte, chunk) // written into queue 1's ring, never rung
			}
			assert.Equal(t, want, got[l*chunk:(l+1)*chunk], "seed %d lane %d", seed, l)
		}
		// Byte for byte: lane 1's COPY sits in queue 1's ring at the
		// offset lane 1 was given in queue 0's reservation.
		q1, _ := r.node.Queue(0, 1, 1)
		var p ring.Packet
		_, err := q1.Ring().DecodeAt(&p, 32, 32)
		require.NoError(t, err)
		assert.Equal(t, ring.KindCopy, p.Kind)
		assert.Equal(t, uint64(chunk), p.CopyBytes())
		assert.Equal(t, r.recv[0].LsaPtr(1, chunk), p.Dst)
		assert.Equal(t, uint64(0), q1.Ring().CachedWptr(), "queue 1 never reserved anything")
	}
	r := newRig(t, 1, rigOpts{ranks: 2, queues: 2, debug: true})
	r.launch(0, 1, 4, func(t *kernel.Thread, sdma *cco.Sdma) {
		l := t.Lane()
		sdma.Put(1, r.recv[0], uint64(l*chunk), r.send[0], uint64(l*chunk), chunk, l%2, cco.SdmaThreadSameQueue)
	})
	le := trap(t, r.s.Run(), "put", "debug check 3 (SameQueue promise broken)")
	assert.Equal(t, 1, le.Lane, "the first lane whose queue differs")
}

// Row: "receiver sees a signal but stale data" — the signal fired on a
// different queue than the copy.
func TestFailureSignalOnOtherQueue(t *testing.T) {
	const big, tail = 1 << 20, 1<<20 - 128
	for seed := uint64(1); seed <= seeds; seed++ {
		r := newRig(t, seed, rigOpts{ranks: 2, winBytes: big, racy: true})
		r.fillBytes(r.send[0], 0, patterned(3, big))
		var seen []byte
		r.launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
			sdma.Put(1, r.recv[0], 0, r.send[0], 0, big, 0)                     // data on queue 0
			sdma.Put(1, r.recv[0], big-8, r.send[0], 0, 8, 1, cco.RemoteSignal) // signal on queue 1
		})
		r.launch(1, 1, 1, func(_ *kernel.Thread, sdma *cco.Sdma) {
			sdma.WaitSignal(0, 1, 1)
			seen = make([]byte, 64)
			require.NoError(t, r.mem.Read(r.recv[1].LocalPtr(tail), seen))
		})
		require.NoError(t, r.s.Run(), "seed %d", seed)
		// The copy lands chunk by chunk: its last chunk is still to come.
		assert.Equal(t, make([]byte, 64), seen, "seed %d: the signal came first; the big copy's last chunk had not landed", seed)
		assert.Equal(t, patterned(3, big)[tail:tail+64], r.readBytes(r.recv[1], tail, 64), "it lands later")
	}
}

// Row: "a queue stops moving after postWaitMem" — the flag never reaches
// the value, or it is another GPU's memory.
func TestFailurePostWaitMemParks(t *testing.T) {
	for _, tc := range []struct {
		name  string
		flag  func(r *rig) cco.Window
		cause string
	}{
		{"flag never set", func(r *rig) cco.Window { return r.recv[0] }, "never held"},
		{"flag on another GPU", func(r *rig) cco.Window { return r.recv[1] }, "GPU 1's memory, not the queue's GPU 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for seed := uint64(1); seed <= seeds; seed++ {
				r := newRig(t, seed, rigOpts{ranks: 2})
				r.launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
					sdma.PostWaitMem(1, 0, tc.flag(r), 0x100, 1, cco.SdmaCmpEq, 0xffffffff)
					sdma.Put(1, r.recv[0], 0, r.send[0], 0, 8, 0)
					sdma.QuietQueue(1, 0)
				})
				hang(t, r.s.Run(), cco.RowPostWaitMem, tc.cause)
			}
			r := newRig(t, 1, rigOpts{ranks: 2, debug: true})
			r.launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
				sdma.PostWaitMem(1, 0, tc.flag(r), 0x100, 1, cco.SdmaCmpEq, 0xffffffff)
				sdma.QuietQueue(1, 0)
			})
			err := r.s.Run()
			if tc.name == "flag on another GPU" {
				trap(t, err, "postWaitMem", "not this GPU's")
			} else {
				hang(t, err, cco.RowPostWaitMem) // a legal wait: debug cannot know
			}
		})
	}
}

// Row: "postWaitSignal releases too early" — expected ≥ 2^32 is truncated.
func TestFailurePostWaitSignalTruncated(t *testing.T) {
	for seed := uint64(1); seed <= seeds; seed++ {
		r := newRig(t, seed, rigOpts{ranks: 2})
		slot, err := r.dcs[0].SignalPool().Slot(1, 0)
		require.NoError(t, err)
		require.NoError(t, r.mem.Store64(slot, 100))
		r.fillBytes(r.send[0], 0, patterned(5, 16))
		r.launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
			sdma.PostWaitSignal(1, 1, 1, 0, 1<<32+5) // waits for low32 ≥ 5
			sdma.Put(1, r.recv[0], 0, r.send[0], 0, 16, 1)
			sdma.QuietQueue(1, 1)
		})
		require.NoError(t, r.s.Run(), "seed %d", seed)
		assert.Equal(t, patterned(5, 16), r.readBytes(r.recv[1], 0, 16), "released at 100 < 2^32+5")
	}
	r := newRig(t, 1, rigOpts{ranks: 2, debug: true})
	r.launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) { sdma.PostWaitSignal(1, 1, 1, 0, 1<<32+5) })
	trap(t, r.s.Run(), "postWaitSignal", "2^32 or more")
}

// The seed's broadcast rule: destinations not congruent mod 32 shift the
// second copy (release) or trap (debug).
func TestFailureBroadcastMisaligned(t *testing.T) {
	const n = 64
	for seed := uint64(1); seed <= seeds; seed++ {
		r := newRig(t, seed, rigOpts{ranks: 3})
		data := patterned(9, n)
		r.fillBytes(r.send[0], 0, data)
		r.launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
			sdma.PutBroadcast(1, r.recv[0], 0, 2, r.recv[0], 8, r.send[0], 0, n, 0)
			sdma.QuietQueue(1, 0)
		})
		require.NoError(t, r.s.Run(), "seed %d", seed)
		assert.Equal(t, data, r.readBytes(r.recv[1], 0, n), "the first destination is right")
		// dst2 = base+8 is not congruent with dst1 = base+0: the stream
		// lands at (dst2 &^ 31) + (dst1 & 31) = base+0 on GPU 2.
		assert.Equal(t, data, r.readBytes(r.recv[2], 0, n), "shifted by 8 bytes")
		assert.NotEqual(t, data, r.readBytes(r.recv[2], 8, n), "not where it was asked for")
	}
	r := newRig(t, 1, rigOpts{ranks: 3, debug: true})
	r.launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.PutBroadcast(1, r.recv[0], 0, 2, r.recv[0], 8, r.send[0], 0, n, 0)
	})
	trap(t, r.s.Run(), "putBroadcast", "not congruent mod 32")
}

// Emulator extra [inferred]: an out-of-range peer stops the kernel naming
// the call, in release too (hardware faults on the null queue handle).
func TestOutOfRangePeer(t *testing.T) {
	r := newRig(t, 1, rigOpts{ranks: 2})
	r.launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.Put(5, r.recv[0], 0, r.send[0], 0, 8, 0)
	})
	trap(t, r.s.Run(), "put", "peer 5 outside the LSA ranks [0, 2)")
}

// The deadlock the grouping exists for is reported with the chain.
func TestHangReportJSONNamesCause(t *testing.T) {
	r := newRig(t, 1, rigOpts{ranks: 2})
	r.launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.Put(1, r.recv[0], 0, r.send[0], 0, 8, 0, cco.SdmaOptFlagsAggregate)
		sdma.Put(1, r.recv[0], 0, r.send[0], 0, 8, 0)
	})
	err := r.s.Run()
	var h *sim.HangError
	require.True(t, errors.As(err, &h))
	js, jerr := h.JSON()
	require.NoError(t, jerr)
	assert.Contains(t, string(js), "aggregate puts were never committed")
}

// Emulator debug extra [inferred]: overlapping source and destination trap
// under debug; in release the engine reports a COPY_OVERLAP event and moves
// the bytes with memmove semantics.
func TestDebugOverlap(t *testing.T) {
	r := newRig(t, 1, rigOpts{ranks: 2, debug: true})
	r.launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.PutPtr(0, r.send[0].LocalPtr(8), r.send[0].LocalPtr(0), 64, 0)
	})
	trap(t, r.s.Run(), "putPtr", "overlap")

	r = newRig(t, 1, rigOpts{ranks: 2})
	r.fillBytes(r.send[0], 0, patterned(1, 72))
	r.launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.PutPtr(0, r.send[0].LocalPtr(8), r.send[0].LocalPtr(0), 64, 0)
		sdma.QuietQueue(0, 0)
	})
	require.NoError(t, r.s.Run())
	assert.Equal(t, patterned(1, 64), r.readBytes(r.send[0], 8, 64), "memmove semantics")
	require.NotEmpty(t, r.node.Faults())
	assert.Equal(t, "COPY_OVERLAP", string(r.node.Faults()[0].Kind))
}
