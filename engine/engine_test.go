package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/emud-dev/emud/internal/testmain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/issuer"
	"github.com/emud-dev/emud/model"
	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
)

func TestMain(m *testing.M) { testmain.Run(m) }

func TestCopyMovesBytesAndSignalFollows(t *testing.T) {
	r := newRig(t, 1, Config{GPUs: 2})
	src, dst, sig := r.alloc(0, 4096), r.alloc(1, 4096), r.alloc(1, 64)
	data := pattern(1000, 3)
	require.NoError(t, r.n.Memory().Write(src, data))
	q := r.queue(0, 1, 0)
	var seenAt sim.Time
	r.s.Spawn("sender", func(a *sim.Actor) {
		require.NoError(t, post(a, q, ring.Copy(dst+24, src, 1000), ring.AtomicAdd64(sig, 1)))
	})
	r.s.Spawn("receiver", func(a *sim.Actor) {
		r.n.Memory().Await(a, sig, 8, func() bool { v, _ := r.n.Memory().Load64(sig); return v >= 1 },
			func() string { return "signal" })
		seenAt = a.Now()
		got := make([]byte, 1000)
		require.NoError(t, r.n.Memory().Read(dst+24, got))
		assert.Equal(t, data, got, "signal implies the data landed")
	})
	require.NoError(t, r.s.Run())
	assert.Greater(t, seenAt, sim.Time(0))
	assert.Equal(t, q.Ring().CommittedWptr(), q.Ring().Rptr())
	assert.Equal(t, "idle", q.State())
}

func TestBroadcast(t *testing.T) {
	for _, tc := range []struct {
		name       string
		off1, off2 uint64
	}{
		{"congruent", 64, 160},     // both ≡ 0 mod 32
		{"congruent-odd", 70, 102}, // both ≡ 6
		{"misaligned", 64, 200},    // 0 vs 8: second stream lands 8 B early
		{"misaligned-late", 95, 128},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, 1, Config{GPUs: 3})
			src, d1, d2 := r.alloc(0, 4096), r.alloc(1, 4096), r.alloc(2, 4096)
			data := pattern(256, 9)
			require.NoError(t, r.n.Memory().Write(src, data))
			require.NoError(t, r.n.Memory().Fill(d2, 4096, 0xEE))
			q := r.queue(0, 1, 0)
			r.s.Spawn("k", func(a *sim.Actor) {
				base, err := q.Reserve(a, 3*ring.Unit)
				require.NoError(t, err)
				p := ring.Broadcast(d1+tc.off1, d2+tc.off2, src, 256)
				_, err = q.WriteBroadcast(base, &p)
				require.NoError(t, err)
				require.NoError(t, q.Submit(a, base, base+3*ring.Unit))
				q.AwaitDrained(a, q.QuietTarget())
			})
			require.NoError(t, r.s.Run())
			got1 := make([]byte, 256)
			require.NoError(t, r.n.Memory().Read(d1+tc.off1, got1))
			assert.Equal(t, data, got1, "first destination is always right")

			mem2 := make([]byte, 4096)
			require.NoError(t, r.n.Memory().Read(d2, mem2))
			landed := (tc.off2 &^ 31) | (tc.off1 & 31)
			assert.Equal(t, data, mem2[landed:landed+256], "second stream lands at (dst2&^31)+(dst1&31)")
			if landed == tc.off2 {
				return
			}
			assert.NotEqual(t, data, mem2[tc.off2:tc.off2+256], "dst2's range is wrong")
			lo, hi := min(landed, tc.off2), max(landed, tc.off2)
			clobbered := 0
			for i := lo; i < hi; i++ {
				inDst := i >= tc.off2 && i < tc.off2+256
				if !inDst && mem2[i] != 0xEE {
					clobbered++
				}
			}
			for i := tc.off2 + 256; i < landed+256; i++ {
				if mem2[i] != 0xEE {
					clobbered++
				}
			}
			assert.Positive(t, clobbered, "bytes next to dst2 are overwritten")
			assert.LessOrEqual(t, clobbered, 31)
		})
	}
}

