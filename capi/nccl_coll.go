package main

/*
#include <string.h>
#include "lane.h"
*/
import "C"

import (
	"encoding/binary"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"unsafe"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/fabric/redop"
	"github.com/emud-dev/emud/lsa"
	"github.com/emud-dev/emud/race"
	"github.com/emud-dev/emud/sim"
)

// NCCL's host collectives and point-to-point calls (EMUD_H_NCCL_COLL: a
// = kind, send, recv, count, type, reduction, root or peer, comm,
// stream, in place (ncclBcast); include/nccl.h): ncclAllReduce, ncclBroadcast, ncclBcast, ncclReduce,
// ncclAllGather, ncclReduceScatter, ncclAlltoAll, ncclSend and ncclRecv,
// grouped by ncclGroupStart and ncclGroupEnd.
//
// A call outside a group returns once every rank has made its call (NCCL
// may block so, and says a thread managing several devices must group
// their calls): a program that makes several ranks' calls from one
// thread without a group hangs, naming that rule. Each call is stream
// work, as NCCL's kernels are: the ops a host thread
// makes between its outermost ncclGroupStart and ncclGroupEnd (or one op
// outside a group) become one job on each stream they name, which waits
// for the stream's earlier work, then posts its ops together and waits
// until each is done: so a group's sends and receives do not wait for
// each other (a ring's send and receive, as NCCL's groups promise). Ops
// match across ranks by call order, per communicator (the clique of its
// unique id): a rank's n-th collective with the other ranks' n-th, its
// n-th send to a peer with that peer's n-th receive from it. The last
// rank whose job posts an op moves its data: it reads every input, then
// writes every output, so in-place calls hold. Reductions fold the ranks
// in rank order, each step in the element type's own arithmetic (half
// and bfloat16: the exact result rounded once, as fabric/redop rounds
// the CFT reductions; fp8 saturating), ncclAvg on integers as the sum
// divided by the count of ranks and on floating types as a sum of inputs
// each premultiplied by 1/n (NCCL's), ncclRedOpCreatePreMulSum's
// operators as a sum of inputs each times its rank's scalar. The jobs
// then take the op's time:
// 10 µs, plus the bytes a rank sends in a ring algorithm over a 57 GB/s
// link (mi355x-documented.csv's bw.split figure; not fitted).
//
// For the race detector an op is a synchronisation of its ranks: each
// job's post releases what its rank's stream did before it, the moving
// job acquires them all, its reads and writes are its own accesses, and
// each job acquires the op's end before its stream goes on. So a kernel
// that writes a buffer a collective is reading, on a stream the
// collective does not follow, is a race, and one ordered by the stream
// is not.
//
// Ranks whose ops do not agree (count, type, reduction, root, or a
// send's count and type against its receive's) fail the run, naming
// both; an op some rank never posts is a hang naming the ranks that
// posted it and the ones that did not. A comm's ranks run on the
// GPUs their ncclCommInitRank found current (a split's on the parent
// ranks', split.go), so each op's null stream is its rank's GPU's.
// Partial: NCCL's algorithm choice (tree or ring, protocols) is not
// modelled, only the ring's bytes.

const (
	ncclCollAllReduce = iota + 1
	ncclCollBroadcast
	ncclCollReduce
	ncclCollAllGather
	ncclCollReduceScatter
	ncclCollAlltoAll
	ncclCollSend
	ncclCollRecv
	ncclCollGroupStart
	ncclCollGroupEnd
	ncclCollGather
	ncclCollScatter
)

var ncclCollNames = map[int]string{ncclCollAllReduce: "ncclAllReduce", ncclCollBroadcast: "ncclBroadcast",
	ncclCollReduce: "ncclReduce", ncclCollAllGather: "ncclAllGather", ncclCollReduceScatter: "ncclReduceScatter",
	ncclCollAlltoAll: "ncclAlltoAll", ncclCollSend: "ncclSend", ncclCollRecv: "ncclRecv",
	ncclCollGather: "ncclGather", ncclCollScatter: "ncclScatter"}

