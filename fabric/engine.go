package fabric

import (
	"fmt"

	"github.com/emud-dev/emud/fabric/redop"
	"github.com/emud-dev/emud/hostmem"
	"github.com/emud-dev/emud/race"
	"github.com/emud-dev/emud/sim"
)

// fop is one fabric operation in flight. Its fields are grouped by size
// (the small ones last) so that it packs without padding.
type fop struct {
	tg     leTarget
	smem   []byte // the issuing block's shared memory
	data   []byte // a put's or red's data: an internal op's payload, a snapshot, or nil (phantom)
	mb     *mbar
	issuer *issuer
	race   *opRace // the race detector's state (race.go); nil when off

	rank    int // issuing rank
	leOff   uint64
	bytes   uint64
	smemOff int
	units   int64 // tx units: bytes/16, or bytes for fetching ops

	// A counted write (counted.go): each granule delivered adds its bytes
	// to the 8-byte counter at counterOff of the destination.
	counterOff uint64

	// A put's or red's schedule, fixed at start: serialisation time,
	// granule count, arrival at each destination and completion.
	ser, end sim.Time
	k        uint64
	arrs     []sim.Time
	delivs   int // source reads and deliveries scheduled and not yet run
	// steps counts the granules read (a put or red) or landed (a get or
	// pullRed) so far. The k-th, not granule k-1, frees the shared memory
	// or completes the op: PCT may defer one granule's step past the later
	// ones', and neither may come before every granule's.
	steps uint64

	smemSpace race.SpaceID // the issuing block's shared memory, for the race detector

	// one and arr1 back dsts and the arrival times of a unicast op, so
	// that it allocates neither.
	one  [1]int
	arr1 [1]sim.Time

	// small holds the snapshot of a put or red of up to smallOp bytes, so
	// that it takes no buffer of its own; a bigger one takes one from
	// sys.bufs (bufTaken), returned once all is done.
	small [smallOp]byte

	red      RedOp
	mask     uint16
	kind     opKind
	code     uint8 // an injected fault's report code
	started  bool
	pooled   bool // from sys.fops: returned there once nothing refers to it
	fail     bool // injected fabric error: data does not land, the phase reports
	counted  bool
	internal bool // a barrier's own op: its data is given (not read from shared memory), not checked, not failed
	bufTaken bool // data is from sys.bufs
	done     bool // complete has run
	// completeDue: the completion step came while deliveries were still
	// pending (PCT deferred one): completion waits for the last of them,
	// as the ack it models cannot come before the data has landed.
	completeDue bool
}

// smallOp is the largest put or red whose snapshot the fop holds itself.
const smallOp = 64

// call is the operation's name in messages: the NCCL call, or the
// barrier's own put or redMultimem.
func (o *fop) call() string {
	i := int(o.kind) * 4
	if o.counted {
		i++
	}
	if o.internal {
		i += 2
	}
	return fopCalls[i]
}

// fopCalls is every name call returns, made once: a name per operation
// would cost a string each.
var fopCalls = func() []string {
	var n []string
	for _, k := range opNames {
		n = append(n, k, k+"Counted", "barrier "+k, "barrier "+k+"Counted")
	}
	return n
}()

func (o *fop) dsts() []int {
	if o.tg.multicast {
		return o.tg.members
	}
	o.one[0] = o.tg.rank
	return o.one[:]
}

// Granule is how much of an operation's data moves at a time: a put's
// source is read, and its data lands at each destination, granule by
// granule in address order as the bytes stream through the ports (a get
// and a pullRed likewise), so a load during an operation sees the
// granules landed so far. The fabric model has no link chunk to follow;
// 4 KiB is finer than any NVLink packetisation matters for here.
const Granule = 4096

// granules is how many granules n bytes take (at least one).
func granules(n uint64) uint64 { return max(1, (n+Granule-1)/Granule) }

// granuleAt is when granule j of k is through a port that the whole
// transfer leaves (or enters) over [end − ser, end].
func granuleAt(end, ser sim.Time, j, k uint64) sim.Time {
	return end - ser + sim.Time(uint64(ser)*(j+1)/k)
}

