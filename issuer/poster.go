package issuer

import "sync"

// Poster labels: who posted each packet, so that a report naming a write
// an engine made (a signal slot's history, a race's missing edge) can say
// whose packet it was. Two thread blocks posting to one queue share its
// ring, its commit chain and its signal slot; only the label tells their
// packets apart. The issuer records the label when its caller names one
// (Posted, after writing the packet) and the engine takes it when it
// starts the packet (Backend.Poster). It costs an entry of a queue per
// labelled packet while the packet is in flight: ring positions only
// grow and the engine starts packets in ring order, so the labels are a
// FIFO (a map was a fifth of a small put benchmark's time).

// posterPool keeps the emptied label queues of queues that had many
// packets in flight, for the next queue to fill: a queue's labels grow to
// its packets in flight, and growing them anew for each run's queues was
// a twentieth of a wave-of-puts benchmark's CPU. Every entry of a pooled
// slice is cleared (Poster clears each label it takes).
var posterPool sync.Pool

const posterPoolMin = 1024

// Poster names who posted a packet (a lane: kernel.Thread). AppendWho
// appends the name Who returns, for a name made into a buffer (an
// engine's writer name, sim.Writer).
type Poster interface {
	Who() string
	AppendWho(b []byte) []byte
}

// posterQueue is the labels of packets in flight, in ring order.
type posterQueue struct {
	at   []posterAt
	head int // at[:head] are taken
	// buf holds the first labels: most queues of a run have a packet or
	// two in flight, and growing at from nil was two allocations a queue.
	buf [4]posterAt
}

type posterAt struct {
	pos uint64 // the packet's first unit
	p   Poster
}

// Posted records that p posted the packet written at ring position ptr.
func (q *Queue) Posted(ptr uint64, p Poster) {
	if p == nil {
		return
	}
	pq := &q.posters
	if pq.at == nil {
		if b, ok := posterPool.Get().(*[]posterAt); ok {
			pq.at = *b
		} else {
			pq.at = pq.buf[:0]
		}
	}
	u := ptr &^ 31
	i := len(pq.at)
	for i > pq.head && pq.at[i-1].pos > u {
		i-- // posted after a later packet (another lane's reservation)
	}
	if i > pq.head && pq.at[i-1].pos == u {
		pq.at[i-1].p = p // relabelled: the last label wins
		return
	}
	pq.at = append(pq.at, posterAt{})
	copy(pq.at[i+1:], pq.at[i:])
	pq.at[i] = posterAt{pos: u, p: p}
}

// Poster returns who posted the packet at [pos, end), as Posted recorded
// it (the last label in that range, a packet being written at its first
// unit), and forgets the labels there and before it; nil when nobody
// named one.
func (b Backend) Poster(pos, end uint64) Poster {
	pq := &b.q.posters
	var p Poster
	lo := pos &^ 31
	for pq.head < len(pq.at) && pq.at[pq.head].pos < end {
		if pq.at[pq.head].pos >= lo {
			p = pq.at[pq.head].p
		}
		pq.at[pq.head] = posterAt{}
		pq.head++
	}
	if pq.head == len(pq.at) {
		pq.at, pq.head = pq.at[:0], 0
		if cap(pq.at) >= posterPoolMin {
			b := new([]posterAt)
			*b = pq.at
			posterPool.Put(b)
			pq.at = nil
		}
	} else if pq.head > 64 && 2*pq.head > len(pq.at) {
		n := copy(pq.at, pq.at[pq.head:])
		clear(pq.at[n:])
		pq.at, pq.head = pq.at[:n], 0
	}
	return p
}
