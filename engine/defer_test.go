package engine

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/model"
	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
)

// deferChunks is the number of link chunks of the copies below.
const deferChunks = 8

// chunkTime is how long one lone chunk's COPY takes from its ring to its
// last byte (latency included): a unit for the times below.
func chunkTime(t *testing.T) sim.Time {
	rung, end := copyTimes(t)
	return end - rung
}

// A crossed chunk stays pending only where nothing can tell: the copy
// alone, unwatched, holds bytes not moved yet mid-copy; a waiter on its
// destination, tracked words in each of its chunks, the race detector or
// a node whose lanes read memory natively (a Backing) make every chunk
// land at its end.
func TestDeferChunkOnlyUnobserved(t *testing.T) {
	ct := chunkTime(t)
	chunk := uint64(model.LinkChunkBytes)
	n := deferChunks * chunk
	tests := []struct {
		name    string
		cfg     Config
		race    bool
		watch   bool // an actor awaits the whole destination
		track   bool // the write log tracks a word in each chunk
		pending bool
	}{
		{name: "alone", pending: true},
		{name: "waiter on the destination", watch: true},
		{name: "tracked destination word", track: true},
		{name: "race detector", race: true},
		{name: "native backing", cfg: Config{Backing: func(_, size uint64) ([]byte, error) { return make([]byte, size), nil }}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.GPUs = 2
			r := newRig(t, 1, cfg)
			if tc.race {
				r.s.EnableRace()
			}
			m := r.n.Memory()
			src, dst := r.alloc(0, n), r.alloc(1, n)
			require.NoError(t, m.Fill(src, n, 0x5a))
			q := r.queue(0, 1, 0)
			for c := uint64(0); tc.track && c < n; c += chunk {
				require.True(t, m.Log().Track(dst+c+chunk/2, 8))
			}
			var pend uint64
			r.s.Spawn("k", func(a *sim.Actor) {
				require.NoError(t, post(a, q, ring.Copy(dst, src, n)))
				a.Sleep(3 * ct) // two chunks or more have crossed, not the last
				pend = q.x.data.pend
				q.AwaitDrained(a, q.QuietTarget())
			})
			if tc.watch {
				r.s.Spawn("w", func(a *sim.Actor) {
					m.Await(a, dst, n, func() bool { v, _ := m.Load64(dst + n - 8); return v != 0 }, func() string { return "last word" })
				})
			}
			require.NoError(t, r.s.Run())
			if tc.pending {
				assert.Positive(t, pend, "crossed chunks wait, unmoved")
				assert.Less(t, pend, n)
			} else {
				assert.Zero(t, pend, "every crossed chunk landed at its end")
			}
			got := make([]byte, n)
			require.NoError(t, m.Read(dst, got))
			assert.Equal(t, bytes.Repeat([]byte{0x5a}, int(n)), got)
		})
	}
}