// NCCL's element types (ncclDataType_t) and reductions (ncclRedOp_t).
var ncclTypeNames = []string{"ncclInt8", "ncclUint8", "ncclInt32", "ncclUint32", "ncclInt64", "ncclUint64",
	"ncclFloat16", "ncclFloat32", "ncclFloat64", "ncclBfloat16", "ncclFloat8e4m3", "ncclFloat8e5m2"}
var ncclTypeSizes = []uint64{1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1}
var ncclOpNames = []string{"ncclSum", "ncclProd", "ncclMax", "ncclMin", "ncclAvg", "ncclRedOpCreatePreMulSum's operator"}

// ncclPreMulSum is the redop code nccl.h passes for an operator of
// ncclRedOpCreatePreMulSum, with its scalar's residence and value.
const (
	ncclAvg        = 4
	ncclPreMulSum  = 5
	ncclScalarHost = 1 // the scalar's bytes are in the call
	ncclScalarDev  = 2 // the call holds the scalar's device address
)

const (
	ncclCollLatency = 10 * sim.Microsecond
	ncclLinkRate    = 57_000 // bytes a microsecond
)

// ncclOp is one rank's call.
type ncclOp struct {
	kind       int
	send, recv uint64
	count      uint64
	dtype      int
	redop      int
	peer       int // the root (broadcast, reduce) or the peer (send, receive)
	comm       *cco.Comm
	st         *stream
	bcast      bool   // an ncclBcast (a broadcast in place)
	residence  int    // a PreMulSum's scalar: ncclScalarHost or ncclScalarDev
	scalar     uint64 // its bytes, or its device address
	who, site  string
	inst       *ncclInst
	queued     bool // its group ended: it is stream work
}

func (o *ncclOp) call() string {
	if o.bcast {
		return "ncclBcast"
	}
	return ncclCollNames[o.kind]
}

// ncclInst is one op as its ranks make it: a collective, or a send and
// its receive.
type ncclInst struct {
	what   string    // for reports
	ranks  []int     // the ranks that take part
	ops    []*ncclOp // by position in ranks
	posted []bool    // by position in ranks
	n      int       // posted so far
	done   bool
	bytes  uint64    // what a rank sends, for the op's time
	arrive race.Sync // each post releases into it
	end    race.Sync // the move releases into it
	wl     *sim.WatchList
	forget func() // drops it from the matching maps once done: every rank's call has found it
}

// ncclState is the run's matching state.
type ncclState struct {
	colls map[ncclCollKey]*ncclInst
	p2p   map[ncclP2PKey]*ncclInst
	seq   map[ncclSeqKey]int // next sequence number
	group map[int]*ncclGroup // by host thread
}

type ncclCollKey struct {
	uid cco.UniqueId
	seq int
}

type ncclP2PKey struct {
	uid      cco.UniqueId
	src, dst int
	seq      int
}

type ncclSeqKey struct {
	uid  cco.UniqueId
	rank int // the caller
	peer int // -1 for collectives; else the peer
	send bool
}

type ncclGroup struct {
	depth int
	ops   []*ncclOp
}

func ncclRun() *ncclState {
	if rt.nccl == nil {
		rt.nccl = &ncclState{colls: map[ncclCollKey]*ncclInst{}, p2p: map[ncclP2PKey]*ncclInst{},
			seq: map[ncclSeqKey]int{}, group: map[int]*ncclGroup{}}
	}
	return rt.nccl
}

// ncclCollCall is EMUD_H_NCCL_COLL.
func ncclCollCall(h *host, act *sim.Actor, a []uint64, file string, line int, bad func(string, int, error) int) int {
	ns := ncclRun()
	g := ns.group[h.id]
	if g == nil {
		g = &ncclGroup{}
		ns.group[h.id] = g
	}
	kind := int(a[0])
	switch kind {
	case ncclCollGroupStart:
		g.depth++
		return 0
	case ncclCollGroupEnd:
		if g.depth == 0 {
			return bad("ncclGroupEnd", 1, fmt.Errorf("no ncclGroupStart is open on %s", h.name))
		}
		g.depth--
		if g.depth == 0 {
			ops := g.ops
			g.ops = nil
			ncclSubmit(act, ops)
		}
		return 0
	}
	call := ncclCollNames[kind]
	if call == "" {
		return bad("emud NCCL call", 1, fmt.Errorf("unknown collective %d (headers and library out of step?)", kind))
	}
	o, err := ncclParse(h, kind, a, file, line)
	if err != nil {
		return bad(call, 1, err)
	}
	ncclMatch(ns, o)
	if g.depth > 0 {
		g.ops = append(g.ops, o)
		return 0
	}
	ncclSubmit(act, []*ncclOp{o})
	// Outside a group, NCCL may block in the call until every rank has
	// made its own (its documentation: a thread managing several devices
	// must group their calls for that reason). emud always does, so a
	// program that relies on it not blocking hangs here, naming the rule,
	// on every seed, not only where NCCL happens to block.
	in := o.inst
	act.Await(sim.Wait{List: in.wl, Lo: 0, Hi: 1, Pred: in.called, Text: func() string { return ncclCallText(in, o, h) }})
	return 0
}

