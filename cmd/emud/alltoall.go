package main

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/signal"
	"github.com/emud-dev/emud/sim"
)

// The alltoall scenario drives the engine directly, as a ccoSdma put with a
// remote signal would: per peer, one two-unit reservation holding [COPY]
// [ATOMIC ADD64 +1], so the signal lands only after the block did (in-order
// execution per queue). A later version runs the same exchange through the
// cco API.

func init() {
	register(&scenario{
		name:    "alltoall",
		summary: "every rank copies a block to every rank (itself included) over raw SDMA queues",
		check:   checkAlltoall,
		run:     runAlltoall,
	})
}

// maxAlltoallMemory caps the emulated memory a run backs with real bytes
// (2 × ranks² × bytes): beyond it a typo in --bytes would exhaust the host.
const maxAlltoallMemory = 4 << 30

func checkAlltoall(o options) error {
	if o.Bytes > ring.MaxCopyBytes {
		return fmt.Errorf("invalid --bytes %s: alltoall moves each block in one COPY packet, at most %d bytes", formatBytes(o.Bytes), ring.MaxCopyBytes)
	}
	// Ranks ≤ 64 and Bytes < 2^30 keep this product far from overflow.
	if need := 2 * uint64(o.Ranks) * uint64(o.Ranks) * o.Bytes; need > maxAlltoallMemory {
		return fmt.Errorf("invalid --bytes %s with --ranks %d: alltoall needs %s of emulated memory (2 × ranks² × bytes), the limit is %s",
			formatBytes(o.Bytes), o.Ranks, formatBytes(need), formatBytes(maxAlltoallMemory))
	}
	return nil
}

func runAlltoall(o options) (*outcome, error) {
	x, err := newAlltoall(o)
	if err != nil {
		return nil, err
	}
	x.spawn()
	if err := x.s.Run(); err != nil {
		return nil, err
	}
	if err := x.verify(); err != nil {
		return nil, err
	}
	return x.outcome(), nil
}

// alltoall is one run's state: the node and every rank's buffers.
type alltoall struct {
	o      options
	s      *sim.Sim
	n      *engine.Node
	ranks  []a2aRank
	finish []sim.Time
}

// a2aRank is what rank r owns on its GPU: send[p] is the block for rank p,
// recv[p] the block from rank p (each o.Bytes long, p-major), and the pool
// whose row p counts rank p's signals.
type a2aRank struct {
	send, recv uint64
	pool       signal.Pool
}

func newAlltoall(o options) (*alltoall, error) {
	s := sim.New(sim.Config{Seed: o.Seed})
	n, err := engine.NewNode(s, engine.Config{GPUs: o.Ranks})
	if err != nil {
		return nil, err
	}
	x := &alltoall{o: o, s: s, n: n, ranks: make([]a2aRank, o.Ranks), finish: make([]sim.Time, o.Ranks)}
	mem := n.Memory()
	span := uint64(o.Ranks) * o.Bytes
	host := make([]byte, span) // one staging buffer, reused per rank
	for r := range x.ranks {
		rk := &x.ranks[r]
		if rk.send, err = mem.Alloc(r, span, fmt.Sprintf("rank%d send", r)); err != nil {
			return nil, err
		}
		if rk.recv, err = mem.Alloc(r, span, fmt.Sprintf("rank%d recv", r)); err != nil {
			return nil, err
		}
		if rk.pool, err = n.AllocSignalPool(r, o.Ranks, o.Queues); err != nil {
			return nil, err
		}
		for p := range o.Ranks {
			fillBlock(x.block(host, p), r, p)
		}
		if err := mem.Write(rk.send, host); err != nil {
			return nil, err
		}
	}
	return x, nil
}

// block returns block p of a p-major buffer of o.Ranks blocks.
func (x *alltoall) block(buf []byte, p int) []byte {
	b := x.o.Bytes
	return buf[uint64(p)*b : uint64(p+1)*b]
}

// queueID is the queue id rank r uses toward peer p: peers spread over the
// queue ids, so the receiver knows which signal column to watch.
func (x *alltoall) queueID(p int) int { return p % x.o.Queues }

func (x *alltoall) spawn() {
	for r := range x.ranks {
		x.spawnRank(r)
	}
}

// spawnRank starts rank r's actor; an error from the engine fails the run.
func (x *alltoall) spawnRank(r int) {
	x.s.Spawn(fmt.Sprintf("rank%d", r), func(a *sim.Actor) {
		if err := x.rank(a, r); err != nil {
			x.s.Fail(fmt.Errorf("rank %d: %w", r, err))
			return
		}
		x.finish[r] = a.Now()
	})
}

