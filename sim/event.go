package sim

// event is one entry of the event queue: a callback, or the resumption of
// an actor. Events are recycled through a free list because the engine
// schedules one per packet.
type event struct {
	t     Time
	seq   uint64
	gen   uint64 // bumped on recycle, so a stale Timer cannot cancel a reused event
	fn    func()
	actor *Actor
	token uint64 // actor wake token; a wake whose token is stale is dropped
	dead  bool   // cancelled; skipped when popped
	work  bool   // AtWork: holds off the watchdog while pending
}

// eventHeap is a binary min-heap ordered by (t, seq). Each entry carries
// its key beside the pointer, so sifting compares keys in the heap's own
// array instead of chasing every event's pointer (a run of a million
// pending events spent most of its time in those cache misses). The order
// is the same total order, so runs and digests do not change.
type eventHeap []heapEntry

type heapEntry struct {
	t   Time
	seq uint64
	e   *event
}

func (h eventHeap) less(i, j int) bool {
	if h[i].t != h[j].t {
		return h[i].t < h[j].t
	}
	return h[i].seq < h[j].seq
}

func (h *eventHeap) push(e *event) {
	*h = append(*h, heapEntry{e.t, e.seq, e})
	q := *h
	i := len(q) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !q.less(i, p) {
			break
		}
		q[i], q[p] = q[p], q[i]
		i = p
	}
}

func (h *eventHeap) pop() *event {
	q := *h
	n := len(q) - 1
	top := q[0].e
	q[0] = q[n]
	q[n] = heapEntry{}
	q = q[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && q.less(r, l) {
			m = r
		}
		if !q.less(m, i) {
			break
		}
		q[i], q[m] = q[m], q[i]
		i = m
	}
	*h = q
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