// called says every rank of the op has made its call.
func (in *ncclInst) called() bool {
	for _, o := range in.ops {
		if o == nil {
			return false
		}
	}
	return true
}

func ncclCallText(in *ncclInst, o *ncclOp, h *host) string {
	var missing []string
	for i, r := range in.ranks {
		if in.ops[i] == nil {
			missing = append(missing, fmt.Sprint(r))
		}
	}
	verb := "has"
	if len(missing) > 1 {
		verb = "have"
	}
	return fmt.Sprintf("%s at %s, outside a group, waits until every rank has made its call, as NCCL may (the %s); %s %s not: "+
		"where one thread makes several ranks' calls (%s), put them between ncclGroupStart and ncclGroupEnd", o.call(), o.site, in.what,
		ranksText(missing), verb, h.name)
}

// ranksText is "rank 2" or "ranks 1, 2, 3".
func ranksText(ranks []string) string {
	if len(ranks) == 1 {
		return "rank " + ranks[0]
	}
	return "ranks " + strings.Join(ranks, ", ")
}

func ncclParse(h *host, kind int, a []uint64, file string, line int) (*ncclOp, error) {
	o := &ncclOp{kind: kind, send: a[1], recv: a[2], count: a[3], dtype: int(a[4]), redop: int(a[5]), peer: int(int64(a[6])),
		bcast: a[9] != 0 && kind == ncclCollBroadcast, site: fmt.Sprintf("%s:%d", filepath.Base(file), line)}
	c, err := commOf(a[7])
	if err != nil {
		return nil, err
	}
	o.comm = c
	if o.dtype < 0 || o.dtype >= len(ncclTypeNames) {
		return nil, fmt.Errorf("datatype %d: emud reduces %s", o.dtype, strings.Join(ncclTypeNames, ", "))
	}
	reduces := kind == ncclCollAllReduce || kind == ncclCollReduce || kind == ncclCollReduceScatter
	if reduces && (o.redop < 0 || o.redop >= len(ncclOpNames)) {
		return nil, fmt.Errorf("reduction %d: emud has %s", o.redop, strings.Join(ncclOpNames, ", "))
	}
	if reduces && o.redop == ncclPreMulSum {
		o.residence, o.scalar = int(a[10]), a[11]
		switch o.residence {
		case ncclScalarHost:
		case ncclScalarDev:
			if err := ncclBuffer("the PreMulSum operator's scalar", o.scalar, ncclTypeSizes[o.dtype]); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("a PreMulSum operator's scalar residence %d: want host or device", o.residence)
		}
	}
	rooted := kind == ncclCollBroadcast || kind == ncclCollReduce || kind == ncclCollGather || kind == ncclCollScatter
	if (rooted || kind == ncclCollSend || kind == ncclCollRecv) && (o.peer < 0 || o.peer >= c.NRanks) {
		what := "root"
		if kind == ncclCollSend || kind == ncclCollRecv {
			what = "peer"
		}
		return nil, fmt.Errorf("%s %d: the communicator has ranks 0..%d", what, o.peer, c.NRanks-1)
	}
	if a[8] == 0 {
		o.st = nullStream(c.GPU) // the comm's device's: NCCL runs on the comm's GPU
	} else if o.st, err = streamOf(h, a[8]); err != nil {
		return nil, err
	}
	if o.count > (1<<40)/ncclTypeSizes[o.dtype]/uint64(c.NRanks) {
		return nil, fmt.Errorf("count %d of %s: more than emud's node holds", o.count, ncclTypeNames[o.dtype])
	}
	in, out := ncclSizes(kind, o.count, ncclTypeSizes[o.dtype], c.NRanks)
	// A broadcast reads the root's sendbuff only, a reduce writes the
	// root's recvbuff only: NCCL ignores the others.
	// (A scatter reads the root's sendbuff only, a gather writes the
	// root's recvbuff only.)
	if in > 0 && kind != ncclCollRecv && (kind != ncclCollBroadcast && kind != ncclCollScatter || c.Rank == o.peer) {
		if err := ncclBuffer("sendbuff", o.send, in); err != nil {
			return nil, err
		}
	}
	if out > 0 && kind != ncclCollSend && (kind != ncclCollReduce && kind != ncclCollGather || c.Rank == o.peer) {
		if err := ncclBuffer("recvbuff", o.recv, out); err != nil {
			return nil, err
		}
	}
	o.who = fmt.Sprintf("%s of rank %d on %s (%s)", o.call(), c.Rank, o.st, h.name)
	return o, nil
}

