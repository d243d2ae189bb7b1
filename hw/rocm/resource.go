package rocm

import (
	"errors"
	"fmt"
)

// Resource is one SDMA queue as KFD hands it out (HsaQueueResource plus the
// ring it was created on): the ring memory, two 64-bit pointer words and
// the doorbell. The queue path writes packets into RingMemory, stores the
// write pointer and the doorbell, and reads the read pointer; it never
// calls into the driver on the hot path.
//
// The words are the 64-bit views of HsaQueueResource (Queue_write_ptr_aql,
// Queue_read_ptr_aql, Queue_DoorBell_aql): monotonic byte offsets on
// gfx9+ SDMA queues (docs/sdma-hardware.md §3.2, §4.1). The pointers must stay
// valid, 8-byte aligned, until the driver is closed.
type Resource interface {
	// RingMemory is the ring buffer, host-visible: its length is the ring
	// size.
	RingMemory() []byte
	// Wptr is the write-pointer word the issuer stores.
	Wptr() *uint64
	// Rptr is the read-pointer word the engine writes back.
	Rptr() *uint64
	// StoreDoorbell is the release fence and one 64-bit store of v to the
	// doorbell (MMIO on hardware), after the write-pointer store.
	StoreDoorbell(v uint64)
}

// Driver is what the backend needs from the kernel driver: queues and
// memory. KFD (libhsakmt) implements it in the rocm && cgo build; StandIn
// implements it in memory for tests.
type Driver interface {
	// Name says which driver this is, for errors and reports.
	Name() string
	// GPUs is the number of GPU nodes found.
	GPUs() int
	// CreateQueue creates the SDMA queue with channel q of GPU gpu toward
	// peer (peer == gpu for loopback) on a ring of ringBytes bytes.
	CreateQueue(gpu, peer, q, ringBytes int) (Resource, error)
	// Back backs [addr, addr+size) of GPU gpu's slice of the flat address
	// space with memory the CPU can read and write and every GPU can reach
	// at the same address. addr and size are page multiples.
	Back(gpu int, addr, size uint64) ([]byte, error)
	// Close destroys the queues, frees the memory and closes the driver.
	Close() error
}

// ErrUnavailable is wrapped by every error that says the ROCm backend
// cannot run here: the binary was built without it, or the machine has no
// KFD. errors.Is(err, ErrUnavailable) tells it from a misuse.
var ErrUnavailable = errors.New("ROCm backend unavailable")

// unavailable wraps ErrUnavailable with the reason.
type unavailable struct{ why string }

func (e *unavailable) Error() string { return "hw/rocm: " + e.why }
func (e *unavailable) Unwrap() error { return ErrUnavailable }

func errUnavailable(format string, args ...any) error {
	return &unavailable{why: fmt.Sprintf(format, args...)}
}