// What an access sees mid-copy, and what lands in the end, are the same
// whether crossed chunks land at their ends (the fine path) or wait for
// the next access: loads at several times, a source overwritten after
// some of its chunks crossed, two copies writing one destination (the
// later landing wins), and a copy whose destination another copy reads.
func TestDeferChunkSameAsFinePath(t *testing.T) {
	ct := chunkTime(t)
	chunk := uint64(model.LinkChunkBytes)
	n := deferChunks * chunk
	type result struct {
		seen  [][]byte
		final [][]byte
		times []sim.Time // when the copies drained, a waiter woke, the run ended
	}
	tests := []struct {
		name string
		run  func(t *testing.T, r *rig) result
	}{
		{name: "loads mid-copy", run: func(t *testing.T, r *rig) result {
			m := r.n.Memory()
			src, dst := r.alloc(0, n), r.alloc(1, n)
			require.NoError(t, m.Write(src, pattern(int(n), 1)))
			q := r.queue(0, 1, 0)
			var res result
			r.s.Spawn("k", func(a *sim.Actor) {
				require.NoError(t, post(a, q, ring.Copy(dst, src, n)))
				for _, at := range []sim.Time{ct / 2, 2 * ct, 7 * ct / 2, 6 * ct} {
					a.Sleep(at - (a.Now() - 0))
					b := make([]byte, n)
					require.NoError(t, m.Read(dst, b))
					res.seen = append(res.seen, b)
				}
				q.AwaitDrained(a, q.QuietTarget())
				res.times = append(res.times, a.Now())
			})
			require.NoError(t, r.s.Run())
			b := make([]byte, n)
			require.NoError(t, m.Read(dst, b))
			res.final = append(res.final, b)
			res.times = append(res.times, r.s.Now())
			return res
		}},
		{name: "source overwritten mid-copy", run: func(t *testing.T, r *rig) result {
			m := r.n.Memory()
			src, dst := r.alloc(0, n), r.alloc(1, n)
			require.NoError(t, m.Fill(src, n, 0x11))
			q := r.queue(0, 1, 0)
			var res result
			r.s.Spawn("k", func(a *sim.Actor) {
				require.NoError(t, post(a, q, ring.Copy(dst, src, n)))
				a.Sleep(4 * ct)
				require.NoError(t, m.Fill(src, n, 0x22))
				q.AwaitDrained(a, q.QuietTarget())
				res.times = append(res.times, a.Now())
			})
			require.NoError(t, r.s.Run())
			b := make([]byte, n)
			require.NoError(t, m.Read(dst, b))
			assert.Contains(t, string(b), "\x11\x22", "the copy sent old bytes, then new ones")
			res.final = append(res.final, b)
			res.times = append(res.times, r.s.Now())
			return res
		}},
		{name: "two copies to one destination", run: func(t *testing.T, r *rig) result {
			m := r.n.Memory()
			a0, a2, dst := r.alloc(0, n), r.alloc(2, n), r.alloc(1, n)
			require.NoError(t, m.Fill(a0, n, 0x33))
			require.NoError(t, m.Fill(a2, n, 0x44))
			q0, q2 := r.queue(0, 1, 0), r.queue(2, 1, 0)
			var times []sim.Time
			r.s.Spawn("k", func(a *sim.Actor) {
				require.NoError(t, post(a, q0, ring.Copy(dst, a0, n)))
				a.Sleep(ct)
				require.NoError(t, post(a, q2, ring.Copy(dst, a2, n)))
				q0.AwaitDrained(a, q0.QuietTarget())
				q2.AwaitDrained(a, q2.QuietTarget())
				times = append(times, a.Now())
			})
			require.NoError(t, r.s.Run())
			b := make([]byte, n)
			require.NoError(t, m.Read(dst, b))
			return result{final: [][]byte{b}, times: append(times, r.s.Now())}
		}},
		{name: "a copy reads another's destination", run: func(t *testing.T, r *rig) result {
			m := r.n.Memory()
			a0, b1, c2 := r.alloc(0, n), r.alloc(1, n), r.alloc(2, n)
			require.NoError(t, m.Write(a0, pattern(int(n), 2)))
			q0, q1 := r.queue(0, 1, 0), r.queue(1, 2, 0)
			var times []sim.Time
			r.s.Spawn("k", func(a *sim.Actor) {
				require.NoError(t, post(a, q0, ring.Copy(b1, a0, n)))
				a.Sleep(2 * ct)
				require.NoError(t, post(a, q1, ring.Copy(c2, b1, n)))
				q0.AwaitDrained(a, q0.QuietTarget())
				q1.AwaitDrained(a, q1.QuietTarget())
				times = append(times, a.Now())
			})
			require.NoError(t, r.s.Run())
			b, c := make([]byte, n), make([]byte, n)
			require.NoError(t, m.Read(b1, b))
			require.NoError(t, m.Read(c2, c))
			return result{final: [][]byte{b, c}, times: append(times, r.s.Now())}
		}},
		{name: "a waiter mid-copy", run: func(t *testing.T, r *rig) result {
			// The waiter watches a word of the fourth chunk: the chunks
			// before it may wait unmoved, and it wakes when its word lands.
			m := r.n.Memory()
			src, dst := r.alloc(0, n), r.alloc(1, n)
			require.NoError(t, m.Write(src, pattern(int(n), 4)))
			q := r.queue(0, 1, 0)
			word := dst + 3*chunk + chunk/2
			var res result
			r.s.Spawn("k", func(a *sim.Actor) {
				require.NoError(t, post(a, q, ring.Copy(dst, src, n)))
				q.AwaitDrained(a, q.QuietTarget())
				res.times = append(res.times, a.Now())
			})
			var pend uint64
			r.s.Spawn("p", func(a *sim.Actor) {
				a.Sleep(5 * ct / 2) // two chunks have crossed; no memory access
				pend = q.x.data.pend
			})
			r.s.Spawn("w", func(a *sim.Actor) {
				m.Await(a, word, 8, func() bool { v, _ := m.Load64(word); return v != 0 }, func() string { return "a word of the fourth chunk" })
				res.times = append(res.times, a.Now())
				b := make([]byte, n)
				require.NoError(t, m.Read(dst, b))
				res.seen = append(res.seen, b)
			})
			require.NoError(t, r.s.Run())
			b := make([]byte, n)
			require.NoError(t, m.Read(dst, b))
			res.final = append(res.final, b)
			res.times = append(res.times, r.s.Now())
			if !r.n.fine {
				assert.Positive(t, pend, "the chunks before the watched one waited unmoved")
			}
			return res
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fine := newRig(t, 1, Config{GPUs: 3})
			fine.n.fine = true
			want := tc.run(t, fine)
			got := tc.run(t, newRig(t, 1, Config{GPUs: 3}))
			require.Equal(t, len(want.seen), len(got.seen))
			for i := range want.seen {
				assert.True(t, bytes.Equal(want.seen[i], got.seen[i]), "load %d mid-copy", i)
			}
			require.Equal(t, len(want.final), len(got.final))
			for i := range want.final {
				assert.True(t, bytes.Equal(want.final[i], got.final[i]), "final bytes %d", i)
			}
			require.NotEmpty(t, want.times)
			assert.Equal(t, want.times, got.times, "virtual times")
		})
	}
}

// A queue names itself as the writer of a tracked word (on every such
// write) as fmt would, appended to the Sim's buffer with no allocation.
func TestWriterName(t *testing.T) {
	r := newRig(t, 1, Config{GPUs: 2})
	q := r.queue(0, 1, 0)
	q.head.Kind, q.pos = ring.KindAtomic, 0x1a0
	name := func() string { return string(q.AppendWriter(nil)) }
	assert.Equal(t, fmt.Sprintf("%v's %v at ring offset %#x", q.id, q.head.Kind, q.pos), name())
	buf := make([]byte, 0, 160)
	assert.Zero(t, testing.AllocsPerRun(10, func() { buf = q.AppendWriter(buf[:0]) }))
	q.pos = 0
	assert.Equal(t, fmt.Sprintf("%v's %v at ring offset %#x", q.id, q.head.Kind, q.pos), name())
}