// ncclSizes is the bytes a rank's op reads and writes.
func ncclSizes(kind int, count, size uint64, n int) (in, out uint64) {
	b := count * size
	switch kind {
	case ncclCollAllGather:
		return b, b * uint64(n)
	case ncclCollReduceScatter:
		return b * uint64(n), b
	case ncclCollAlltoAll:
		return b * uint64(n), b * uint64(n)
	case ncclCollGather:
		return b, b * uint64(n)
	case ncclCollScatter:
		return b * uint64(n), b
	}
	return b, b
}

func ncclBuffer(what string, p, n uint64) error {
	if rt.mem.GPUOf(p) < 0 && rt.mem.HomeOf(p) != lsa.Host {
		return fmt.Errorf("%s %#x is not device memory (cudaMalloc, ncclMemAlloc) or cudaHostAlloc's", what, p)
	}
	return rt.mem.Check(what, p, n)
}

// ncclMatch gives o its instance, by call order.
func ncclMatch(ns *ncclState, o *ncclOp) {
	c := o.comm
	ci := commIndex(c)
	uid, site := rt.commUID[ci], rt.commSite[ci]
	if o.kind == ncclCollSend || o.kind == ncclCollRecv {
		src, dst := c.Rank, o.peer
		if o.kind == ncclCollRecv {
			src, dst = o.peer, c.Rank
		}
		k := ncclSeqKey{uid, c.Rank, o.peer, o.kind == ncclCollSend}
		seq := ns.seq[k]
		ns.seq[k] = seq + 1
		key := ncclP2PKey{uid, src, dst, seq}
		inst := ns.p2p[key]
		if inst == nil {
			inst = &ncclInst{what: fmt.Sprintf("send #%d from rank %d to rank %d", seq+1, src, dst), ranks: []int{src, dst},
				ops: make([]*ncclOp, 2), posted: make([]bool, 2)}
			inst.wl = rt.s.NewWatchList(inst.what)
			inst.forget = func() { delete(ns.p2p, key) }
			ns.p2p[key] = inst
		}
		i := 0
		if o.kind == ncclCollRecv {
			i = 1
		}
		inst.ops[i], o.inst = o, inst
		inst.wl.Notify(0, 1) // a call blocked until its peer's is let go
		return
	}
	k := ncclSeqKey{uid, c.Rank, -1, false}
	seq := ns.seq[k]
	ns.seq[k] = seq + 1
	key := ncclCollKey{uid, seq}
	inst := ns.colls[key]
	if inst == nil {
		inst = &ncclInst{what: fmt.Sprintf("collective #%d of the communicator made at %s", seq+1, site),
			ranks: make([]int, c.NRanks), ops: make([]*ncclOp, c.NRanks), posted: make([]bool, c.NRanks)}
		for r := range inst.ranks {
			inst.ranks[r] = r
		}
		inst.wl = rt.s.NewWatchList(inst.what)
		inst.forget = func() { delete(ns.colls, key) }
		ns.colls[key] = inst
	}
	inst.ops[c.Rank], o.inst = o, inst
	inst.wl.Notify(0, 1)
}