// granuleSpan is granule j's byte range of an n-byte operation.
func granuleSpan(j, n uint64) (lo, hi uint64) { return j * Granule, min((j+1)*Granule, n) }

// start hands o to the fabric and schedules its steps with the model's
// timing (see the package doc: ports, latency, fan-out), granule by
// granule.
func (sys *System) start(o *fop) {
	o.started = true
	sys.raceStart(o)
	s := sys.s
	mb := o.mb
	mb.inflight++
	k := sys.granulesOf(o)
	switch o.kind {
	case opPut, opPutMC, opRed, opRedMC:
		mb.smemBusy++
		dsts := o.dsts()
		arrs := o.arr1[:]
		if len(dsts) > 1 {
			arrs = make([]sim.Time, len(dsts))
		}
		ser, read, end := sys.ports.Put(s.Now(), o.rank, dsts, o.tg.multicast, o.bytes, arrs)
		o.ser, o.k, o.arrs, o.end = ser, k, arrs, end
		o.delivs += int(k)
		for j := range k {
			s.AtWorkStep(granuleAt(read, ser, j, k), o, stepRead|j<<stepShift)
		}
	case opGet:
		d := o.tg.rank
		ser, sent, arr := sys.ports.Get(s.Now(), o.rank, d, o.bytes)
		o.k = k
		for j := range k {
			lo, hi := granuleSpan(j, o.bytes)
			s.AtWork(granuleAt(sent, ser, j, k), func() {
				data, ok := sys.fabricRead(o, d, lo, hi, true)
				if !ok {
					return
				}
				s.AtWork(granuleAt(arr, ser, j, k), func() { sys.landSmem(o, data, lo, hi) })
			})
		}
	case opPullRed:
		ser, ready, arr := sys.ports.PullRed(s.Now(), o.rank, o.tg.members, o.bytes)
		o.k = k
		for j := range k {
			lo, hi := granuleSpan(j, o.bytes)
			s.AtWork(granuleAt(ready, ser, j, k), func() {
				ins := make([][]byte, 0, len(o.tg.members))
				for _, d := range o.tg.members {
					// Folded right here: the members' bytes need no snapshot.
					data, ok := sys.fabricRead(o, d, lo, hi, false)
					if !ok {
						return
					}
					if data != nil {
						ins = append(ins, data)
					}
				}
				// The switch folds the members' copies in team order (phantom
				// windows have none: nothing to fold).
				var acc []byte
				if len(ins) == len(o.tg.members) {
					acc = sys.bufs.get(hi - lo)
					clear(acc)
					if err := redop.Reduce(o.red.Op, o.red.Type, acc, ins...); err != nil {
						sys.s.Fail(fmt.Errorf("fabric: pullRed on rank %d: %w", o.rank, err))
						return
					}
				}
				s.AtWork(granuleAt(arr, ser, j, k), func() { sys.landSmem(o, acc, lo, hi) })
			})
		}
	}
}

// granulesOf is how many steps o's data moves in.
func (sys *System) granulesOf(o *fop) uint64 {
	if sys.phantom && !o.internal && sys.raceEP == nil {
		// No bytes to stream: the operation lands in one step, when its
		// last granule would. Its port times are the same; with fewer
		// events the seed's tie-breaks fall otherwise (package doc).
		return 1
	}
	return granules(o.bytes)
}

// The steps of a put or red, scheduled with sim.AtWorkStep: the kind in
// the low bits of the step's argument, the granule j above it and, for a
// delivery, the destination's index i in the top bits.
const (
	stepRead     = 0
	stepDeliver  = 1
	stepComplete = 2
	stepKindMask = 3
	stepShift    = 2
	stepDstShift = 42 // j below it: up to 2^40 granules; i above: 2^22 destinations
)

// Step runs one step of a put or red (sim.Handler).
func (o *fop) Step(arg uint64) {
	j := (arg >> stepShift) & (1<<(stepDstShift-stepShift) - 1)
	switch arg & stepKindMask {
	case stepRead:
		o.mb.sys.readGranule(o, j)
	case stepDeliver:
		o.mb.sys.deliverGranule(o, int(arg>>stepDstShift), j)
	case stepComplete:
		if o.delivs > 0 {
			o.completeDue = true
			return
		}
		o.mb.sys.complete(o)
	}
}

