package emutest

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"runtime"

	"github.com/emud-dev/emud/race"
	"github.com/emud-dev/emud/sim"
)

// HostMem is host code's race-visible access to device memory while a job
// runs: the loads and stores of one host thread, a sim actor the test
// spawned (j.Sim.Spawn), as a host thread of a MORI program is. The race
// detector checks them as it checks a lane's (cco.Mem), ordered with the
// kernels by the launches that thread makes and the kernel waits it does;
// a store into a buffer a copy may still be reading is reported, naming
// this thread and the line of the call. Node.Memory()'s accesses are
// invisible to the detector. Before Run and after it returns nothing else
// runs, and j.Read and j.Write are enough.
type HostMem struct {
	j *Job
	a *sim.Actor
}

// Host is host thread a's access to j's device memory (a nil a: host code
// outside any actor, before or after Run, with nothing to race).
func Host(j *Job, a *sim.Actor) HostMem { return HostMem{j: j, a: a} }

// Store32 stores a little-endian 32-bit word.
func (h HostMem) Store32(addr uint64, v uint32) error {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], v)
	return h.write("store32", addr, b[:])
}

// Store64 stores a little-endian 64-bit word.
func (h HostMem) Store64(addr, v uint64) error {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	return h.write("store64", addr, b[:])
}

// Write stores src at addr.
func (h HostMem) Write(addr uint64, src []byte) error { return h.write("write", addr, src) }

// Load32 loads a little-endian 32-bit word.
func (h HostMem) Load32(addr uint64) (uint32, error) {
	var b [4]byte
	err := h.read("load32", addr, b[:])
	return binary.LittleEndian.Uint32(b[:]), err
}

// Load64 loads a little-endian 64-bit word.
func (h HostMem) Load64(addr uint64) (uint64, error) {
	var b [8]byte
	err := h.read("load64", addr, b[:])
	return binary.LittleEndian.Uint64(b[:]), err
}

// Read loads len(dst) bytes at addr.
func (h HostMem) Read(addr uint64, dst []byte) error { return h.read("read", addr, dst) }

func (h HostMem) read(op string, addr uint64, dst []byte) error {
	mem := h.j.Node.Memory()
	if err := mem.Read(addr, dst); err != nil {
		return fmt.Errorf("emutest: host %s at %#x: %w", op, addr, err)
	}
	h.access(op, callSite(), addr, uint64(len(dst)), false)
	return nil
}

func (h HostMem) write(op string, addr uint64, src []byte) error {
	mem := h.j.Node.Memory()
	if err := mem.Check(op, addr, uint64(len(src))); err != nil {
		return fmt.Errorf("emutest: host %s at %#x: %w", op, addr, err)
	}
	site := callSite()
	h.access(op, site, addr, uint64(len(src)), true)
	if h.a != nil && mem.Log().Tracked(addr, addr+uint64(len(src))) {
		// A signal slot or flag: the write log (a hang report) names this thread.
		who := h.a.Name()
		h.j.Sim.SetWriter(sim.WriterFunc(func() string { return fmt.Sprintf("host %s by %s (%s)", op, who, site) }))
		defer h.j.Sim.SetWriter(nil)
	}
	return mem.Write(addr, src)
}

// access records the access for the race detector, as the host thread's.
func (h HostMem) access(op, site string, addr, n uint64, write bool) {
	d := h.j.Sim.Race()
	if d == nil || h.a == nil {
		return
	}
	info := &race.Info{Kind: race.KindHost, OpKind: race.OpHost, Who: "host thread " + h.a.Name(), Op: op, Site: site}
	d.Access(h.a.RaceThread(), d.Space(h.j.Node.Memory(), "LSA memory"), addr, addr+n, race.Access{Info: info, Write: write})
}

// callSite is the file:line of the test code that called HostMem (from
// read or write: they, the method, its caller).
func callSite() string {
	_, file, line, ok := runtime.Caller(3)
	if !ok {
		return "?"
	}
	return fmt.Sprintf("%s/%s:%d", filepath.Base(filepath.Dir(file)), filepath.Base(file), line)
}
