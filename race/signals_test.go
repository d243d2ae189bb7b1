package race

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// slotWorld is a slot at address 0 with its value, producers and waiters.
type slotWorld struct {
	*world
	v uint64
}

// sig is producer t's add of 1 to the slot, then its release into it.
func (s *slotWorld) sig(t *Thread, who string) {
	s.now++
	before := s.v
	s.v++
	in := &Info{Kind: KindSDMA, OpKind: OpPacket, Who: who, Op: "ATOMIC write"}
	s.d.Access(t, s.sp, 0, 8, Access{Info: in, Write: true, Atomic: true})
	s.d.Signal(t, s.sp, 0, 8, before, s.v, 1, in)
	t.Release(s.d.AddrSync(s.sp, 0))
}

// wait is waiter t's wait for slot ≥ expected holding now, then its acquire.
func (s *slotWorld) wait(t *Thread, expected uint64) {
	s.now++
	s.d.WaitHeld(t, s.sp, 0, "wait", -1, expected, ^uint64(0))
	t.Acquire(s.d.AddrSync(s.sp, 0))
}

// waitLane is lane's wait, of waiter t's wave, for slot ≥ expected
// holding now, then its acquire.
func (s *slotWorld) waitLane(t *Thread, lane int, expected uint64) {
	s.now++
	s.d.WaitHeld(t, s.sp, 0, "wait", lane, expected, ^uint64(0))
	t.Acquire(s.d.AddrSync(s.sp, 0))
}

// read is thread t's read of the slot (a baseline), then its acquire.
func (s *slotWorld) read(t *Thread) {
	s.now++
	s.d.SignalRead(t, s.sp, 0, s.v, &Info{Kind: KindLane, OpKind: OpLane, Who: "reader", Op: "readSignal"})
	t.Acquire(s.d.AddrSync(s.sp, 0))
}

// reset is thread t's plain store of 0 to the slot (a lane or host store,
// a memset), seen by the detector.
func (s *slotWorld) reset(t *Thread) {
	s.now++
	s.v = 0
	s.d.Access(t, s.sp, 0, 8, Access{Info: &Info{Kind: KindLane, OpKind: OpLane, Who: "resetter", Op: "store"}, Write: true})
}

// resetUnseen is a store of 0 the detector does not see (lane code built
// without instrumentation): only the next signal's before value shows it.
func (s *slotWorld) resetUnseen() { s.v = 0 }

// atomicReset is thread t's atomic store of 0 (an exchange), a signal
// that takes the value back.
func (s *slotWorld) atomicReset(t *Thread) {
	s.now++
	before := s.v
	s.v = 0
	s.d.Signal(t, s.sp, 0, 8, before, 0, 0, &Info{Kind: KindLane, OpKind: OpLane, Who: "resetter", Op: "atomic store"})
	t.Release(s.d.AddrSync(s.sp, 0))
}

// ack orders everything from before on thread from before everything
// thread to does next (a barrier, a signal the other waits for).
func (s *slotWorld) ack(from, to *Thread) {
	from.Release(s.d.AddrSync(s.sp, 1))
	to.Acquire(s.d.AddrSync(s.sp, 1))
}