// readGranule is the source read of granule j of a put or red: it is
// snapshot, sent to every destination, and at the last granule the shared
// memory is free and the completion is scheduled. The snapshot buffer is
// taken at the first read, not at the start: a put's data then lives from
// its read to its completion, so a wave of puts queued behind the port
// holds a few buffers instead of one each.
func (sys *System) readGranule(o *fop, j uint64) {
	s, mb, k := sys.s, o.mb, o.k
	lo, hi := granuleSpan(j, o.bytes)
	if o.data == nil && !sys.phantom {
		if o.bytes <= smallOp {
			o.data = o.small[:o.bytes]
		} else {
			o.data, o.bufTaken = sys.bufs.get(o.bytes), true
		}
	}
	if !o.internal && o.data != nil {
		copy(o.data[lo:hi], o.smem[o.smemOff+int(lo):o.smemOff+int(hi)])
	}
	sys.raceSmemRead(o, lo, hi-lo)
	o.steps++
	last := o.steps == k // the last read in time (PCT may defer one): shared memory is free only then
	if last {
		o.raceRelease(&mb.raceSmem)
		mb.smemBusy--
		mb.wl.Notify(0, 1)
	}
	// Granule j lands at destination i at granuleAt(arrs[i], …): arrs[i]
	// plus an offset of j's alone. One AtWorkSteps holds a multicast's
	// deliveries in one queue entry, not one event per member (a multimem
	// barrier of n ranks would queue n² of them), in the order and with
	// the tie-breaks that separate events would have.
	o.delivs += len(o.arrs)
	s.AtWorkSteps(o.arrs, granuleAt(0, o.ser, j, k), o, stepDeliver|j<<stepShift, 1<<stepDstShift)
	if last {
		s.AtWorkStep(o.end, o, stepComplete)
	}
	o.delivs-- // this read
	sys.release(o)
}

// deliverGranule lands granule j of a put or red at its i-th destination.
func (sys *System) deliverGranule(o *fop, i int, j uint64) {
	lo, hi := granuleSpan(j, o.bytes)
	sys.deliver(o, o.dsts()[i], o.data, lo, hi)
	o.delivs--
	if o.completeDue && o.delivs == 0 {
		o.completeDue = false
		sys.complete(o) // it releases o
		return
	}
	sys.release(o)
}

// landSmem lands a fetching op's granule [lo, hi) in its shared memory
// (nothing to copy for a phantom window or a failed op) and completes the
// op when every granule has landed: the k-th to land, which is granule
// k-1 unless PCT deferred an earlier one (completing at granule k-1 then
// let the kernel use shared memory that granule had not reached yet).
func (sys *System) landSmem(o *fop, data []byte, lo, hi uint64) {
	if !o.fail && data != nil {
		copy(o.smem[o.smemOff+int(lo):], data)
	}
	if data != nil {
		sys.bufs.put(data) // fabricRead's snapshot or pullRed's sum: landed
	}
	sys.raceSmemWrite(o, lo, hi-lo)
	if o.steps++; o.steps == o.k {
		sys.complete(o)
	}
}

// fabricRead reads [leOff+lo, leOff+hi) of rank d for a fetching op,
// running the fence checker for the fabric proxy: a snapshot from sys.bufs
// (landSmem returns it) or, without snapshot, the live bytes for a caller
// done with them in this event; nil data for a phantom window; ok false
// means the run failed.
func (sys *System) fabricRead(o *fop, d int, lo, hi uint64, snapshot bool) (data []byte, ok bool) {
	if sys.chk != nil && !o.internal {
		if err := sys.chk.read(o.rank, d, o.leOff+lo, hi-lo, ProxyFabric, o.call()); err != nil {
			sys.s.Fail(err)
			return nil, false
		}
	}
	sys.raceRemote(o, d, lo, hi-lo, false)
	if b := sys.ranks[d].bytes(o.leOff+lo, hi-lo); b != nil {
		if !snapshot {
			return b, true
		}
		c := sys.bufs.get(hi - lo)
		copy(c, b)
		return c, true
	}
	return nil, true
}