func TestAtomicOps(t *testing.T) {
	for _, tc := range []struct {
		op        ring.AtomicOp
		old, src  uint64
		cmp, want uint64
	}{
		{ring.AtomicOpAdd64, 5, 1, 0, 6},
		{ring.AtomicOpAdd64, ^uint64(0), 2, 0, 1}, // wraps mod 2^64
		{ring.AtomicOpAdd64NoRtn, 5, 3, 0, 8},
		{ring.AtomicOpSub64, 5, 7, 0, ^uint64(1)},
		{ring.AtomicOpSwap64, 5, 9, 0, 9},
		{ring.AtomicOpCmpSwap64, 5, 9, 5, 9},
		{ring.AtomicOpCmpSwap64, 5, 9, 4, 5},
		{ring.AtomicOpUMax64, 5, 9, 0, 9},
		{ring.AtomicOpSMax64, 5, ^uint64(0), 0, 5},
		{ring.AtomicOpSMin64, 5, ^uint64(0), 0, ^uint64(0)},
		{ring.AtomicOpUMin64, 5, ^uint64(0), 0, 5},
		{ring.AtomicOpAnd64, 0xff, 0x0f, 0, 0x0f},
		{ring.AtomicOpOr64, 0xf0, 0x0f, 0, 0xff},
		{ring.AtomicOpXor64, 0xff, 0x0f, 0, 0xf0},
		{ring.AtomicOpInc64, 3, 10, 0, 4},
		{ring.AtomicOpInc64, 10, 10, 0, 0},
		{ring.AtomicOpDec64, 0, 10, 0, 10},
		{ring.AtomicOpDec64, 4, 10, 0, 3},
		{ring.AtomicOpAdd32, 0x1_ffff_ffff, 1, 0, 0x1_0000_0000}, // 32-bit: the high word is untouched
	} {
		t.Run(tc.op.String(), func(t *testing.T) {
			r := newRig(t, 1, Config{GPUs: 1})
			addr := r.alloc(0, 64)
			require.NoError(t, r.n.Memory().Store64(addr, tc.old))
			q := r.queue(0, 0, 0)
			p := ring.AtomicAdd64(addr, tc.src)
			p.AtomicOp, p.Cmp = tc.op, tc.cmp
			r.s.Spawn("k", func(a *sim.Actor) { require.NoError(t, post(a, q, p)) })
			require.NoError(t, r.s.Run())
			got, _ := r.n.Memory().Load64(addr)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestFenceTrapTimestampWriteNopFill(t *testing.T) {
	r := newRig(t, 1, Config{GPUs: 1})
	buf := r.alloc(0, 4096)
	require.NoError(t, r.n.Memory().Fill(buf, 4096, 0xAA))
	q := r.queue(0, 0, 0)
	r.s.Spawn("k", func(a *sim.Actor) {
		a.Sleep(5 * sim.Microsecond)
		require.NoError(t, post(a, q,
			ring.Fence(buf, 0xCAFEF00D),
			ring.Trap(0x1234),
			ring.Nop(3),
			ring.TimestampGlobal(buf+64),
			ring.WriteLinear(buf+128, []uint32{1, 2, 3}),
		))
		q.AwaitDrained(a, q.QuietTarget())
	})
	require.NoError(t, r.s.Run())
	mem := r.n.Memory()
	v32, _ := mem.Load32(buf)
	assert.Equal(t, uint32(0xCAFEF00D), v32)
	v32, _ = mem.Load32(buf + 4)
	assert.Equal(t, uint32(0xAAAAAAAA), v32, "FENCE writes exactly 32 bits")
	ts, _ := mem.Load64(buf + 64)
	// 100 MHz counter: the packet ran after 5 µs + doorbell latency + 3 packets.
	assert.Greater(t, ts, uint64(500), "timestamp counts virtual time at 100 MHz")
	assert.Less(t, ts, uint64(r.s.Now()/(10*sim.Nanosecond))+1)
	for i, want := range []uint32{1, 2, 3, 0xAAAAAAAA} {
		v, _ := mem.Load32(buf + 128 + uint64(4*i))
		assert.Equal(t, want, v, "WRITE dword %d", i)
	}
	var traps []Fault
	for _, f := range r.n.Faults() {
		if f.Kind == FaultTrap {
			traps = append(traps, f)
		}
	}
	require.Len(t, traps, 1)
	assert.Equal(t, uint32(0x1234), traps[0].Context)
	assert.False(t, traps[0].Halts)
}

func TestConstFill(t *testing.T) {
	r := newRig(t, 1, Config{GPUs: 1})
	buf := r.alloc(0, 4096)
	q := r.queue(0, 0, 0)
	var raw [20]byte
	binary.LittleEndian.PutUint32(raw[0:], uint32(ring.OpConstFill)|2<<30)
	binary.LittleEndian.PutUint32(raw[4:], uint32(buf))
	binary.LittleEndian.PutUint32(raw[8:], uint32(buf>>32))
	binary.LittleEndian.PutUint32(raw[12:], 0x01020304)
	binary.LittleEndian.PutUint32(raw[16:], 15) // 16 bytes
	r.s.Spawn("k", func(a *sim.Actor) {
		base, err := q.Reserve(a, ring.Unit)
		require.NoError(t, err)
		q.Ring().Write(base, append(raw[:], make([]byte, 12)...))
		require.NoError(t, q.Submit(a, base, base+ring.Unit))
	})
	require.NoError(t, r.s.Run())
	for i := range 5 {
		v, _ := r.n.Memory().Load32(buf + uint64(4*i))
		if i < 4 {
			assert.Equal(t, uint32(0x01020304), v, "dword %d", i)
		} else {
			assert.Zero(t, v, "fill stops after count+1 bytes")
		}
	}
}

func TestPollParksUntilFlag(t *testing.T) {
	for f := ring.CmpAlways; f <= ring.CmpGT; f++ {
		t.Run(f.String(), func(t *testing.T) {
			r := newRig(t, uint64(f), Config{GPUs: 2})
			flag, src, dst := r.alloc(0, 64), r.alloc(0, 4096), r.alloc(1, 4096)
			require.NoError(t, r.n.Memory().Store32(flag, 100))
			require.NoError(t, r.n.Memory().Write(src, pattern(64, 1)))
			// ref chosen so the condition is false at 100 and true at 205.
			ref := map[ring.CompareFunc]uint32{ring.CmpAlways: 0, ring.CmpLT: 100, ring.CmpLE: 99, ring.CmpEQ: 205,
				ring.CmpNE: 100, ring.CmpGE: 200, ring.CmpGT: 200}[f]
			if f == ring.CmpLT || f == ring.CmpLE {
				require.NoError(t, r.n.Memory().Store32(flag, 205)) // false at 205 for <, <=; true at 5
			}
			q := r.queue(0, 1, 0)
			var copied sim.Time
			r.s.Spawn("poster", func(a *sim.Actor) {
				require.NoError(t, post(a, q, ring.Poll(flag, ref, 0xFFFF, f, 4, ring.RetryForever), ring.Copy(dst, src, 64)))
				q.AwaitDrained(a, q.QuietTarget())
				copied = a.Now()
			})
			r.s.Spawn("setter", func(a *sim.Actor) {
				a.Sleep(50 * sim.Microsecond)
				v := uint32(205 | 0xABC0000) // high bits masked off
				if f == ring.CmpLT || f == ring.CmpLE {
					v = 5
				}
				require.NoError(t, r.n.Memory().Store32(flag, v))
			})
			require.NoError(t, r.s.Run())
			got := make([]byte, 64)
			require.NoError(t, r.n.Memory().Read(dst, got))
			assert.Equal(t, pattern(64, 1), got)
			if f == ring.CmpAlways {
				assert.Less(t, copied, 50*sim.Microsecond, "always-true poll never parks")
			} else {
				assert.Greater(t, copied, 50*sim.Microsecond, "the copy waited for the flag")
			}
		})
	}
}

func TestPollTimeoutContinuesOrHalts(t *testing.T) {
	for _, pol := range []PollTimeoutPolicy{PollTimeoutContinue, PollTimeoutHalt} {
		t.Run(fmt.Sprint(pol), func(t *testing.T) {
			r := newRig(t, 1, Config{GPUs: 1, PollTimeout: pol, KeepGoingOnFault: true})
			flag, sig := r.alloc(0, 64), r.alloc(0, 64)
			q := r.queue(0, 0, 0)
			r.s.Spawn("k", func(a *sim.Actor) {
				require.NoError(t, post(a, q, ring.Poll(flag, 1, ^uint32(0), ring.CmpEQ, 10, 3), ring.AtomicAdd64(sig, 1)))
			})
			err := r.s.Run()
			var to []Fault
			for _, f := range r.n.Faults() {
				if f.Kind == FaultPollTimeout && !f.Halts {
					to = append(to, f)
				}
			}
			require.Len(t, to, 1)
			assert.Contains(t, to[0].Detail, "failed 4 reads")
			// 4 reads at 0, 1, 2, 3 intervals of 10 × 100 ns after the poll started.
			v, _ := r.n.Memory().Load64(sig)
			if pol == PollTimeoutContinue {
				require.NoError(t, err)
				assert.Equal(t, uint64(1), v, "the queue went on to the next packet")
			} else {
				var h *sim.HangError
				require.ErrorAs(t, err, &h, "a halted queue with rung work is a hang")
				assert.Zero(t, v)
				assert.Equal(t, "halted", q.State())
			}
		})
	}
}

func TestPollMissesAFlagThatFlipsBackBetweenReads(t *testing.T) {
	r := newRig(t, 1, Config{GPUs: 1})
	flag, sig := r.alloc(0, 64), r.alloc(0, 64)
	q := r.queue(0, 0, 0)
	r.s.Spawn("k", func(a *sim.Actor) {
		// interval 100 × 100 ns = 10 µs between reads.
		require.NoError(t, post(a, q, ring.Poll(flag, 1, ^uint32(0), ring.CmpEQ, 100, ring.RetryForever), ring.AtomicAdd64(sig, 1)))
		a.Sleep(4 * sim.Microsecond) // engine is parked by now (doorbell latency 3 µs + first read)
		require.NoError(t, r.n.Memory().Store32(flag, 1))
		a.Sleep(1 * sim.Microsecond) // flips back long before the next read
		require.NoError(t, r.n.Memory().Store32(flag, 0))
	})
	err := r.s.Run()
	var h *sim.HangError
	require.ErrorAs(t, err, &h)
	assert.Contains(t, h.Text(), "parked on POLL_REGMEM")
	assert.Contains(t, h.Text(), "value now 0")
}

func TestFaultsNameQueuePacketAndAddress(t *testing.T) {
	r := newRig(t, 1, Config{GPUs: 2})
	src := r.alloc(0, 4096)
	bad := r.n.Memory().SliceBase(1) + 0x10_0000 // in GPU 1's slice, never allocated
	q := r.queue(0, 1, 2)
	r.s.Spawn("k", func(a *sim.Actor) { require.NoError(t, post(a, q, ring.Copy(bad, src, 64))) })
	err := r.s.Run()
	var f *Fault
	require.ErrorAs(t, err, &f)
	assert.Equal(t, FaultVMHole, f.Kind)
	assert.Equal(t, QueueID{GPU: 0, Peer: 1, Q: 2}, f.Queue)
	assert.Equal(t, bad, f.Addr)
	assert.Contains(t, err.Error(), "sdma gpu0→gpu1 q2")
	assert.Contains(t, err.Error(), "COPY_LINEAR")
	assert.Contains(t, err.Error(), fmt.Sprintf("%#x", bad))
	assert.Contains(t, err.Error(), "VM hole in GPU 1's slice")
	assert.Equal(t, "halted", q.State())
	assert.Zero(t, q.Ring().Rptr(), "rptr stays on the faulting packet")
}

func TestIllegalPacketFaults(t *testing.T) {
	for _, tc := range []struct {
		name string
		dw   []uint32
		want string
	}{
		{"unknown op", []uint32{0x3f}, "op"},
		{"indirect", []uint32{4, 0, 0, 0, 0, 0}, "INDIRECT"},
		{"poll func 7", []uint32{0xF0000008, 0, 0, 0, 0, 0}, "compare"},
		{"register poll", []uint32{0x30000008, 0, 0, 0, 0, 0}, "register"},
		{"timestamp set", []uint32{0x0000000D, 0, 0}, "TIMESTAMP set"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, 1, Config{GPUs: 1})
			q := r.queue(0, 0, 0)
			r.s.Spawn("k", func(a *sim.Actor) {
				base, err := q.Reserve(a, ring.Unit)
				require.NoError(t, err)
				b := make([]byte, ring.Unit)
				for i, d := range tc.dw {
					binary.LittleEndian.PutUint32(b[4*i:], d)
				}
				q.Ring().Write(base, b)
				require.NoError(t, q.Submit(a, base, base+ring.Unit))
			})
			err := r.s.Run()
			var f *Fault
			require.ErrorAs(t, err, &f)
			assert.Equal(t, FaultIllegal, f.Kind, f.Error())
			assert.Contains(t, f.Error(), tc.want)
			assert.Contains(t, f.Error(), "ring offset 0x0")
		})
	}
}

func TestMisalignedAtomicFaults(t *testing.T) {
	r := newRig(t, 1, Config{GPUs: 1})
	buf := r.alloc(0, 64)
	q := r.queue(0, 0, 0)
	r.s.Spawn("k", func(a *sim.Actor) { require.NoError(t, post(a, q, ring.AtomicAdd64(buf+4, 1))) })
	var f *Fault
	require.ErrorAs(t, r.s.Run(), &f)
	assert.Equal(t, FaultMisaligned, f.Kind)
}

func TestStalledPartialPacketIsReported(t *testing.T) {
	r := newRig(t, 1, Config{GPUs: 1})
	buf := r.alloc(0, 4096)
	q := r.queue(0, 0, 0)
	r.s.Spawn("k", func(a *sim.Actor) {
		// A broadcast is 36 B: ring only the first unit of its three.
		base, err := q.Reserve(a, 3*ring.Unit)
		require.NoError(t, err)
		p := ring.Broadcast(buf, buf+1024, buf+2048, 64)
		at, err := q.WriteBroadcast(base, &p)
		require.NoError(t, err)
		require.Equal(t, base, at)
		require.NoError(t, q.Submit(a, base, base+ring.Unit))
	})
	var h *sim.HangError
	require.ErrorAs(t, r.s.Run(), &h)
	assert.Equal(t, "stalled", q.State())
	assert.Contains(t, h.Text(), "stops inside the packet")
	assert.Contains(t, h.Text(), "truncated")
}

func TestCopyOverlapIsReported(t *testing.T) {
	r := newRig(t, 1, Config{GPUs: 1})
	buf := r.alloc(0, 4096)
	require.NoError(t, r.n.Memory().Write(buf, pattern(256, 0)))
	q := r.queue(0, 0, 0)
	r.s.Spawn("k", func(a *sim.Actor) { require.NoError(t, post(a, q, ring.Copy(buf+16, buf, 128))) })
	require.NoError(t, r.s.Run())
	require.Len(t, r.n.Faults(), 1)
	assert.Equal(t, FaultCopyOverlap, r.n.Faults()[0].Kind)
	got := make([]byte, 128)
	require.NoError(t, r.n.Memory().Read(buf+16, got))
	assert.Equal(t, pattern(256, 0)[:128], got, "memmove semantics")
}

func TestQueueArgumentErrors(t *testing.T) {
	r := newRig(t, 1, Config{GPUs: 2, QueuesPerPeer: 2})
	for _, tc := range []struct {
		g, p, q int
		want    string
	}{{2, 0, 0, "GPU 2 outside [0, 2)"}, {0, -1, 0, "peer -1"}, {0, 1, 2, "queue id 2 outside [0, 2)"}} {
		_, err := r.n.Queue(tc.g, tc.p, tc.q)
		assert.ErrorContains(t, err, tc.want)
	}
	_, err := NewNode(sim.New(sim.Config{}), Config{GPUs: -1})
	assert.ErrorContains(t, err, "GPUs = -1")
	_, err = NewNode(sim.New(sim.Config{}), Config{Ring: ring.Options{Size: 1000}})
	assert.ErrorContains(t, err, "ring options")
	_, err = r.n.Memory().Alloc(0, 0, "x")
	assert.ErrorContains(t, err, "size 0")
	_, err = r.n.Memory().Alloc(0, 1<<50, "huge")
	assert.ErrorContains(t, err, "does not fit")
	q := r.queue(0, 1, 0)
	r.s.Spawn("k", func(a *sim.Actor) {
		_, err := q.Reserve(a, 33)
		assert.ErrorContains(t, err, "sdma gpu0→gpu1 q0: reserve")
		assert.ErrorContains(t, q.Submit(a, 0, 64), "not a reserved range")
	})
	require.NoError(t, r.s.Run())
}

func TestMemoryErrors(t *testing.T) {
	r := newRig(t, 1, Config{GPUs: 2})
	buf := r.alloc(0, 4096)
	m := r.n.Memory()
	var ae *AddrError
	require.ErrorAs(t, m.Write(buf+4090, make([]byte, 16)), &ae)
	assert.Contains(t, ae.Error(), "past the end of region")
	require.ErrorAs(t, m.Store32(0x10, 1), &ae)
	assert.Contains(t, ae.Error(), "outside every GPU's slice")
	_, err := m.AtomicAdd64(buf+4, 1)
	assert.ErrorContains(t, err, "not 8-byte aligned")
	assert.Equal(t, 1, m.GPUOf(m.SliceBase(1)+5))
	assert.Equal(t, -1, m.GPUOf(1))
	ph, err := m.AllocPhantom(1, 1<<30, "phantom")
	require.NoError(t, err)
	require.NoError(t, m.Write(ph, []byte{1, 2, 3}))
	v, err := m.Load32(ph)
	require.NoError(t, err)
	assert.Zero(t, v, "phantom memory stores nothing")
	assert.True(t, errors.As(m.Check("read", ph+(1<<30), 1), &ae))
}

// Queues on different engines (here: toward different peers, each link
// with engines of its own) run concurrently; each runs in order.
func TestQueuesRunInParallelAndInOrder(t *testing.T) {
	finish := func(queues int) (sim.Time, []uint32) {
		r := newRig(t, 1, Config{GPUs: 5})
		src, dst, log := r.alloc(0, 4096), r.alloc(1, 4096), r.alloc(1, 4096)
		var order []uint32
		for qi := range queues {
			q := r.queue(0, 1+qi, 0)
			r.s.Spawn(fmt.Sprint("issuer", qi), func(a *sim.Actor) {
				for i := range 10 {
					// A FENCE after each COPY records the order of execution.
					require.NoError(t, post(a, q, ring.Copy(dst, src, 64), ring.Fence(log+uint64(4*(qi*10+i)), uint32(i+1))))
				}
				q.AwaitDrained(a, q.QuietTarget())
			})
		}
		r.s.Spawn("observer", func(a *sim.Actor) {
			for i := range 10 {
				addr := log + uint64(4*i)
				r.n.Memory().Await(a, addr, 4, func() bool { v, _ := r.n.Memory().Load32(addr); return v != 0 },
					func() string { return "fence" })
				for j := range 10 {
					v, _ := r.n.Memory().Load32(log + uint64(4*j))
					if j > i {
						assert.Zero(t, v, "fence %d landed before fence %d on the same queue", j, i)
					}
				}
				order = append(order, uint32(i))
			}
		})
		require.NoError(t, r.s.Run())
		return r.s.Now(), order
	}
	one, order := finish(1)
	assert.Equal(t, []uint32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, order)
	four, _ := finish(4)
	// Serial execution would take four times as long; concurrent queues
	// take about as long as one (packet overheads dominate 64 B copies).
	assert.Less(t, four, one*5/4, "four queues run concurrently, not one after another")
}

func TestPollOnRemoteMemoryIsNamedInTheHangReport(t *testing.T) {
	r := newRig(t, 1, Config{GPUs: 2})
	remote := r.alloc(1, 64)
	q := r.queue(0, 1, 0)
	r.s.Spawn("k", func(a *sim.Actor) {
		require.NoError(t, post(a, q, ring.Poll(remote, 1, ^uint32(0), ring.CmpEQ, 4, ring.RetryForever)))
	})
	var h *sim.HangError
	require.ErrorAs(t, r.s.Run(), &h)
	assert.Contains(t, h.Text(), "the polled word is GPU 1's memory, not the queue's GPU 0")
}

func TestGPUOfWithAnyStride(t *testing.T) {
	for _, stride := range []uint64{4 << 30, 12 << 30, 64 << 30} {
		r := newRig(t, 1, Config{GPUs: 3, Stride: stride})
		m := r.n.Memory()
		for g := range 3 {
			assert.Equal(t, g, m.GPUOf(m.SliceBase(g)), "stride %#x", stride)
			assert.Equal(t, g, m.GPUOf(m.SliceBase(g)+stride-1), "stride %#x", stride)
		}
		assert.Equal(t, -1, m.GPUOf(m.SliceBase(3)))
		assert.Equal(t, -1, m.GPUOf(m.SliceBase(0)-1))
	}
}

func TestFaultHookAndQueueAccessors(t *testing.T) {
	r := newRig(t, 1, Config{GPUs: 2, KeepGoingOnFault: true})
	buf := r.alloc(0, 4096)
	var seen []FaultKind
	r.n.OnFault(func(f Fault) { seen = append(seen, f.Kind) })
	q := r.queue(0, 1, 1)
	assert.Equal(t, QueueID{GPU: 0, Peer: 1, Q: 1}, q.ID())
	assert.Equal(t, []*Queue{q}, r.n.Queues())
	fill := ring.ConstFill(buf, 7, 15)
	fill.FillSize = 0 // byte fill: not emulated
	r.s.Spawn("k", func(a *sim.Actor) {
		require.NoError(t, post(a, q, ring.Trap(1), fill))
		assert.True(t, q.Busy())
	})
	var h *sim.HangError
	require.ErrorAs(t, r.s.Run(), &h, "a halted queue with rung work is a hang")
	assert.Equal(t, []FaultKind{FaultTrap, FaultIllegal}, seen)
	require.NotNil(t, q.Fault())
	assert.Contains(t, q.Fault().Error(), "only dword fills")
	assert.True(t, q.Busy())
	assert.Contains(t, h.Text(), "queue halted by a fault: ILLEGAL_INSTRUCTION")
}

// retiredAt records each retired packet's kind, start and end.
type retiredAt struct {
	s          *sim.Sim
	kinds      []ring.Kind
	start, end []sim.Time
}

func (o *retiredAt) Running(*sim.Actor)             {}
func (o *retiredAt) Doorbell(*issuer.Queue, uint64) {}
func (o *retiredAt) Retired(_ *issuer.Queue, _ uint64, start sim.Time, p *ring.Packet) {
	if p.Kind == ring.KindNop {
		return
	}
	o.kinds = append(o.kinds, p.Kind)
	o.start, o.end = append(o.start, start), append(o.end, o.s.Now())
}

// A POLL that times out owes the packet gap before the next packet, as one
// that holds does.
func TestPacketGapAfterPoll(t *testing.T) {
	for _, tc := range []struct {
		name    string
		flag    uint32 // the flag's value: 1 holds, 0 times out
		timeout bool
	}{{"holds", 1, false}, {"times out", 0, true}} {
		t.Run(tc.name, func(t *testing.T) {
			m := model.NewPlaceholder()
			r := newRig(t, 1, Config{GPUs: 1, Model: m, KeepGoingOnFault: true})
			obs := &retiredAt{s: r.s}
			r.n.SetObserver(obs)
			flag, sig := r.alloc(0, 64), r.alloc(0, 64)
			require.NoError(t, r.n.Memory().Store32(flag, tc.flag))
			q := r.queue(0, 0, 0)
			r.s.Spawn("k", func(a *sim.Actor) {
				require.NoError(t, post(a, q, ring.Poll(flag, 1, ^uint32(0), ring.CmpEQ, 10, 3), ring.AtomicAdd64(sig, 1)))
			})
			require.NoError(t, r.s.Run())
			require.Equal(t, []ring.Kind{ring.KindPoll, ring.KindAtomic}, obs.kinds)
			timedOut := false
			for _, f := range r.n.Faults() {
				timedOut = timedOut || f.Kind == FaultPollTimeout
			}
			require.Equal(t, tc.timeout, timedOut)
			assert.Equal(t, obs.end[0]+m.Cost(model.PacketGap(ring.KindPoll)), obs.start[1],
				"the ATOMIC starts one POLL gap after the POLL ended")
		})
	}
}
