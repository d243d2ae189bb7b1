package sim

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
	token uint64 // actor wake token; a wake whose token is stale is dropped
	id    uint32 // index in the Sim's chunks: what the heap holds
	dead  bool   // cancelled; skipped when popped
	work  bool   // AtWork: holds off the watchdog while pending
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

// eventHeap is a 4-ary min-heap ordered by (t, seq). Each entry carries
// its key and the event's index beside each other, so sifting compares
// keys in the heap's own array instead of chasing every event's pointer (a
// run of a million pending events spent most of its time in those cache
// misses), and the array holds no pointers: the collector neither scans it
// nor puts write barriers on its sifts. Four children per node halve the
// levels a pop sifts through. The order is the same total order as any
// heap's (seq is unique), so runs and digests do not depend on its shape.
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

func (h *eventHeap) push(e *event) {
	*h = append(*h, heapEntry{e.t, e.seq, e.id})
	q := *h
	i := len(q) - 1
	x := q[i]
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
	i := 0
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
	return top
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