// commIndex is c's index in rt.comms (its uid's and site's too).
func commIndex(c *cco.Comm) int {
	for i, x := range rt.comms {
		if x == c {
			return i
		}
	}
	return -1
}

// ncclSubmit queues a group's ops: one job a stream.
func ncclSubmit(act *sim.Actor, ops []*ncclOp) {
	var streams []*stream
	by := map[*stream][]*ncclOp{}
	for _, o := range ops {
		o.queued = true
		if by[o.st] == nil {
			streams = append(streams, o.st)
		}
		by[o.st] = append(by[o.st], o)
	}
	for _, st := range streams {
		mine := by[st]
		names := make([]string, len(mine))
		for i, o := range mine {
			names[i] = o.call()
		}
		who := mine[0].who
		if len(mine) > 1 {
			who = fmt.Sprintf("a group of %s of rank %d on %s", strings.Join(names, ", "), mine[0].comm.Rank, st)
		}
		queueJob(act, st, names[0], who, func(w *sim.Actor) { ncclJob(w, mine) })
	}
}

// ncclJob posts its ops, moves the data of those it completes, and
// waits for all of them.
func ncclJob(w *sim.Actor, ops []*ncclOp) {
	t := w.RaceThread()
	for _, o := range ops {
		in := o.inst
		i := ncclPos(in, o)
		in.posted[i] = true
		in.n++
		if t != nil {
			t.Release(&in.arrive)
		}
		if in.n == len(in.ranks) {
			if t != nil {
				t.Acquire(&in.arrive)
			}
			if err := ncclMove(w, in); err != nil {
				w.Sim().Fail(err)
				return
			}
			in.done = true
			in.forget()
			if t != nil {
				t.Release(&in.end)
			}
			in.wl.Notify(0, 1)
		}
	}
	var bytes uint64
	for _, o := range ops {
		in := o.inst
		w.Await(sim.Wait{List: in.wl, Lo: 0, Hi: 1, Pred: func() bool { return in.done }, Text: func() string { return ncclWaitText(in, o) }})
		if t != nil {
			t.Acquire(&in.end)
		}
		bytes += in.bytes
	}
	w.Sleep(ncclCollLatency + sim.Time(bytes*uint64(sim.Microsecond)/ncclLinkRate))
}

func ncclPos(in *ncclInst, o *ncclOp) int {
	for i, p := range in.ops {
		if p == o {
			return i
		}
	}
	return -1
}

func ncclWaitText(in *ncclInst, o *ncclOp) string {
	var got, missing []string
	first := -1 // the first rank not posted
	for i, r := range in.ranks {
		if in.posted[i] {
			got = append(got, fmt.Sprint(r))
			continue
		}
		missing = append(missing, fmt.Sprint(r))
		if first < 0 {
			first = i
		}
	}
	not := "its call was not made"
	if first >= 0 {
		switch m := in.ops[first]; {
		case m != nil && !m.queued:
			not = "its call was made inside a ncclGroupStart with no ncclGroupEnd yet"
		case m != nil:
			not = "its call was made, and its stream has not reached it"
		}
	}
	return fmt.Sprintf("%s at %s, the %s: posted by %s; %s not yet (%s)", o.call(), o.site, in.what,
		ranksText(got), ranksText(missing), not)
}

