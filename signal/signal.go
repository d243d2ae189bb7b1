package signal

import (
	"fmt"
)

// SlotBytes is the size of one signal slot.
const SlotBytes = 8

// Pool is the layout of one GPU's signal pool.
type Pool struct {
	GPU     int    // owner
	Base    uint64 // address of slot (0, 0)
	LsaSize int    // rows: one per sender
	Queues  int    // columns: one per queue id
}

// NewPool checks and returns a pool layout.
func NewPool(gpu int, base uint64, lsaSize, queues int) (Pool, error) {
	switch {
	case lsaSize < 1:
		return Pool{}, fmt.Errorf("signal: lsaSize %d: need at least 1 rank", lsaSize)
	case queues < 1:
		return Pool{}, fmt.Errorf("signal: queue count %d: need at least 1 queue", queues)
	case base%SlotBytes != 0:
		return Pool{}, fmt.Errorf("signal: pool base %#x is not 8-byte aligned (ATOMIC ADD64 targets must be)", base)
	}
	return Pool{GPU: gpu, Base: base, LsaSize: lsaSize, Queues: queues}, nil
}

// Bytes is the pool's size.
func (p Pool) Bytes() uint64 { return uint64(p.LsaSize) * uint64(p.Queues) * SlotBytes }

// Index is the slot index of (sender, q): sender × queues + q.
func (p Pool) Index(sender, q int) (int, error) {
	if sender < 0 || sender >= p.LsaSize {
		return 0, fmt.Errorf("signal: sender rank %d outside [0, %d)", sender, p.LsaSize)
	}
	if q < 0 || q >= p.Queues {
		return 0, fmt.Errorf("signal: queue id %d outside [0, %d)", q, p.Queues)
	}
	return sender*p.Queues + q, nil
}

// Slot returns the address of signalBuf[sender × queues + q].
func (p Pool) Slot(sender, q int) (uint64, error) {
	i, err := p.Index(sender, q)
	if err != nil {
		return 0, err
	}
	return p.Base + uint64(i)*SlotBytes, nil
}

// Key names one running total: signals from Src on queue id Queue.
type Key struct{ Src, Queue int }

// Expected keeps the running totals a receiver waits for, one per (source
// rank, queue id). The zero value is ready to use.
type Expected struct {
	m map[Key]uint64
}

// Add advances the total for (src, q) by n and returns the new total: the
// value to wait for after n more signalling put() calls.
func (e *Expected) Add(src, q int, n uint64) uint64 {
	if e.m == nil {
		e.m = map[Key]uint64{}
	}
	k := Key{src, q}
	e.m[k] += n
	return e.m[k]
}

// Next is Add(src, q, 1).
func (e *Expected) Next(src, q int) uint64 { return e.Add(src, q, 1) }

// Get returns the current total for (src, q).
func (e *Expected) Get(src, q int) uint64 { return e.m[Key{src, q}] }

// Reached is the waitSignal comparison: the count is at least expected.
// A >= comparison cannot miss an increment.
func Reached(count, expected uint64) bool { return count >= expected }

// Truncated32 reports whether expected loses bits when an engine-side wait
// (POLL_REGMEM) compares it in 32 bits, and the value actually compared.
func Truncated32(expected uint64) (low uint32, truncated bool) {
	return uint32(expected), expected>>32 != 0
}
