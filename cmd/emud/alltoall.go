package main

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
)

// The alltoall scenario is the seed's worked alltoall on the ccoSdma API:
// every rank launches one wave in which lane i puts its block to peer
// (rank+1+i) mod ranks (loopback last) with a remote signal, quiets that
// peer and waits for the peer's signal. Lanes target distinct peers, so the
// Independent thread mode posts them in parallel.

func init() {
	register(&scenario{
		name:    "alltoall",
		summary: "every rank puts a block to every rank (itself included) with ccoSdma put + remote signal",
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
	if err := x.spawn(); err != nil {
		return nil, err
	}
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

// a2aRank is what rank r owns: its windows (send[p] is the block for rank p,
// recv[p] the block from rank p, each o.Bytes long, p-major) and its dev
// comm, whose signal pool row p counts rank p's signals.
type a2aRank struct {
	sendWin, recvWin cco.Window
	dc               cco.DevComm
}

// alltoallEnv is the process environment of a run: the caller's MORI_*
// variables (MORI_CCO_SDMA_DEBUG turns the debug checks on), with SDMA on
// unless the caller says otherwise.
func alltoallEnv() cco.Env {
	env := cco.OSEnv()
	if _, ok := env["MORI_ENABLE_SDMA"]; !ok {
		env["MORI_ENABLE_SDMA"] = "1"
	}
	return env
}

func newAlltoall(o options) (*alltoall, error) {
	s := sim.New(sim.Config{Seed: o.Seed})
	n, err := engine.NewNode(s, cco.MI355X(o.Ranks))
	if err != nil {
		return nil, err
	}
	env := alltoallEnv()
	host := cco.NewEmulatedHost(n, env)
	comms, err := cco.CommCreateAll(host, o.Ranks, 0)
	if err != nil {
		return nil, err
	}
	x := &alltoall{o: o, s: s, n: n, ranks: make([]a2aRank, o.Ranks), finish: make([]sim.Time, o.Ranks)}
	mem := n.Memory()
	span := uint64(o.Ranks) * o.Bytes
	staging := make([]byte, span) // one staging buffer, reused per rank
	for r, c := range comms {
		rk := &x.ranks[r]
		send, err := cco.MemAlloc(c, span)
		if err != nil {
			return nil, err
		}
		recv, err := cco.MemAlloc(c, span)
		if err != nil {
			return nil, err
		}
		if rk.sendWin, err = cco.WindowRegister(c, send, span); err != nil {
			return nil, err
		}
		if rk.recvWin, err = cco.WindowRegister(c, recv, span); err != nil {
			return nil, err
		}
		for p := range o.Ranks {
			fillBlock(x.block(staging, p), r, p)
		}
		if err := mem.Write(send, staging); err != nil {
			return nil, err
		}
	}
	for r, c := range comms {
		reqs := cco.DevCommRequirementsInitializer()
		reqs.SdmaQueueCount = o.Queues
		if x.ranks[r].dc, err = cco.DevCommCreate(c, &reqs); err != nil {
			return nil, err
		}
		if x.ranks[r].dc.Sdma.SdmaNumQueue == 0 {
			return nil, fmt.Errorf("rank %d has no SDMA queues: MORI_ENABLE_SDMA=%q in the environment turns SDMA off", r, env["MORI_ENABLE_SDMA"])
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
	_, err := kernel.Launch(x.s, kernel.Config{Name: fmt.Sprintf("rank%d", r), GPU: r, Grid: 1, Block: o.Ranks},
		func(t *kernel.Thread) {
			sdma := cco.NewSdma(t, me.dc)
			p := (r + 1 + t.ThreadIdx()) % o.Ranks
			b := o.Bytes
			sdma.Put(p, me.recvWin, uint64(r)*b, me.sendWin, uint64(p)*b, b, x.queueID(p), cco.RemoteSignal)
			sdma.Quiet(p)                       // our send to p is out
			sdma.WaitSignal(p, x.queueID(r), 1) // p's block to us has landed
			x.finish[r] = max(x.finish[r], t.Now())
		})
	return err
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
		if err := mem.Read(rk.recvWin.LocalPtr(0), got); err != nil {
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
				v, err := rk.dc.Signal(p, q)
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
