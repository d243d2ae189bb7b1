package sim

import "math/bits"

// event is one entry of the event queue: a callback, a handler's step, or
// the resumption of an actor. Events live in chunks the Sim owns and are
// recycled through a free list because the engine schedules one per
// packet.
type event struct {
	t     Time
	seq   uint64
	gen   uint64 // bumped on recycle, so a stale Timer cannot cancel a reused event
	fn    func()
	h     Handler // with arg: a step of a handler (AtWorkStep), no closure
	arg   uint64
	actor *Actor
	steps *stepRun // the entry of an AtWorkSteps call, not an event to run itself
	token uint64   // actor wake token; a wake whose token is stale is dropped
	id    uint32   // index in the Sim's chunks: what the heap holds
	dead  bool     // cancelled; skipped when popped
	work  bool     // AtWork: holds off the watchdog while pending
	long  bool     // the deadline of a timed wait longer than the watchdog's span
}

// Handler runs the steps a layer schedules with [Sim.AtWorkStep]: Step(arg)
// at the step's time. A per-operation object that is its own Handler
// schedules its steps without a closure each (the fabric's operations
// schedule several per operation).
type Handler interface {
	Step(arg uint64)
}

// eventChunk is how many events one chunk of the Sim's event store holds.
const (
	eventChunkBits = 8
	eventChunk     = 1 << eventChunkBits
)

// eventQueue is the pending events in (t, seq) order: a few sorted runs
// beside the heap. Most events are scheduled in time order within their
// kind (a port's packets, their arrivals, their completions), so a new
// event usually goes at the end of a run whose last event is not later,
// and popping it costs a comparison of the runs' heads instead of a sift.
// Events that fit no run go to the heap. Pop takes the least head of all,
// so the order is the same total order the heap alone gives (seq is
// unique): runs and digests do not change.
type eventQueue struct {
	heap eventHeap
	runs [queueRuns]eventRun
	busy uint8 // bit i: runs[i] is not empty (first looks at those alone)
	// top is first's answer until the queue changes: the scheduler asks
	// for the first event up to three times per event (firstID, pop, then
	// peekTime for the next one)
	top struct {
		run   int
		x     *heapEntry
		valid bool
	}
	n       int
	free    []*runBlock // emptied blocks of the runs, for reuse
	scratch *Scratch    // where new blocks come from (Config.Scratch), nil: the heap
}

// queueRuns is how many sorted runs the queue keeps beside its heap.
const queueRuns = 8

// eventRun is one sorted run, a queue of blocks: blocks[0][head:] through
// the last block's first tail entries are pending, in order. Blocks that
// empty go back to the queue's free list, so a run never copies its
// entries and the runs together hold about as many blocks as there are
// pending events.
type eventRun struct {
	blocks []*runBlock
	head   int // first pending entry of blocks[0]
	tail   int // entries used in the last block
}

// runBlock is a block of a run.
type runBlock [runBlockLen]heapEntry

const runBlockLen = 256

func (r *eventRun) empty() bool { return len(r.blocks) == 0 }

func (r *eventRun) last() *heapEntry { return &r.blocks[len(r.blocks)-1][r.tail-1] }

func (r *eventRun) front() *heapEntry { return &r.blocks[0][r.head] }

func (q *eventQueue) len() int { return q.n }

func (q *eventQueue) push(e *event) {
	q.top.valid = false
	q.n++
	x := heapEntry{e.t, e.seq, e.id}
	for i := range q.runs {
		r := &q.runs[i]
		if !r.empty() && !r.last().before(&x) {
			continue
		}
		if r.empty() || r.tail == runBlockLen {
			var b *runBlock
			if n := len(q.free); n > 0 {
				b = q.free[n-1]
				q.free = q.free[:n-1]
			} else {
				b = q.scratch.block()
			}
			if r.empty() {
				r.head = 0
				q.busy |= 1 << i
			}
			r.blocks = append(r.blocks, b)
			r.tail = 0
		}
		r.blocks[len(r.blocks)-1][r.tail] = x
		r.tail++
		return
	}
	q.heap.push(x)
}

// pushHeap is push into the heap itself, never a run: for an entry whose
// key moves on in place (fixTop), which a run cannot hold.
func (q *eventQueue) pushHeap(e *event) {
	q.top.valid = false
	q.n++
	q.heap.push(heapEntry{e.t, e.seq, e.id})
}

