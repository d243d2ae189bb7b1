//go:build rocm && cgo

package rocm

/*
#cgo LDFLAGS: -lhsakmt -ldl
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <dlfcn.h>
#if __has_include(<hsakmt/hsakmt.h>)
#include <hsakmt/hsakmt.h>   // ROCm 6/7 under /opt/rocm/include
#else
#include <hsakmt.h>          // Debian's libhsakmt-dev 5.2.3 in /usr/include
#endif

// hsaKmtCreateQueueExt is absent from libhsakmt 5.2.3 (Debian): reference it
// weakly under a name of our own, so the build links everywhere and a null
// address means "not there". dlsym covers a shared library loaded in a way
// the weak reference did not bind.
typedef HSAKMT_STATUS (*emud_create_queue_ext_fn)(HSAuint32, HSA_QUEUE_TYPE, HSAuint32,
	HSA_QUEUE_PRIORITY, HSAuint32, void *, HSAuint64, HsaEvent *, HsaQueueResource *);
extern HSAKMT_STATUS emud_weak_create_queue_ext(HSAuint32, HSA_QUEUE_TYPE, HSAuint32,
	HSA_QUEUE_PRIORITY, HSAuint32, void *, HSAuint64, HsaEvent *, HsaQueueResource *)
	__asm__("hsaKmtCreateQueueExt") __attribute__((weak));

static emud_create_queue_ext_fn emud_ext(void) {
	emud_create_queue_ext_fn f = emud_weak_create_queue_ext;
	if (!f)
		f = (emud_create_queue_ext_fn)dlsym(RTLD_DEFAULT, "hsaKmtCreateQueueExt");
	return f;
}

static int emud_has_ext(void) { return emud_ext() != NULL; }

// HSA_QUEUE_SDMA_BY_ENG_ID = 6 is not in the 5.2.3 enum.
static HSAKMT_STATUS emud_create_queue_by_engine(HSAuint32 node, HSAuint32 engine, void *ring,
	HSAuint64 size, HsaQueueResource *res) {
	emud_create_queue_ext_fn f = emud_ext();
	if (!f)
		return HSAKMT_STATUS_NOT_SUPPORTED;
	return f(node, (HSA_QUEUE_TYPE)6, 100, HSA_QUEUE_PRIORITY_MAXIMUM, engine, ring, size, NULL, res);
}

static HSAKMT_STATUS emud_create_queue(HSAuint32 node, int xgmi, void *ring, HSAuint64 size,
	HsaQueueResource *res) {
	return hsaKmtCreateQueue(node, xgmi ? HSA_QUEUE_SDMA_XGMI : HSA_QUEUE_SDMA, 100,
		HSA_QUEUE_PRIORITY_MAXIMUM, ring, size, NULL, res);
}

// The three words are anonymous unions in HsaQueueResource, which cgo
// cannot name: read their 64-bit views here.
static uint64_t *emud_qr_wptr(HsaQueueResource *r) { return (uint64_t *)r->Queue_write_ptr_aql; }
static uint64_t *emud_qr_rptr(HsaQueueResource *r) { return (uint64_t *)r->Queue_read_ptr_aql; }
static uint64_t *emud_qr_doorbell(HsaQueueResource *r) { return (uint64_t *)r->Queue_DoorBell_aql; }

// Ring memory as MORI's anvil allocates it: non-paged, host-visible, 4 KiB
// pages, no NUMA binding, executable, uncached; mapped to its GPU.
static HSAKMT_STATUS emud_alloc_ring(HSAuint32 node, HSAuint64 size, void **out) {
	HsaMemFlags f;
	memset(&f, 0, sizeof f);
	f.ui32.NonPaged = 1;
	f.ui32.HostAccess = 1;
	f.ui32.PageSize = HSA_PAGE_SIZE_4KB;
	f.ui32.NoNUMABind = 1;
	f.ui32.ExecuteAccess = 1;
	f.ui32.Uncached = 1;
	*out = NULL;
	HSAKMT_STATUS st = hsaKmtAllocMemory(node, size, f, out);
	if (st != HSAKMT_STATUS_SUCCESS)
		return st;
	st = hsaKmtMapMemoryToGPU(*out, size, NULL);
	if (st != HSAKMT_STATUS_SUCCESS) {
		hsaKmtFreeMemory(*out, size);
		*out = NULL;
	}
	return st;
}

// Window and signal memory: the GPU's own memory, host-visible and
// fine-grained, at a fixed address, mapped to every GPU in nodes. gpuva
// receives the address the GPUs see it at.
static HSAKMT_STATUS emud_alloc_fixed(HSAuint32 node, HSAuint64 va, HSAuint64 size,
	HSAuint32 *nodes, HSAuint64 n, HSAuint64 *gpuva, void **out) {
	void *addr = (void *)(uintptr_t)va;
	HsaMemFlags f;
	memset(&f, 0, sizeof f);
	f.ui32.NonPaged = 1;
	f.ui32.HostAccess = 1;
	f.ui32.PageSize = HSA_PAGE_SIZE_4KB;
	f.ui32.NoSubstitute = 1;
	f.ui32.FixedAddress = 1;
	void *p = addr;
	HSAKMT_STATUS st = hsaKmtAllocMemory(node, size, f, &p);
	if (st != HSAKMT_STATUS_SUCCESS)
		return st;
	if (p != addr) {
		hsaKmtFreeMemory(p, size);
		return HSAKMT_STATUS_NO_MEMORY;
	}
	HsaMemMapFlags mf;
	memset(&mf, 0, sizeof mf);
	st = hsaKmtMapMemoryToGPUNodes(p, size, gpuva, mf, n, nodes);
	if (st != HSAKMT_STATUS_SUCCESS) {
		hsaKmtFreeMemory(p, size);
		return st;
	}
	*out = p;
	return st;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"unsafe"

	"github.com/emud-dev/emud/hw/rocm/internal/mmio"
	"github.com/emud-dev/emud/lsa"
	"github.com/emud-dev/emud/sim"
)

// Available reports whether this binary contains the KFD driver.
const Available = true

// kfdPath is the device node libhsakmt opens; a variable so the absent-KFD
// test runs the same on a GPU host.
var kfdPath = "/dev/kfd"

// Engine-id queues need KFD interface 1.17 (ROCr
// SupportsSdmaQueueByEngineId).
const extMajor, extMinor = 1, 17

var statusNames = map[C.HSAKMT_STATUS]string{
	0: "SUCCESS", 1: "ERROR", 2: "DRIVER_MISMATCH", 3: "INVALID_PARAMETER", 4: "INVALID_HANDLE",
	5: "INVALID_NODE_UNIT", 6: "NO_MEMORY", 7: "BUFFER_TOO_SMALL", 10: "NOT_IMPLEMENTED",
	11: "NOT_SUPPORTED", 12: "UNAVAILABLE", 13: "OUT_OF_RESOURCES",
	20: "KERNEL_IO_CHANNEL_NOT_OPENED", 21: "KERNEL_COMMUNICATION_ERROR", 22: "KERNEL_ALREADY_OPENED",
	23: "HSAMMU_UNAVAILABLE", 30: "WAIT_FAILURE", 31: "WAIT_TIMEOUT",
	35: "MEMORY_ALREADY_REGISTERED", 36: "MEMORY_NOT_REGISTERED", 37: "MEMORY_ALIGNMENT",
}

func kmtErr(call string, st C.HSAKMT_STATUS) error {
	name := statusNames[st]
	if name == "" {
		name = "unknown status"
	}
	return fmt.Errorf("%s: HSAKMT_STATUS_%s (%d)", call, name, int(st))
}

// checkKFD says, in one message, why the KFD cannot be opened: the
// device node is missing or not accessible.
func checkKFD(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	switch {
	case err == nil:
		f.Close()
		return nil
	case errors.Is(err, fs.ErrNotExist):
		return errUnavailable("%s is missing: this machine has no AMD KFD device "+
			"(no ROCm-capable AMD GPU, or the amdgpu kernel driver is not loaded); the ROCm backend needs %s", path, path)
	case errors.Is(err, fs.ErrPermission):
		return errUnavailable("%s exists but cannot be opened for read/write (permission denied): "+
			"add the user to the render and video groups", path)
	}
	return errUnavailable("%s cannot be opened: %v", path, err)
}

// Open opens the KFD through libhsakmt, finds the GPU nodes and returns the
// device over them on simulator s. Pace defaults to PaceWallClock. Queues
// are created on first use, memory on Alloc. Close the device when done.
// Without /dev/kfd it fails with one error, wrapping ErrUnavailable, that
// names /dev/kfd.
func Open(s *sim.Sim, cfg Config) (*Device, error) {
	if err := checkKFD(kfdPath); err != nil {
		return nil, err
	}
	drv, err := openKFD()
	if err != nil {
		return nil, err
	}
	if cfg.Pace == PaceDefault {
		cfg.Pace = PaceWallClock
	}
	d, err := New(s, drv, cfg)
	if err != nil {
		_ = drv.Close()
		return nil, err
	}
	return d, nil
}

// KFD is the libhsakmt Driver.
type KFD struct {
	nodes   []uint32 // KFD node id of GPU index g
	cpu     int      // KFD node id of the first CPU node (system memory), −1: none
	topo    map[int]TopoNode
	ext     bool // hsaKmtCreateQueueExt resolved and KFD ≥ 1.17
	version [2]uint32
	queues  []*kfdQueue
	allocs  []kfdAlloc
	closed  bool
}

type kfdAlloc struct {
	addr unsafe.Pointer
	size uint64
}

func openKFD() (*KFD, error) {
	if st := C.hsaKmtOpenKFD(); st != C.HSAKMT_STATUS_SUCCESS {
		return nil, errUnavailable("opening %s through libhsakmt: %v", kfdPath, kmtErr("hsaKmtOpenKFD", st))
	}
	k := &KFD{topo: map[int]TopoNode{}, cpu: -1}
	var ver C.HsaVersionInfo
	if st := C.hsaKmtGetVersion(&ver); st == C.HSAKMT_STATUS_SUCCESS {
		k.version = [2]uint32{uint32(ver.KernelInterfaceMajorVersion), uint32(ver.KernelInterfaceMinorVersion)}
	}
	var sys C.HsaSystemProperties
	if st := C.hsaKmtAcquireSystemProperties(&sys); st != C.HSAKMT_STATUS_SUCCESS {
		C.hsaKmtCloseKFD()
		return nil, kmtErr("hsaKmtAcquireSystemProperties", st)
	}
	for id := C.HSAuint32(0); id < sys.NumNodes; id++ {
		var p C.HsaNodeProperties
		if st := C.hsaKmtGetNodeProperties(id, &p); st != C.HSAKMT_STATUS_SUCCESS {
			_ = k.Close()
			return nil, kmtErr(fmt.Sprintf("hsaKmtGetNodeProperties(%d)", id), st)
		}
		if p.NumFComputeCores > 0 {
			k.nodes = append(k.nodes, uint32(id))
		} else if k.cpu < 0 {
			k.cpu = int(id)
		}
	}
	if len(k.nodes) == 0 {
		_ = k.Close()
		return nil, errUnavailable("KFD is open but reports no GPU node")
	}
	// The recommended engine masks come from sysfs; without them queues
	// fall back to KFD's choice of xGMI engine.
	if nodes, err := ReadTopology(TopologyRoot); err == nil {
		for _, n := range nodes {
			k.topo[n.ID] = n
		}
	}
	v := k.version
	k.ext = C.emud_has_ext() != 0 && (v[0] > extMajor || v[0] == extMajor && v[1] >= extMinor)
	return k, nil
}

// Name says "KFD" and the interface version.
func (k *KFD) Name() string { return fmt.Sprintf("KFD %d.%d", k.version[0], k.version[1]) }

// GPUs is the number of GPU nodes.
func (k *KFD) GPUs() int { return len(k.nodes) }

// CreateQueueExtResolved reports whether this process found
// hsaKmtCreateQueueExt in libhsakmt (never in Debian's 5.2.3). Queues use it
// only when KFD is also ≥ 1.17.
func CreateQueueExtResolved() bool { return C.emud_has_ext() != 0 }

// HasCreateQueueExt reports whether queues are created on a chosen engine
// (hsaKmtCreateQueueExt present and KFD ≥ 1.17).
func (k *KFD) HasCreateQueueExt() bool { return k.ext }

type kfdQueue struct {
	res  C.HsaQueueResource
	ring unsafe.Pointer
	size uint64
	mem  []byte
	wp   *uint64
	rp   *uint64
	db   *uint64
	// Engine is the SDMA engine id asked for, or −1 when KFD chose.
	Engine int
}

func (q *kfdQueue) RingMemory() []byte { return q.mem }
func (q *kfdQueue) Wptr() *uint64      { return q.wp }
func (q *kfdQueue) Rptr() *uint64      { return q.rp }

// StoreDoorbell fences and stores v to the doorbell page.
func (q *kfdQueue) StoreDoorbell(v uint64) { mmio.StoreDoorbell(q.db, v) }

// CreateQueue allocates the ring and creates the SDMA queue: on the
// recommended engine through hsaKmtCreateQueueExt where the library and
// KFD have it, else hsaKmtCreateQueue with HSA_QUEUE_SDMA_XGMI
// (HSA_QUEUE_SDMA for loopback).
func (k *KFD) CreateQueue(gpu, peer, q, ringBytes int) (Resource, error) {
	if k.closed {
		return nil, errors.New("KFD driver closed")
	}
	if gpu < 0 || gpu >= len(k.nodes) || peer < 0 || peer >= len(k.nodes) {
		return nil, fmt.Errorf("GPU pair %d→%d outside the %d GPU nodes", gpu, peer, len(k.nodes))
	}
	node, pnode := k.nodes[gpu], k.nodes[peer]
	kq := &kfdQueue{size: uint64(ringBytes), Engine: -1}
	if st := C.emud_alloc_ring(C.HSAuint32(node), C.HSAuint64(ringBytes), &kq.ring); st != C.HSAKMT_STATUS_SUCCESS {
		return nil, kmtErr(fmt.Sprintf("ring of %d B on node %d (hsaKmtAllocMemory/hsaKmtMapMemoryToGPU)", ringBytes, node), st)
	}
	var st C.HSAKMT_STATUS
	eng, ok := ChooseEngine(gpu == peer, k.topo[int(node)].RecEngineMask[int(pnode)], q)
	if k.ext && ok {
		kq.Engine = eng
		st = C.emud_create_queue_by_engine(C.HSAuint32(node), C.HSAuint32(eng), kq.ring, C.HSAuint64(ringBytes), &kq.res)
	} else {
		xgmi := C.int(0)
		if gpu != peer {
			xgmi = 1
		}
		st = C.emud_create_queue(C.HSAuint32(node), xgmi, kq.ring, C.HSAuint64(ringBytes), &kq.res)
	}
	if st != C.HSAKMT_STATUS_SUCCESS {
		C.hsaKmtUnmapMemoryToGPU(kq.ring)
		C.hsaKmtFreeMemory(kq.ring, C.HSAuint64(ringBytes))
		return nil, kmtErr(fmt.Sprintf("SDMA queue on node %d (engine %d)", node, kq.Engine), st)
	}
	kq.mem = unsafe.Slice((*byte)(kq.ring), ringBytes)
	kq.wp = (*uint64)(unsafe.Pointer(C.emud_qr_wptr(&kq.res)))
	kq.rp = (*uint64)(unsafe.Pointer(C.emud_qr_rptr(&kq.res)))
	kq.db = (*uint64)(unsafe.Pointer(C.emud_qr_doorbell(&kq.res)))
	k.queues = append(k.queues, kq) // Close destroys it, also when refused below
	if kq.db == nil {
		return nil, fmt.Errorf("SDMA queue on node %d: KFD returned no doorbell", node)
	}
	return kq, nil
}

// Back allocates [addr, addr+size) in GPU gpu's memory at that fixed
// address, host-visible, and maps it to every GPU node at the same address.
// gpu lsa.Host allocates it in the CPU node's memory instead (system
// memory, what KFD puts in GTT): the host path's copies cross PCIe. Not run
// on hardware here.
func (k *KFD) Back(gpu int, addr, size uint64) ([]byte, error) {
	if k.closed {
		return nil, errors.New("KFD driver closed")
	}
	node := uint32(0)
	switch {
	case gpu == lsa.Host && k.cpu < 0:
		return nil, errors.New("host memory: KFD reports no CPU node")
	case gpu == lsa.Host:
		node = uint32(k.cpu)
	case gpu < 0 || gpu >= len(k.nodes):
		return nil, fmt.Errorf("GPU %d outside the %d GPU nodes", gpu, len(k.nodes))
	default:
		node = k.nodes[gpu]
	}
	nodes := C.malloc(C.size_t(4 * len(k.nodes)))
	defer C.free(nodes)
	ns := unsafe.Slice((*C.HSAuint32)(nodes), len(k.nodes))
	for i, n := range k.nodes {
		ns[i] = C.HSAuint32(n)
	}
	var gpuva C.HSAuint64
	var p unsafe.Pointer
	st := C.emud_alloc_fixed(C.HSAuint32(node), C.HSAuint64(addr), C.HSAuint64(size),
		(*C.HSAuint32)(nodes), C.HSAuint64(len(k.nodes)), &gpuva, &p)
	if st != C.HSAKMT_STATUS_SUCCESS {
		return nil, kmtErr(fmt.Sprintf("fixed-address allocation of %d B at %#x on node %d (choose another Config.Base)", size, addr, node), st)
	}
	if uint64(gpuva) != 0 && uint64(gpuva) != addr {
		C.hsaKmtUnmapMemoryToGPU(p)
		C.hsaKmtFreeMemory(p, C.HSAuint64(size))
		return nil, fmt.Errorf("KFD mapped %#x for the GPUs at %#x: the flat LSA layout needs the same address on CPU and GPUs", addr, uint64(gpuva))
	}
	k.allocs = append(k.allocs, kfdAlloc{addr: p, size: size})
	return unsafe.Slice((*byte)(p), size), nil
}

// Close destroys every queue, frees rings and memory, and closes the KFD.
// It returns the first failure.
func (k *KFD) Close() error {
	if k.closed {
		return nil
	}
	k.closed = true
	var first error
	keep := func(err error) {
		if first == nil {
			first = err
		}
	}
	for _, q := range k.queues {
		if st := C.hsaKmtDestroyQueue(q.res.QueueId); st != C.HSAKMT_STATUS_SUCCESS {
			keep(kmtErr("hsaKmtDestroyQueue", st))
		}
		C.hsaKmtUnmapMemoryToGPU(q.ring)
		if st := C.hsaKmtFreeMemory(q.ring, C.HSAuint64(q.size)); st != C.HSAKMT_STATUS_SUCCESS {
			keep(kmtErr("hsaKmtFreeMemory(ring)", st))
		}
	}
	for _, a := range k.allocs {
		C.hsaKmtUnmapMemoryToGPU(a.addr)
		if st := C.hsaKmtFreeMemory(a.addr, C.HSAuint64(a.size)); st != C.HSAKMT_STATUS_SUCCESS {
			keep(kmtErr("hsaKmtFreeMemory", st))
		}
	}
	C.hsaKmtReleaseSystemProperties()
	if st := C.hsaKmtCloseKFD(); st != C.HSAKMT_STATUS_SUCCESS {
		keep(kmtErr("hsaKmtCloseKFD", st))
	}
	return first
}