// ncclMove checks that the ranks' ops agree and moves the data.
func ncclMove(w *sim.Actor, in *ncclInst) error {
	first := in.ops[0]
	for i, o := range in.ops[1:] {
		if err := ncclAgree(first, o); err != nil {
			return fmt.Errorf("%s: rank %d's %s at %s and rank %d's %s at %s disagree: %v (a rank's calls match the others' in the order each rank makes them: one that skips or adds a call meets the others' next)",
				in.what, in.ranks[0], first.call(), first.site, in.ranks[i+1], o.call(), o.site, err)
		}
	}
	size := ncclTypeSizes[first.dtype]
	n := len(in.ranks)
	read := func(o *ncclOp, p, k uint64) []byte {
		ncclAccess(w, o, p, k, false)
		return append([]byte(nil), unsafe.Slice((*byte)(ptr(p)), k)...)
	}
	write := func(o *ncclOp, p uint64, b []byte) {
		ncclAccess(w, o, p, uint64(len(b)), true)
		if len(b) > 0 {
			C.memmove(ptr(p), unsafe.Pointer(&b[0]), C.size_t(len(b)))
		}
	}
	b := first.count * size
	switch first.kind {
	case ncclCollSend:
		send, recv := in.ops[0], in.ops[1]
		write(recv, recv.recv, read(send, send.send, b))
		in.bytes = b
	case ncclCollAllReduce, ncclCollReduce:
		ins := make([][]byte, n)
		for r, o := range in.ops {
			ins[r] = read(o, o.send, b)
		}
		out := ncclReduce(ncclPreMul(w, in.ops, ins, n), first.dtype, ins, n)
		for r, o := range in.ops {
			if first.kind == ncclCollAllReduce || r == first.peer {
				write(o, o.recv, out)
			}
		}
		in.bytes = 2 * b * uint64(n-1) / uint64(n)
		if first.kind == ncclCollReduce {
			in.bytes = b
		}
	case ncclCollGather:
		root := in.ops[first.peer]
		out := make([]byte, 0, b*uint64(n))
		for _, o := range in.ops {
			out = append(out, read(o, o.send, b)...)
		}
		write(root, root.recv, out)
		in.bytes = b * uint64(n-1)
	case ncclCollScatter:
		root := in.ops[first.peer]
		src := read(root, root.send, b*uint64(n))
		for r, o := range in.ops {
			write(o, o.recv, src[uint64(r)*b:uint64(r+1)*b])
		}
		in.bytes = b * uint64(n-1)
	case ncclCollBroadcast:
		root := in.ops[first.peer]
		src := read(root, root.send, b)
		for _, o := range in.ops {
			write(o, o.recv, src)
		}
		in.bytes = b
	case ncclCollAllGather:
		out := make([]byte, 0, b*uint64(n))
		for _, o := range in.ops {
			out = append(out, read(o, o.send, b)...)
		}
		for _, o := range in.ops {
			write(o, o.recv, out)
		}
		in.bytes = b * uint64(n-1)
	case ncclCollReduceScatter:
		ins := make([][]byte, n)
		for r, o := range in.ops {
			ins[r] = read(o, o.send, b*uint64(n))
		}
		out := ncclReduce(ncclPreMul(w, in.ops, ins, n), first.dtype, ins, n)
		for r, o := range in.ops {
			write(o, o.recv, out[uint64(r)*b:uint64(r+1)*b])
		}
		in.bytes = b * uint64(n-1)
	case ncclCollAlltoAll:
		ins := make([][]byte, n)
		for r, o := range in.ops {
			ins[r] = read(o, o.send, b*uint64(n))
		}
		for r, o := range in.ops {
			out := make([]byte, 0, b*uint64(n))
			for k := range n {
				out = append(out, ins[k][uint64(r)*b:uint64(r+1)*b]...)
			}
			write(o, o.recv, out)
		}
		in.bytes = b * uint64(n-1)
	}
	notifyAll() // lanes polling the buffers see the new bytes
	return nil
}

// ncclAgree says why two ranks' ops of one instance differ, or nil.
func ncclAgree(a, b *ncclOp) error {
	kind := func(o *ncclOp) int {
		if o.kind == ncclCollRecv {
			return ncclCollSend
		}
		return o.kind
	}
	switch {
	case kind(a) != kind(b):
		return fmt.Errorf("%s against %s", a.call(), b.call())
	case a.count != b.count:
		return fmt.Errorf("count %d against %d", a.count, b.count)
	case a.dtype != b.dtype:
		return fmt.Errorf("%s against %s", ncclTypeNames[a.dtype], ncclTypeNames[b.dtype])
	case (a.kind == ncclCollAllReduce || a.kind == ncclCollReduce || a.kind == ncclCollReduceScatter) && a.redop != b.redop:
		return fmt.Errorf("%s against %s", ncclOpNames[a.redop], ncclOpNames[b.redop])
	case (a.kind == ncclCollBroadcast || a.kind == ncclCollReduce || a.kind == ncclCollGather || a.kind == ncclCollScatter) && a.peer != b.peer:
		return fmt.Errorf("root %d against %d", a.peer, b.peer)
	}
	return nil
}