// firstID is the id of the pending event that comes first; the queue must
// not be empty.
func (q *eventQueue) firstID() uint32 {
	_, x, _ := q.first()
	return x.id
}

// fixTop gives the heap's top, e's entry, e's new key, which must not be
// earlier than its old one.
func (q *eventQueue) fixTop(e *event) {
	q.top.valid = false
	q.heap.siftDown(0, heapEntry{e.t, e.seq, e.id})
}

// first is the pending event that comes first: a run's index, or -1 for
// the heap's top. ok is false when nothing is pending.
func (q *eventQueue) first() (run int, x *heapEntry, ok bool) {
	if q.top.valid {
		return q.top.run, q.top.x, q.top.x != nil
	}
	run = -2
	if len(q.heap) > 0 {
		run, x = -1, &q.heap[0]
	}
	for m := q.busy; m != 0; m &= m - 1 {
		i := bits.TrailingZeros8(m)
		if f := q.runs[i].front(); x == nil || f.before(x) {
			run, x = i, f
		}
	}
	q.top.run, q.top.x, q.top.valid = run, x, true
	return run, x, x != nil
}

// peekTime is the time of the first pending event; ok is false when
// nothing is pending.
func (q *eventQueue) peekTime() (Time, bool) {
	_, x, ok := q.first()
	if !ok {
		return 0, false
	}
	return x.t, true
}

// pop removes the first pending event and returns its id; the queue must
// not be empty.
func (q *eventQueue) pop() uint32 {
	run, x, _ := q.first()
	q.top.valid = false
	q.n--
	if run < 0 {
		return q.heap.pop()
	}
	id := x.id
	r := &q.runs[run]
	r.head++
	if len(r.blocks) == 1 && r.head == r.tail {
		// The run is empty: keep nothing.
		q.free = append(q.free, r.blocks[0])
		r.blocks[0] = nil
		r.blocks, r.head, r.tail = r.blocks[:0], 0, 0
		q.busy &^= 1 << run
	} else if r.head == runBlockLen {
		q.free = append(q.free, r.blocks[0])
		r.blocks[0] = nil
		r.blocks, r.head = r.blocks[1:], 0
	}
	return id
}

// eventHeap is a 4-ary min-heap ordered by (t, seq). Each entry carries
// its key and the event's index beside each other, so sifting compares
// keys in the heap's own array instead of chasing every event's pointer,
// and the array holds no pointers: the collector neither scans it nor
// puts write barriers on its sifts. Four children per node halve the
// levels a pop sifts through.
type eventHeap []heapEntry

type heapEntry struct {
	t   Time
	seq uint64
	id  uint32
}

func (a *heapEntry) before(b *heapEntry) bool {
	if a.t != b.t {
		return a.t < b.t
	}
	return a.seq < b.seq
}

func (h *eventHeap) push(x heapEntry) {
	*h = append(*h, x)
	q := *h
	i := len(q) - 1
	for i > 0 {
		p := (i - 1) / 4
		if !x.before(&q[p]) {
			break
		}
		q[i] = q[p]
		i = p
	}
	q[i] = x
}

// pop removes the first entry and returns its event's index.
func (h *eventHeap) pop() uint32 {
	q := *h
	n := len(q) - 1
	top := q[0].id
	x := q[n]
	q = q[:n]
	*h = q
	if n == 0 {
		return top
	}
	h.siftDown(0, x)
	return top
}

// siftDown puts x at i or below, where it belongs among i's descendants.
func (h *eventHeap) siftDown(i int, x heapEntry) {
	q := *h
	n := len(q)
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		m := c
		for k := c + 1; k < c+4 && k < n; k++ {
			if q[k].before(&q[m]) {
				m = k
			}
		}
		if !q[m].before(&x) {
			break
		}
		q[i] = q[m]
		i = m
	}
	q[i] = x
}

// Timer is a handle on a scheduled callback.
type Timer struct {
	e   *event
	gen uint64
}

// Stop cancels the callback if it has not run yet. It reports whether it did.
func (t Timer) Stop() bool {
	if t.e == nil || t.e.gen != t.gen || t.e.dead {
		return false
	}
	t.e.dead = true
	return true
}
