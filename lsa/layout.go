package lsa

import (
	"fmt"
	"sync"

	"github.com/emud-dev/emud/ring"
)

// Defaults of a layout: an MI355X platform has 8 GPUs, MORI caps queues per
// GPU pair at 8, and LSA slices are 4 GiB multiples.
const (
	DefaultGPUs          = 8
	DefaultQueuesPerPeer = 8
	DefaultStride        = 64 << 30
	DefaultBase          = 0x7f00_0000_0000
	strideQuantum        = 4 << 30
)

// QueueID names an SDMA queue: GPU's queue toward Peer (Peer == GPU for
// loopback) with queue id Q.
type QueueID struct{ GPU, Peer, Q int }

func (id QueueID) String() string {
	if uint(id.GPU) < nameGPUs && uint(id.Peer) < nameGPUs && uint(id.Q) < DefaultQueuesPerPeer {
		return queueNames()[id.GPU][id.Peer][id.Q]
	}
	return id.format()
}

func (id QueueID) format() string {
	return fmt.Sprintf("sdma gpu%d→gpu%d q%d", id.GPU, id.Peer, id.Q)
}

// nameGPUs bounds the GPUs and peers whose queue names are made once per
// process: a run names each of its queues several times (trace subject,
// watch list, reports), and a seed of a 4 KiB all-to-all spent 64 of its
// allocations on them.
const nameGPUs = 16

var queueNames = sync.OnceValue(func() *[nameGPUs][nameGPUs][DefaultQueuesPerPeer]string {
	var t [nameGPUs][nameGPUs][DefaultQueuesPerPeer]string
	for g := range t {
		for p := range t[g] {
			for q := range t[g][p] {
				t[g][p][q] = QueueID{g, p, q}.format()
			}
		}
	}
	return &t
})

// Layout is the shape a backend presents to cco: its GPUs, the queue ids
// per (GPU, peer), the flat LSA address space (GPU g's slice starts at
// Base + g·Stride) and the ring options of every queue. The emulator and
// the ROCm backend resolve it alike, so one program gets the same
// addresses, and packet bytes, on both.
type Layout struct {
	GPUs          int    // 0 = DefaultGPUs
	QueuesPerPeer int    // 0 = DefaultQueuesPerPeer
	Base          uint64 // 0 = DefaultBase; a multiple of 4 GiB
	Stride        uint64 // 0 = DefaultStride; rounded up to 4 GiB
	Ring          ring.Options
}

// Resolve fills in the defaults and checks the layout; an error names the
// field that is wrong.
func (l Layout) Resolve() (Layout, error) {
	if l.GPUs == 0 {
		l.GPUs = DefaultGPUs
	}
	if l.QueuesPerPeer == 0 {
		l.QueuesPerPeer = DefaultQueuesPerPeer
	}
	if l.Base == 0 {
		l.Base = DefaultBase
	}
	if l.Stride == 0 {
		l.Stride = DefaultStride
	}
	switch {
	case l.GPUs < 1 || l.GPUs > 1024:
		return l, fmt.Errorf("layout: GPUs = %d: need 1..1024", l.GPUs)
	case l.QueuesPerPeer < 1 || l.QueuesPerPeer > 64:
		return l, fmt.Errorf("layout: QueuesPerPeer = %d: need 1..64", l.QueuesPerPeer)
	case l.Base%strideQuantum != 0:
		return l, fmt.Errorf("layout: Base %#x is not a multiple of 4 GiB", l.Base)
	}
	l.Stride = (l.Stride + strideQuantum - 1) / strideQuantum * strideQuantum
	if end := l.Base + uint64(l.GPUs)*l.Stride; l.Stride == 0 || end < l.Base || end > 1<<57 {
		return l, fmt.Errorf("layout: %d GPUs × stride %#x from base %#x overflows the 57-bit VA", l.GPUs, l.Stride, l.Base)
	}
	if err := l.Ring.Check(); err != nil {
		return l, fmt.Errorf("layout: ring options: %w", err)
	}
	return l, nil
}

// CheckQueue reports whether id names a queue of the layout.
func (l Layout) CheckQueue(id QueueID) error {
	switch {
	case id.GPU < 0 || id.GPU >= l.GPUs:
		return fmt.Errorf("queue %v: GPU %d outside [0, %d)", id, id.GPU, l.GPUs)
	case id.Peer < 0 || id.Peer >= l.GPUs:
		return fmt.Errorf("queue %v: peer %d outside [0, %d)", id, id.Peer, l.GPUs)
	case id.Q < 0 || id.Q >= l.QueuesPerPeer:
		return fmt.Errorf("queue %v: queue id %d outside [0, %d)", id, id.Q, l.QueuesPerPeer)
	}
	return nil
}