func ncclAccess(w *sim.Actor, o *ncclOp, p, n uint64, write bool) {
	d := rt.s.Race()
	if d == nil || n == 0 {
		return
	}
	info := &race.Info{Kind: race.KindHost, OpKind: race.OpHost, Op: o.call(), Who: o.who, Site: o.site}
	d.Access(w.RaceThread(), d.Space(rt.mem, "LSA memory"), p, p+n, race.Access{Info: info, Write: write})
}

// ncclPreMul scales each rank's input by its scalar where the operator
// is a PreMulSum, and returns the operator that folds the scaled inputs
// (ncclSum then; the call's own otherwise). NCCL runs ncclAvg on the
// floating-point types as a PreMulSum by 1/n (float(1/n), rounded to the
// type), and on integers as a sum divided at the end: so does this.
func ncclPreMul(w *sim.Actor, ops []*ncclOp, ins [][]byte, n int) int {
	first := ops[0]
	size := ncclTypeSizes[first.dtype]
	float := first.dtype >= 6
	switch {
	case first.redop == ncclAvg && float:
		s := ncclScalarOf(first.dtype, 1/float64(n))
		for r := range ins {
			ncclScale(first.dtype, ins[r], s)
		}
	case first.redop == ncclPreMulSum:
		for r, o := range ops {
			s := make([]byte, 8)
			if o.residence == ncclScalarHost {
				binary.LittleEndian.PutUint64(s, o.scalar)
			} else {
				ncclAccess(w, o, o.scalar, size, false)
				copy(s, unsafe.Slice((*byte)(ptr(o.scalar)), size))
			}
			ncclScale(first.dtype, ins[r], s[:size])
		}
	default:
		return first.redop
	}
	return 0
}

// ncclScalarOf is v as a scalar of the floating-point dtype: through
// float for the 16-bit types, as NCCL makes ncclAvg's.
func ncclScalarOf(dtype int, v float64) []byte {
	b := make([]byte, 8)
	switch dtype {
	case 6:
		binary.LittleEndian.PutUint16(b, redop.RoundF16(float64(float32(v))))
		return b[:2]
	case 9:
		binary.LittleEndian.PutUint16(b, redop.RoundBF16(float64(float32(v))))
		return b[:2]
	case 7:
		binary.LittleEndian.PutUint32(b, math.Float32bits(float32(v)))
		return b[:4]
	case 10, 11:
		_, round := fp8(dtype)
		b[0] = round(float64(float32(v)))
		return b[:1]
	}
	binary.LittleEndian.PutUint64(b, math.Float64bits(v))
	return b
}

// ncclScale multiplies each element of in by the scalar s, in place, in
// the dtype's own arithmetic (a 16-bit float's product rounded once).
func ncclScale(dtype int, in, s []byte) {
	switch dtype {
	case 0:
		scaleAs[int8](in, s)
	case 1:
		scaleAs[uint8](in, s)
	case 2:
		scaleAs[int32](in, s)
	case 3:
		scaleAs[uint32](in, s)
	case 4:
		scaleAs[int64](in, s)
	case 5:
		scaleAs[uint64](in, s)
	case 7:
		scaleAs[float32](in, s)
	case 8:
		scaleAs[float64](in, s)
	case 10, 11:
		load, round := fp8(dtype)
		k := load(s[0])
		for i := range in {
			in[i] = round(load(in[i]) * k)
		}
	default:
		load, round := redop.F16ToFloat64, redop.RoundF16
		if dtype != 6 {
			load, round = redop.BF16ToFloat64, redop.RoundBF16
		}
		k := load(binary.LittleEndian.Uint16(s))
		for i := 0; i+1 < len(in); i += 2 {
			binary.LittleEndian.PutUint16(in[i:], round(load(binary.LittleEndian.Uint16(in[i:]))*k))
		}
	}
}

func scaleAs[T int8 | uint8 | int32 | uint32 | int64 | uint64 | float32 | float64](in, s []byte) {
	var zero T
	size := int(unsafe.Sizeof(zero))
	if len(in) < size {
		return
	}
	k := *(*T)(unsafe.Pointer(&s[0]))
	v := unsafe.Slice((*T)(unsafe.Pointer(&in[0])), len(in)/size)
	for i := range v {
		v[i] *= k
	}
}