// rank is rank r's program: post to every peer, wait for every peer's
// signal, then quiet its queues.
func (x *alltoall) rank(a *sim.Actor, r int) error {
	o, me := x.o, x.ranks[r]
	a.SetLabel("posting")
	used := make([]*engine.Queue, 0, o.Ranks)
	// Rotated order, loopback last: every rank starts on a different peer
	// instead of all of them hitting GPU 0 first.
	for i := 1; i <= o.Ranks; i++ {
		p := (r + i) % o.Ranks
		q, err := x.n.Queue(r, p, x.queueID(p))
		if err != nil {
			return err
		}
		slot, err := x.ranks[p].pool.Slot(r, x.queueID(p))
		if err != nil {
			return err
		}
		base, err := q.Reserve(a, 2*ring.Unit)
		if err != nil {
			return err
		}
		cp := ring.Copy(x.ranks[p].recv+uint64(r)*o.Bytes, me.send+uint64(p)*o.Bytes, o.Bytes)
		sig := ring.AtomicAdd64(slot, 1)
		if err := q.WriteUnit(base, &cp); err != nil {
			return err
		}
		if err := q.WriteUnit(base+ring.Unit, &sig); err != nil {
			return err
		}
		if err := q.Submit(a, base, base+2*ring.Unit); err != nil {
			return err
		}
		used = append(used, q)
	}

	// Every peer p signals on its queue toward r, id queueID(r).
	qid := x.queueID(r)
	var exp signal.Expected
	want := make([]uint64, o.Ranks)
	slots := make([]uint64, o.Ranks)
	for p := range want {
		want[p] = exp.Next(p, qid)
		slots[p], _ = me.pool.Slot(p, qid) // p < Ranks = LsaSize, qid < Queues
	}
	mem := x.n.Memory()
	reached := func(p int) bool {
		v, err := mem.Load64(slots[p])
		return err == nil && signal.Reached(v, want[p])
	}
	a.SetLabel("waiting for signals")
	mem.Await(a, me.pool.Base, me.pool.Bytes(),
		func() bool {
			for p := range slots {
				if !reached(p) {
					return false
				}
			}
			return true
		},
		func() string {
			var missing []int
			for p := range slots {
				if !reached(p) {
					missing = append(missing, p)
				}
			}
			return fmt.Sprintf("signals from ranks %v (queue id %d) in gpu%d's pool to reach %d", missing, qid, r, want[0])
		})

	a.SetLabel("quiet")
	for _, q := range used {
		q.AwaitDrained(a, q.QuietTarget())
	}
	return nil
}

// verify checks every byte of every receive buffer and every signal slot:
// slot (p, queueID(r)) of rank r's pool is exactly 1, all others 0.
func (x *alltoall) verify() error {
	o, mem := x.o, x.n.Memory()
	got := make([]byte, uint64(o.Ranks)*o.Bytes)
	want := make([]byte, o.Bytes)
	var first string
	bad := 0
	for r, rk := range x.ranks {
		if err := mem.Read(rk.recv, got); err != nil {
			return err
		}
		for p := range o.Ranks {
			fillBlock(want, p, r)
			blk := x.block(got, p)
			if bytes.Equal(blk, want) {
				continue
			}
			bad++
			if first == "" {
				first = describeMismatch(r, p, blk, want)
			}
		}
		for p := range o.Ranks {
			for q := range o.Queues {
				slot, _ := rk.pool.Slot(p, q)
				v, err := mem.Load64(slot)
				if err != nil {
					return err
				}
				w := uint64(0)
				if q == x.queueID(r) {
					w = 1
				}
				if v != w {
					bad++
					if first == "" {
						first = fmt.Sprintf("rank %d's signal slot (sender %d, queue %d) is %d, want %d", r, p, q, v, w)
					}
				}
			}
		}
	}
	if bad > 0 {
		return &mismatchError{Scenario: "alltoall", Seed: o.Seed,
			Detail: fmt.Sprintf("%d wrong blocks or signals; first: %s", bad, first)}
	}
	return nil
}

func describeMismatch(dst, src int, got, want []byte) string {
	n, at := 0, -1
	for i := range got {
		if got[i] != want[i] {
			if at < 0 {
				at = i
			}
			n++
		}
	}
	return fmt.Sprintf("rank %d's receive block from rank %d: %d of %d bytes wrong, first at block offset %d (got %#02x, want %#02x)",
		dst, src, n, len(got), at, got[at], want[at])
}

func (x *alltoall) outcome() *outcome {
	o := x.o
	res := &outcome{Model: x.n.Model().Name(), End: x.s.Now(), Seed: x.s.Seed(), Digest: x.s.Digest()}
	per := uint64(o.Ranks) * o.Bytes
	for r := range x.ranks {
		res.Ranks = append(res.Ranks, rankResult{Rank: r, Finish: x.finish[r], BytesSent: per, BytesReceived: per})
	}
	return res
}

// fillBlock writes the block src sends to dst: 64-bit words of a splitmix64
// hash of (src, dst, word index), so any misplaced, shifted or stale block
// differs from what belongs there.
func fillBlock(b []byte, src, dst int) {
	key := mix64(uint64(src)<<32 | uint64(dst))
	var w [8]byte
	for i := 0; i < len(b); i += 8 {
		binary.LittleEndian.PutUint64(w[:], mix64(key+uint64(i/8)))
		copy(b[i:], w[:])
	}
}

// mix64 is the splitmix64 finaliser.
func mix64(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