// deliver lands bytes [lo, hi) of o's data in rank d's memory: a masked
// copy or an element-wise reduction, at one instant (one allowed
// interleaving of the element-wise atomics).
func (sys *System) deliver(o *fop, d int, data []byte, lo, hi uint64) {
	if o.fail {
		return // the op failed in the fabric: nothing lands
	}
	r := sys.ranks[d]
	dst := r.bytes(o.leOff+lo, hi-lo)
	if data != nil {
		data = data[lo:hi]
	}
	var err error
	switch {
	case dst == nil || data == nil:
		// A phantom window: the op took its time, nothing lands.
	case o.kind.reduces() && o.mask == FullMask:
		err = redop.Apply(o.red.Op, o.red.Type, dst, data)
	case o.kind.reduces():
		err = redop.ApplyMasked(o.red.Op, o.red.Type, dst, data, byteMask(o.mask, len(dst)))
	case o.mask == FullMask:
		copy(dst, data)
	default:
		for i := range dst {
			if o.mask&(1<<uint(i%16)) != 0 {
				dst[i] = data[i]
			}
		}
	}
	if err != nil {
		sys.s.Fail(fmt.Errorf("fabric: %s from rank %d to rank %d: %w", o.call(), o.rank, d, err))
		return
	}
	if sys.chk != nil && !o.internal {
		sys.chk.fabricWrite(o, d, lo, hi)
	}
	sys.raceRemote(o, d, lo, hi-lo, true)
	sys.s.Progress()
	r.wl.Notify(o.leOff+lo, o.leOff+hi)
	if o.counted {
		sys.countDelivered(o, d, hi-lo)
	}
}

// byteMask expands a cpMask to one enable byte per data byte.
func byteMask(m uint16, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		if m&(1<<uint(i%16)) != 0 {
			b[i] = 1
		}
	}
	return b
}

// complete is complete_tx on the op's mbarrier; a failed op sets the
// phase's report.
func (sys *System) complete(o *fop) {
	o.done = true
	mb := o.mb
	o.raceRelease(&mb.raceDone)
	mb.tx -= o.units
	mb.inflight--
	if o.fail {
		mb.reported, mb.report = true, o.code
	}
	sys.s.Progress()
	mb.maybeComplete()
	mb.wl.Notify(0, 1)
	sys.release(o)
}

// release returns o's snapshot to the pool once the op has completed and
// every granule has been read and has landed at every destination, and o
// itself to sys.fops if it came from there: no event, issuer or mbarrier
// refers to it any more.
func (sys *System) release(o *fop) {
	if !o.done || o.delivs != 0 {
		return
	}
	if o.bufTaken {
		sys.bufs.put(o.data)
		o.data, o.bufTaken = nil, false
	}
	if o.pooled {
		o.pooled = false
		sys.fops = append(sys.fops, o)
	}
}

// newFop is a fop for a user put or red, from sys.fops when one is free
// (zeroed: the caller sets every field it needs).
func (sys *System) newFop() *fop {
	if n := len(sys.fops); n > 0 {
		o := sys.fops[n-1]
		sys.fops[n-1] = nil
		sys.fops = sys.fops[:n-1]
		*o = fop{}
		return o
	}
	if len(sys.fopSlab) == 0 {
		// Made a chunk at a time: a wave of puts in flight at once would
		// otherwise allocate each on its own.
		sys.fopSlab = make([]fop, fopChunk)
	}
	o := &sys.fopSlab[0]
	sys.fopSlab = sys.fopSlab[1:]
	return o
}

// fopChunk is how many fops newFop makes at a time.
const fopChunk = 32

// bufPool keeps the snapshot buffers of finished operations for the next
// ones of the same size: a put's data lives from its source read to its
// completion, so a run reuses a few buffers instead of allocating one per
// operation. They are kept with no content named: the last kept of a
// size is taken first, uncleared (its taker overwrites or clears it).
type bufPool struct {
	free hostmem.KeptList
}

func (p *bufPool) get(n uint64) []byte {
	if b, _ := p.free.Take(n, ""); b != nil {
		return b
	}
	return make([]byte, n)
}

func (p *bufPool) put(b []byte) { p.free.Put(b, "") }
