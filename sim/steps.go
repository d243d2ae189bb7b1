package sim

import "slices"

// stepRun is the pending steps of one AtWorkSteps call. It holds one
// entry in the event queue, keyed by its next step's (time, sequence):
// when that entry comes first, the step is made an event of its own and
// the entry moves on to the following step. Its steps are kept in (time,
// sequence) order, so the queue yields them exactly where n separate
// events would come: the run's order, its tie-breaks and its digest are
// those of n AtWorkStep calls.
type stepRun struct {
	ts     []Time  // the steps' times, before off and the clamp to now
	order  []int32 // the steps in (time, index) order; empty: index order is that
	off    Time
	floor  Time // Now when scheduled: no step is earlier
	h      Handler
	arg    uint64
	stride uint64
	seq    uint64 // step i's sequence number is seq+i
	next   int    // steps made events so far
}

// step is the index of the p-th step in time order.
func (r *stepRun) step(p int) int {
	if len(r.order) > 0 {
		return int(r.order[p])
	}
	return p
}

// at is step i's time.
func (r *stepRun) at(i int) Time { return max(r.ts[i]+r.off, r.floor) }

// AtWorkSteps schedules len(ts) steps of h as len(ts) AtWorkStep calls in
// index order would: step i is h.Step(arg + i×stride) at ts[i]+off (Now if
// that is past), with the sequence number the i-th call would take, so
// the run, its tie-breaks and its digest are the same. The steps hold one
// entry in the event queue instead of one event each, which is what a
// multicast to thousands of destinations needs: the queue stays as small
// as the number of such calls, not of their steps. ts is read until the
// last step runs; the caller must not change it before.
func (s *Sim) AtWorkSteps(ts []Time, off Time, h Handler, arg, stride uint64) {
	n := len(ts)
	if n == 0 {
		return
	}
	if n == 1 {
		s.AtWorkStep(ts[0]+off, h, arg)
		return
	}
	r := s.newStepRun()
	*r = stepRun{ts: ts, off: off, floor: s.now, h: h, arg: arg, stride: stride, seq: s.seq + 1, order: r.order[:0]}
	s.seq += uint64(n)
	s.work += n
	sorted := true
	for i := 1; i < n && sorted; i++ {
		sorted = r.at(i-1) <= r.at(i)
	}
	if !sorted {
		for i := range n {
			r.order = append(r.order, int32(i))
		}
		// Stable: steps due at one time keep index (sequence) order.
		slices.SortStableFunc(r.order, func(a, b int32) int { return cmpTime(r.at(int(a)), r.at(int(b))) })
	}
	if len(s.batch) > 0 {
		// Choosing among events due now: a step due now competes at once,
		// as AtWorkStep's would (they come first in time order).
		for r.next < n {
			i := r.step(r.next)
			if r.at(i) != s.now {
				break
			}
			s.batch = append(s.batch, s.runEvent(r, i))
			r.next++
		}
		if r.next == n {
			s.freeStepRun(r)
			return
		}
	}
	c := s.alloc()
	c.steps = r
	i := r.step(r.next)
	c.t, c.seq = r.at(i), r.seq+uint64(i)
	s.heap.pushHeap(c)
}

func cmpTime(a, b Time) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// runEvent makes step i of r an event of its own, as AtWorkStep would
// have made it (already counted in s.work).
func (s *Sim) runEvent(r *stepRun, i int) *event {
	e := s.alloc()
	e.t, e.seq, e.h, e.arg, e.work = r.at(i), r.seq+uint64(i), r.h, r.arg+uint64(i)*r.stride, true
	return e
}

// unroll takes the next step of the run whose entry c is first in the
// queue (the heap's top): the step's event, c moved on to the following
// step in place, or removed after the last one.
func (s *Sim) unroll(c *event) *event {
	r := c.steps
	e := s.runEvent(r, r.step(r.next))
	r.next++
	if r.next == len(r.ts) {
		s.heap.pop()
		s.recycle(c)
		s.freeStepRun(r)
		return e
	}
	i := r.step(r.next)
	c.t, c.seq = r.at(i), r.seq+uint64(i)
	s.heap.fixTop(c)
	return e
}

// popEvent removes the first pending event; the queue must not be empty.
func (s *Sim) popEvent() *event {
	if c := s.ev(s.heap.firstID()); c.steps != nil {
		return s.unroll(c)
	}
	return s.ev(s.heap.pop())
}

func (s *Sim) newStepRun() *stepRun {
	if n := len(s.freeRuns); n > 0 {
		r := s.freeRuns[n-1]
		s.freeRuns = s.freeRuns[:n-1]
		return r
	}
	return new(stepRun)
}

func (s *Sim) freeStepRun(r *stepRun) {
	*r = stepRun{order: r.order[:0]}
	s.freeRuns = append(s.freeRuns, r)
}
