package main

import (
	"encoding/binary"
	"fmt"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/ring"
)

// The alltoall scenario is the seed's worked alltoall on the ccoSdma API:
// every rank launches one wave in which lane i puts its block to peer
// (rank+1+i) mod ranks (loopback last) with a remote signal, quiets that
// peer and waits for the peer's signal, then loads the block it received
// (cco.Mem), as the consumer of the data would. Lanes target distinct
// peers, so the Independent thread mode posts them in parallel.
//
// alltoall-early-reuse is a planted bug: each lane overwrites its send
// block right after the put, before quiet, so the COPY may send the new
// bytes. Its data check fails on the seeds where the engine read the block
// after the overwrite; with --race the detector reports the unordered
// store and COPY read on every seed.

func init() {
	register(&scenario{
		name:    "alltoall",
		summary: "every rank puts a block to every rank (itself included) with ccoSdma put + remote signal",
		check:   checkAlltoall,
		run:     func(o options) (*outcome, error) { return runAlltoall(o, false) },
		usage:   alltoallUsage,
	})
	register(&scenario{
		name:    "alltoall-early-reuse",
		summary: "PLANTED BUG: alltoall where each rank overwrites its send block right after put, before quiet",
		planted: true,
		check:   checkAlltoall,
		run:     func(o options) (*outcome, error) { return runAlltoall(o, true) },
		usage:   alltoallUsage,
	})
}

// alltoallUsage: send and receive windows of ranks × bytes per rank, the
// host's fill and read-back buffers, one queue and one lane per pair.
func alltoallUsage(o options) usage {
	r, b := uint64(o.Ranks), o.Bytes
	u := usage{Backed: 2 * r * r * b, Queues: o.Ranks * o.Ranks, Lanes: o.Ranks * o.Ranks}
	if !o.Phantom {
		u.Host = 2*r*b + b
	}
	return u
}

// maxMessageBytes caps one message (a block, a chunk, a payload) of the
// SDMA scenarios, whatever the budget: it keeps every size product far from
// overflow. The memory a run needs is checked against --mem-budget.
const maxMessageBytes = 4 << 30

func checkAlltoall(o options) error {
	if o.Bytes > ring.MaxCopyBytes {
		return fmt.Errorf("invalid --bytes %s: alltoall moves each block in one COPY packet, at most %d bytes", formatBytes(o.Bytes), ring.MaxCopyBytes)
	}
	return nil
}

func runAlltoall(o options, earlyReuse bool) (*outcome, error) {
	x, err := newAlltoall(o)
	if err != nil {
		return nil, err
	}
	x.earlyReuse = earlyReuse
	if err := x.spawn(); err != nil {
		return nil, err
	}
	if err := x.s.Run(); err != nil {
		return nil, err
	}
	if err := x.verify(); err != nil {
		return nil, err
	}
	per := uint64(o.Ranks) * o.Bytes
	each := func(int) uint64 { return per }
	return x.outcome(each, each), nil
}

// alltoall is one run's state: the job and every rank's buffers.
type alltoall struct {
	*job
	ranks      []a2aRank
	earlyReuse bool // the planted bug: overwrite the send block before quiet
}

// a2aRank is what rank r owns: its windows (send[p] is the block for rank p,
// recv[p] the block from rank p, each o.Bytes long, p-major) and its dev
// comm, whose signal pool row p counts rank p's signals.
type a2aRank struct {
	sendWin, recvWin cco.Window
	dc               cco.DevComm
}

func newAlltoall(o options) (*alltoall, error) {
	j, err := newJob(o)
	if err != nil {
		return nil, err
	}
	send, recv, err := j.sendRecv(o.Bytes)
	if err != nil {
		return nil, err
	}
	x := &alltoall{job: j, ranks: make([]a2aRank, o.Ranks)}
	for r := range x.ranks {
		x.ranks[r] = a2aRank{sendWin: send[r], recvWin: recv[r], dc: j.dcs[r]}
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

func (x *alltoall) spawn() error {
	for r := range x.ranks {
		if err := x.spawnRank(r); err != nil {
			return err
		}
	}
	return nil
}

// spawnRank launches rank r's kernel: one wave, lane i serving peer
// (r+1+i) mod ranks.
func (x *alltoall) spawnRank(r int) error {
	o, me := x.o, x.ranks[r]
	return x.launch(r, 1, o.Ranks, func(t *kernel.Thread, sdma *cco.Sdma) {
		p := (r + 1 + t.ThreadIdx()) % o.Ranks
		b := o.Bytes
		m := cco.NewMem(t, me.dc)
		sdma.Put(p, me.recvWin, uint64(r)*b, me.sendWin, uint64(p)*b, b, x.queueID(p), cco.RemoteSignal)
		if x.earlyReuse {
			m.Fill(me.sendWin.LocalPtr(uint64(p)*b), b, 0) // BUG: the COPY may not have read it yet
		}
		sdma.Quiet(p)                       // our send to p is out
		sdma.WaitSignal(p, x.queueID(r), 1) // p's block to us has landed
		x.consume(m, me.recvWin.LocalPtr(uint64(p)*b), b)
		x.done(r, t)
	})
}

// verify checks every byte of every receive buffer (not in a phantom run)
// and every signal slot: slot (p, queueID(r)) of rank r's pool is exactly
// 1, all others 0.
func (x *alltoall) verify() error {
	o := x.o
	var got, want []byte
	if !o.Phantom {
		got, want = make([]byte, uint64(o.Ranks)*o.Bytes), make([]byte, o.Bytes)
	}
	var c checker
	for r, rk := range x.ranks {
		for p := range o.Ranks {
			if o.Phantom {
				break // no bytes to check; the signals below are real
			}
			if p == 0 {
				if err := x.mem.Read(rk.recvWin.LocalPtr(0), got); err != nil {
					return err
				}
			}
			fillBlock(want, p, r)
			c.block(fmt.Sprintf("rank %d's receive block from rank %d", r, p), x.block(got, p), want)
		}
		for p := range o.Ranks {
			for q := range o.Queues {
				w := uint64(0)
				if q == x.queueID(r) {
					w = 1
				}
				if err := c.signal(rk.dc, r, p, q, w); err != nil {
					return err
				}
			}
		}
	}
	return c.err("alltoall", o.Seed)
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