// The shared-slot, stale-epoch and baseline-read checks, and each case's
// correct twin.
func TestSlotEpochs(t *testing.T) {
	for _, tc := range []struct {
		name  string
		run   func(s *slotWorld, p, q, w *Thread)
		class string // "" for no finding
	}{
		{"two unordered producers, a wait for 1 then 2", func(s *slotWorld, p, q, w *Thread) {
			s.sig(p, "producer p")
			s.wait(w, 1)
			s.sig(q, "producer q")
			s.wait(w, 2)
		}, ClassSharedSlot},
		{"two unordered producers, both in before a wait for 1", func(s *slotWorld, p, q, w *Thread) {
			s.sig(p, "producer p")
			s.sig(q, "producer q")
			s.wait(w, 1)
		}, ClassSharedSlot},
		{"twin: one producer's two signals in before a wait for 1", func(s *slotWorld, p, q, w *Thread) {
			s.sig(p, "producer p")
			s.sig(p, "producer p")
			s.wait(w, 1)
		}, ""},
		{"twin: one producer's running total", func(s *slotWorld, p, q, w *Thread) {
			s.sig(p, "producer p")
			s.wait(w, 1)
			s.sig(p, "producer p")
			s.wait(w, 2)
		}, ""},
		{"twin: the second producer ordered after the first's signal and the wait", func(s *slotWorld, p, q, w *Thread) {
			s.sig(p, "producer p")
			s.wait(w, 1)
			w.Release(s.d.AddrSync(s.sp, 1)) // an ack
			q.Acquire(s.d.AddrSync(s.sp, 1))
			s.sig(q, "producer q")
			s.wait(w, 2)
		}, ""},
		{"twin: one wait for both producers' total", func(s *slotWorld, p, q, w *Thread) {
			s.sig(p, "producer p")
			s.sig(q, "producer q")
			s.wait(w, 2)
		}, ""},
		{"a second epoch waits for the first epoch's total", func(s *slotWorld, p, q, w *Thread) {
			s.sig(p, "epoch 1")
			s.wait(w, 1)
			q.Acquire(s.d.AddrSync(s.sp, 0)) // epoch 2's producer starts after epoch 1's
			s.wait(w, 1)
			s.sig(q, "epoch 2")
		}, ClassStaleEpoch},
		{"a second epoch waits for the first epoch's total, its signal already in", func(s *slotWorld, p, q, w *Thread) {
			s.sig(p, "epoch 1")
			q.Acquire(s.d.AddrSync(s.sp, 0))
			s.sig(q, "epoch 2")
			s.wait(w, 1)
			s.wait(w, 1)
		}, ClassStaleEpoch},
		// A wave's lanes need not reach a wait together (HIP C++ lanes
		// under perturbation): a later lane's wait is the same epoch's
		// wait, even after the next epoch's producer signalled.
		{"twin: a wave's second lane waits for the epoch after the next epoch's signal", func(s *slotWorld, p, q, w *Thread) {
			s.sig(p, "epoch 1")
			s.waitLane(w, 0, 1)
			q.Acquire(s.d.AddrSync(s.sp, 0))
			s.sig(q, "epoch 2")
			s.waitLane(w, 1, 1)
		}, ""},
		{"twin: every lane of a wave waits for one epoch, one after another", func(s *slotWorld, p, q, w *Thread) {
			s.sig(p, "epoch 1")
			for lane := 0; lane < 64; lane++ {
				s.waitLane(w, lane, 1)
			}
			q.Acquire(s.d.AddrSync(s.sp, 0))
			s.sig(q, "epoch 2")
			for lane := 0; lane < 64; lane++ {
				s.waitLane(w, lane, 2)
			}
		}, ""},
		{"a lane waits for the first epoch's total again", func(s *slotWorld, p, q, w *Thread) {
			s.sig(p, "epoch 1")
			s.waitLane(w, 0, 1)
			s.waitLane(w, 1, 1)
			q.Acquire(s.d.AddrSync(s.sp, 0))
			s.sig(q, "epoch 2")
			s.waitLane(w, 0, 1)
		}, ClassStaleEpoch},
		{"twin: the second epoch waits for the running total", func(s *slotWorld, p, q, w *Thread) {
			s.sig(p, "epoch 1")
			s.wait(w, 1)
			q.Acquire(s.d.AddrSync(s.sp, 0))
			s.sig(q, "epoch 2")
			s.wait(w, 2)
		}, ""},
		{"twin: a wait that takes two signals at once, then the next round's", func(s *slotWorld, p, q, w *Thread) {
			s.sig(p, "producer p")
			s.sig(p, "producer p")
			s.wait(w, 1)
			s.wait(w, 2) // decided by the second signal, which the first wait took early
			s.sig(p, "producer p")
			s.wait(w, 3)
		}, ""},
		{"a baseline read before an unordered signal, a wait for one more", func(s *slotWorld, p, q, w *Thread) {
			s.read(w)
			s.sig(p, "producer p")
			s.wait(w, 1)
		}, ClassBaselineRead},
		{"a baseline read that counted an unordered signal, a wait for one more", func(s *slotWorld, p, q, w *Thread) {
			s.sig(p, "producer p")
			s.read(w)
			s.ack(w, q)
			s.sig(q, "producer q")
			s.wait(w, 2)
		}, ClassBaselineRead},
		{"twin: the baseline read ordered before the producer's post", func(s *slotWorld, p, q, w *Thread) {
			s.read(w)
			s.ack(w, p)
			s.sig(p, "producer p")
			s.wait(w, 1)
		}, ""},
		{"twin: a baseline read after the wait that took the signal", func(s *slotWorld, p, q, w *Thread) {
			s.sig(p, "producer p")
			s.wait(w, 1)
			s.read(w)
			s.ack(w, q)
			s.sig(q, "producer q")
			s.wait(w, 2)
		}, ""},
		{"twin: a reset after the last wait, ordered before the next epoch's signal", func(s *slotWorld, p, q, w *Thread) {
			s.sig(p, "epoch 1")
			s.wait(w, 1)
			s.reset(w)
			s.ack(w, q)
			s.sig(q, "epoch 2")
			s.wait(w, 1)
		}, ""},
		{"twin: a reset the detector did not see, then the next epoch", func(s *slotWorld, p, q, w *Thread) {
			s.sig(p, "epoch 1")
			s.wait(w, 1)
			s.resetUnseen()
			s.ack(w, q)
			s.sig(q, "epoch 2")
			s.wait(w, 1)
		}, ""},
		{"twin: an atomic reset, then the next epoch", func(s *slotWorld, p, q, w *Thread) {
			s.sig(p, "epoch 1")
			s.wait(w, 1)
			s.atomicReset(w)
			s.ack(w, q)
			s.sig(q, "epoch 2")
			s.wait(w, 1)
		}, ""},
		{"a reset racing the next epoch's signal", func(s *slotWorld, p, q, w *Thread) {
			s.sig(p, "epoch 1")
			s.wait(w, 1)
			q.Acquire(s.d.AddrSync(s.sp, 0))
			s.sig(q, "epoch 2") // not ordered after the reset
			s.reset(w)
		}, ClassStoreOverSignal},
		{"twin: a read the wait does not count from", func(s *slotWorld, p, q, w *Thread) {
			s.sig(p, "producer p")
			s.read(w)
			s.wait(w, 1)
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &slotWorld{world: newWorld()}
			tc.run(s, s.a, s.b, s.d.NewThread("waiter"))
			var got []string
			for _, r := range s.d.Reports() {
				got = append(got, r.Class)
			}
			if tc.class == "" {
				assert.Empty(t, got)
				return
			}
			require.Equal(t, []string{tc.class}, got)
			r := s.d.Reports()[0]
			assert.NotEqual(t, r.First.Who, r.Second.Who, "the report names both producers or epochs")
		})
	}
}