// ncclReduce folds the ranks' inputs element by element, in rank order.
func ncclReduce(op, dtype int, ins [][]byte, n int) []byte {
	switch dtype {
	case 0:
		return reduceAs[int8](op, ins, n)
	case 1:
		return reduceAs[uint8](op, ins, n)
	case 2:
		return reduceAs[int32](op, ins, n)
	case 3:
		return reduceAs[uint32](op, ins, n)
	case 4:
		return reduceAs[int64](op, ins, n)
	case 5:
		return reduceAs[uint64](op, ins, n)
	case 7:
		return reduceAs[float32](op, ins, n)
	case 8:
		return reduceAs[float64](op, ins, n)
	case 10, 11:
		return reduceFP8(op, dtype, ins)
	}
	return reduceHalf(op, dtype, ins)
}

// reduceAs is ncclReduce over a Go type (an element's step in T's own
// arithmetic, as a kernel's).
func reduceAs[T int8 | uint8 | int32 | uint32 | int64 | uint64 | float32 | float64](op int, ins [][]byte, n int) []byte {
	var zero T
	size := int(unsafe.Sizeof(zero))
	out := make([]T, len(ins[0])/size)
	view := func(b []byte) []T {
		if len(b) == 0 {
			return nil
		}
		return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), len(b)/size)
	}
	copy(out, view(ins[0]))
	for _, in := range ins[1:] {
		v := view(in)
		switch op {
		case 0, 4:
			for i := range out {
				out[i] += v[i]
			}
		case 1:
			for i := range out {
				out[i] *= v[i]
			}
		case 2:
			for i := range out {
				out[i] = max(out[i], v[i])
			}
		default:
			for i := range out {
				out[i] = min(out[i], v[i])
			}
		}
	}
	if op == ncclAvg { // the integers' (ncclPreMul premultiplies the floats'): the sum divided at the end
		for i := range out {
			out[i] /= T(n)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&out[0])), len(out)*size)
}

// fp8 is the load and rounding of ncclFloat8e4m3 (10) or ncclFloat8e5m2:
// rounding saturates to the largest finite value, as CUDA's fp8
// constructors (NCCL's reductions build their results with them) do.
func fp8(dtype int) (load func(uint8) float64, round func(float64) uint8) {
	if dtype == 10 {
		return redop.E4M3ToFloat64, redop.RoundE4M3
	}
	return redop.E5M2ToFloat64, redop.RoundE5M2
}

// reduceFP8 is ncclReduce over the 8-bit floats: each step's exact result
// (a sum or product of two fp8 values is exact in float64) rounded once.
func reduceFP8(op, dtype int, ins [][]byte) []byte {
	load, round := fp8(dtype)
	out := append([]byte(nil), ins[0]...)
	for _, in := range ins[1:] {
		for i := range out {
			a, b := load(out[i]), load(in[i])
			switch op {
			case 0:
				out[i] = round(a + b)
			case 1:
				out[i] = round(a * b)
			case 2:
				if b > a || a != a {
					out[i] = in[i]
				}
			default:
				if b < a || a != a {
					out[i] = in[i]
				}
			}
		}
	}
	return out
}

// reduceHalf is ncclReduce over half (dtype 6) or bfloat16: each step's
// exact result rounded once to the type (package redop's rounding, as
// the CFT reductions round).
func reduceHalf(op, dtype int, ins [][]byte) []byte {
	load, round := redop.F16ToFloat64, redop.RoundF16
	if dtype != 6 {
		load, round = redop.BF16ToFloat64, redop.RoundBF16
	}
	value := func(b []byte, i int) float64 { return load(binary.LittleEndian.Uint16(b[i:])) }
	out := make([]byte, len(ins[0]))
	for i := 0; i < len(out); i += 2 {
		acc := value(ins[0], i)
		for _, in := range ins[1:] {
			v := value(in, i)
			switch op {
			case 0: // ncclAvg came as a sum of premultiplied inputs (ncclPreMul)
				acc += v
			case 1:
				acc *= v
			case 2:
				acc = math.Max(acc, v)
			default:
				acc = math.Min(acc, v)
			}
			acc = load(round(acc))
		}
		binary.LittleEndian.PutUint16(out[i:], round(acc))
	}
	return out
}
