package issuer

// Poster labels: who posted each packet, so that a report naming a write
// an engine made (a signal slot's history, a race's missing edge) can say
// whose packet it was. Two thread blocks posting to one queue share its
// ring, its commit chain and its signal slot; only the label tells their
// packets apart. The issuer records the label when its caller names one
// (Posted, after writing the packet) and the engine takes it when it
// starts the packet (Backend.Poster). It costs a map entry per labelled
// packet while the packet is in flight.

// Poster names who posted a packet (a lane: kernel.Thread).
type Poster interface{ Who() string }

// Posted records that p posted the packet written at ring position ptr.
func (q *Queue) Posted(ptr uint64, p Poster) {
	if p == nil {
		return
	}
	if q.posters == nil {
		q.posters = map[uint64]Poster{}
	}
	q.posters[ptr&^31] = p
}

// Poster returns who posted the packet at [pos, end), as Posted recorded
// it (the last label in that range, a packet being written at its first
// unit), and forgets the labels there; nil when nobody named one.
func (b Backend) Poster(pos, end uint64) Poster {
	q := b.q
	if len(q.posters) == 0 {
		return nil
	}
	var p Poster
	for u := pos &^ 31; u < end; u += 32 {
		if l, ok := q.posters[u]; ok {
			p = l
			delete(q.posters, u)
		}
	}
	return p
}
