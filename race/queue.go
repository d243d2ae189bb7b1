package race

import "sort"

// Mark is one point of a thread's program, released: whose it is and what
// the thread knew then (a post to a queue, a doorbell).
type Mark struct {
	tid int32
	// VC is the thread's clock at the mark (a Snapshot).
	VC VC
}

// Mark releases t's clock as Snapshot does, and remembers whose it is.
func (t *Thread) Mark() Mark { return Mark{tid: t.id, VC: t.Snapshot()} }

// Valid reports whether m was made by Thread.Mark.
func (m Mark) Valid() bool { return m.VC != nil }

func (m Mark) clk() uint32 { return m.VC.get(m.tid) }

// Before reports whether the point m is ordered before a thread whose
// clock is v: v knows the marking thread's clock at the mark.
func (m Mark) Before(v VC) bool { return m.VC != nil && m.clk() <= v.get(m.tid) }

// Queue is an in-order executor of work that other threads post: an SDMA
// queue. It runs its items one after another, but that order is an
// ordering only where the posts themselves were ordered. Two posts from
// threads that nothing orders (two kernels the host launched without a
// wait between them, two waves with no barrier between their posts) land
// in the ring in an order the schedule chose, and so the engine's accesses
// for one are concurrent with those for the other even though the queue
// ran them in turn.
//
// So an item runs on a thread of the queue per posting thread (items of
// one poster are in its program order, and the queue keeps that order),
// which knows:
//   - what the poster knew at the post (and the extra releases Start is
//     given, a doorbell rung by a thread that knew of the post);
//   - what the queue knew after each earlier item whose post is ordered
//     before this item's start (in-order execution: it retired first).
//
// Drain (quiet) gives a thread what the queue knew after the items up to
// the target whose posts are ordered before the drain: the drainer's own
// posts and those it knew of, not the ones that happened to be rung before
// the target.
type Queue struct {
	d    *Detector
	name string
	subs []*queueSub
	cur  *queueSub // the item running, if any
	clk  uint32    // its post's clock
}

type queueSub struct {
	poster int32
	t      *Thread
	items  []queueItem
}

// queueItem is a retired item.
type queueItem struct {
	clk uint32 // the poster's clock at the post
	end uint64 // the item's end position (monotonic)
	vc  VC     // the sub-thread's clock after it
}

// maxQueueItems bounds the retired items a sub-thread keeps. A query for
// an older item than the ones kept finds none and acquires less: it can
// report a race that an edge would have ordered, never hide one.
const maxQueueItems = 1024

// NewQueue returns a queue called name (its threads are named after it).
func (d *Detector) NewQueue(name string) *Queue { return &Queue{d: d, name: name} }

func (q *Queue) sub(poster int32) *queueSub {
	for _, s := range q.subs {
		if s.poster == poster {
			return s
		}
	}
	pn := "?"
	if int(poster) < len(q.d.threads) && q.d.threads[poster] != nil {
		pn = q.d.threads[poster].name
	}
	s := &queueSub{poster: poster, t: q.d.NewThread(q.name + " for " + pn)}
	q.subs = append(q.subs, s)
	return s
}

// Start begins the item posted at post and returns the thread its accesses
// are made on; also are further releases the item is ordered after (a
// doorbell; the caller checks they knew of the post).
func (q *Queue) Start(post Mark, also ...VC) *Thread {
	s := q.sub(post.tid)
	s.t.AcquireVC(post.VC)
	for _, v := range also {
		s.t.AcquireVC(v)
	}
	for _, o := range q.subs {
		if o == s {
			continue
		}
		if it := o.last(s.t.vc.get(o.poster), ^uint64(0)); it != nil {
			s.t.AcquireVC(it.vc)
		}
	}
	q.cur, q.clk = s, post.clk()
	return s.t
}

// last is the latest retired item of s whose post clock is at most clk and
// whose end is at most end, or nil.
func (s *queueSub) last(clk uint32, end uint64) *queueItem {
	i := sort.Search(len(s.items), func(i int) bool { return s.items[i].clk > clk || s.items[i].end > end })
	if i == 0 {
		return nil
	}
	return &s.items[i-1]
}

// Retire ends the running item, which ended at position end (a position
// that only grows: a ring's byte count).
func (q *Queue) Retire(end uint64) {
	s := q.cur
	if s == nil {
		return
	}
	q.cur = nil
	if len(s.items) == maxQueueItems {
		s.items = append(s.items[:0], s.items[maxQueueItems/2:]...)
	}
	s.items = append(s.items, queueItem{clk: q.clk, end: end, vc: s.t.Snapshot()})
}

// Drain orders t after the retired items that end at or before target and
// whose posts are ordered before t now.
func (q *Queue) Drain(t *Thread, target uint64) {
	if t == nil {
		return
	}
	for _, s := range q.subs {
		if it := s.last(t.vc.get(s.poster), target); it != nil {
			t.AcquireVC(it.vc)
		}
	}
}