// An add that takes the counter past 2^64 is a wrap; a decrement (ROCr's
// completion signal adds ^0) is not.
func TestCounterWrap(t *testing.T) {
	w := newWorld()
	in := &Info{Kind: KindSDMA, Who: "sdma q0", Op: "ATOMIC write"}
	w.d.Signal(w.a, w.sp, 0, 8, 1, 0, -1, in)
	assert.Empty(t, w.d.Reports(), "a decrement")
	w.d.Signal(w.a, w.sp, 8, 8, ^uint64(0), 0, 1, in)
	require.Len(t, w.d.Reports(), 1)
	r := w.d.Reports()[0]
	assert.Equal(t, ClassWrap, r.Class)
	assert.Contains(t, r.Missing, "a wrap past 2^64")
}

// Words for how two producers differ.
func TestDiffer(t *testing.T) {
	mk := func(who, poster string) *sigEv {
		i := &Info{Who: who}
		if poster != "" {
			i.Poster = stringer(poster)
		}
		return &sigEv{info: i}
	}
	for _, tc := range []struct {
		a, b *sigEv
		want string
	}{
		{mk("q0", `kernel "a" GPU 0 block 0 wave 0 lane 0`), mk("q0", `kernel "b" GPU 0 block 0 wave 0 lane 0`), "two kernels"},
		{mk("q0", `kernel "a" GPU 0 block 0 wave 0 lane 0`), mk("q0", `kernel "a" GPU 0 block 1 wave 0 lane 0`), "two thread blocks"},
		{mk("q0", `kernel "a" GPU 0 block 0 wave 0 lane 0`), mk("q1", `kernel "a" GPU 0 block 0 wave 0 lane 0`), "two queues, posted by one poster"},
		{mk("host a", ""), mk("engine b", ""), "two producers"},
		{mk("q0", `kernel "a" GPU 0 block 0 wave 0 lane 0`), mk("q0", `kernel "a" GPU 0 block 0 wave 0 lane 0`), "two launches or instances of the same code"},
	} {
		assert.Equal(t, tc.want, differ(tc.a, tc.b))
	}
}

type stringer string

func (s stringer) String() string { return string(s) }

// A run's findings print the cause first: a stale epoch found after a data
// race (the read the early wait let through) comes before it, and the
// detector's own list stays in the order found.
func TestErrLeadsWithTheCause(t *testing.T) {
	s := &slotWorld{world: newWorld()}
	p, q, w := s.a, s.b, s.d.NewThread("waiter")
	s.d.Access(p, s.sp, 64, 72, Access{Info: &Info{Kind: KindSDMA, OpKind: OpPacket, Who: "sdma q0", Op: "COPY destination write"}, Write: true})
	s.d.Access(w, s.sp, 64, 72, Access{Info: &Info{Kind: KindLane, OpKind: OpLane, Who: "reader", Op: "load"}})
	s.sig(p, "epoch 1")
	s.wait(w, 1)
	q.Acquire(s.d.AddrSync(s.sp, 0))
	s.wait(w, 1)
	s.sig(q, "epoch 2")
	require.Len(t, s.d.Reports(), 2)
	assert.Equal(t, "", s.d.Reports()[0].Class, "found first: the data race")
	var e *Error
	require.ErrorAs(t, s.d.Err(), &e)
	assert.Equal(t, []string{ClassStaleEpoch, ""}, []string{e.Reports[0].Class, e.Reports[1].Class})
}
