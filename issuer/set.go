package issuer

// Set holds a backend's queues by id, in creation order (for
// deterministic reports). Queues are keyed like MORI's hardware queues,
// per (src GPU, dst GPU, channel), so every user of a pair shares one ring
// and one commit chain.
type Set[Q any] struct {
	byID  map[QueueID]Q
	order []Q
}

// Get returns the queue id, if it was made.
func (s *Set[Q]) Get(id QueueID) (Q, bool) {
	q, ok := s.byID[id]
	return q, ok
}

// Make returns the queue id, making it with mk on first use; a queue mk
// fails to make is not kept.
func (s *Set[Q]) Make(id QueueID, mk func() (Q, error)) (Q, error) {
	if q, ok := s.byID[id]; ok {
		return q, nil
	}
	q, err := mk()
	if err != nil {
		return q, err
	}
	if s.byID == nil {
		s.byID = map[QueueID]Q{}
	}
	s.byID[id] = q
	s.order = append(s.order, q)
	return q, nil
}

// Delete forgets queue id (destroyed); it reports whether it was there.
// The order of the others is kept.
func (s *Set[Q]) Delete(id QueueID) bool {
	q, ok := s.byID[id]
	if !ok {
		return false
	}
	delete(s.byID, id)
	for i := range s.order {
		if any(s.order[i]) == any(q) {
			s.order = append(s.order[:i], s.order[i+1:]...)
			break
		}
	}
	return true
}

// Reset forgets every queue, keeping the map's and the order's room for
// the queues of a next backend (an explore worker's next seed).
func (s *Set[Q]) Reset() {
	clear(s.byID)
	clear(s.order) // hold no queue
	s.order = s.order[:0]
}

// All returns the queues made so far, in creation order.
func (s *Set[Q]) All() []Q { return s.order }
