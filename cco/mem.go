package cco

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/race"
	"github.com/emud-dev/emud/sim"
)

// Mem is lane code's access to device memory: the global loads and stores
// a kernel makes through a local pointer (Window.LocalPtr) or an LSA peer
// pointer (Window.LsaPtr, or any address of the flat LSA space). Build it
// in the kernel, per thread, with NewMem; user code should not reach into
// engine.Memory while kernels run.
//
// Plain loads and stores are what the race detector checks
// (DevCommRequirements.Race): each is an access of the calling lane. The
// acquire and release forms are also synchronisation: StoreRelease32/64
// publish what the lane did before (a flag that an engine-side
// postWaitMem or another lane's LoadAcquire waits for), LoadAcquire32/64
// order what follows after the store they read, as
// __atomic_store_n/__atomic_load_n with release/acquire order do. They do
// not race with each other.
//
// A bad address (a VM hole, an unbacked peer) fails the kernel at the lane
// with a *kernel.LaneError naming the access, as a memory fault would.
type Mem struct {
	t   *kernel.Thread
	mem Memory        // the device's, looked up once: every access uses it
	s   *sim.Sim      // for the race check, a field load when the detector is off
	log *sim.WriteLog // the memory's write log (nil on hardware)
	d   *diagnosis    // the host's hang diagnosis: a lane's reads of signal slots
}

// NewMem is lane t's view of device memory through dc's device.
func NewMem(t *kernel.Thread, dc DevComm) Mem {
	if dc.st == nil {
		t.Fail("mem", fmt.Errorf("the dev comm was not made by DevCommCreate"))
	}
	dev := dc.st.c.h.dev
	return Mem{t: t, mem: dev.Memory(), s: dev.Sim(), log: writeLog(dev.Memory()), d: dc.st.c.h.diag}
}

// writeLog is m's write log (sim.WriteLog), or nil for a memory without
// one (real hardware).
func writeLog(m Memory) *sim.WriteLog {
	if l, ok := m.(interface{ Log() *sim.WriteLog }); ok {
		return l.Log()
	}
	return nil
}

// Load8 loads a byte.
func (m Mem) Load8(addr uint64) uint8 {
	var b [1]byte
	m.read("load8", addr, b[:], false)
	return b[0]
}

// Load16 loads a little-endian 16-bit word.
func (m Mem) Load16(addr uint64) uint16 {
	var b [2]byte
	m.read("load16", addr, b[:], false)
	return binary.LittleEndian.Uint16(b[:])
}

// Load32 loads a little-endian 32-bit word.
func (m Mem) Load32(addr uint64) uint32 {
	var b [4]byte
	m.read("load32", addr, b[:], false)
	return binary.LittleEndian.Uint32(b[:])
}

// Load64 loads a little-endian 64-bit word.
func (m Mem) Load64(addr uint64) uint64 {
	var b [8]byte
	m.read("load64", addr, b[:], false)
	v := binary.LittleEndian.Uint64(b[:])
	m.slotRead("load64", addr, v)
	return v
}

// slotRead remembers a lane's 8-byte read of a tracked word (a signal
// slot) for the hang report: a wait whose expected was a read of its slot
// plus one is a baseline read (diag.go).
func (m Mem) slotRead(op string, addr, v uint64) {
	if m.d == nil || !m.log.Tracked(addr, addr+8) {
		return
	}
	info := m.t.RaceInfo(op, 2)
	m.d.slotRead(addr, slotRead{value: v, at: m.t.Now(), who: fmt.Sprintf("%s by %s (%s)", op, info.Who, info.Site)})
}

// Read loads len(dst) bytes at addr.
func (m Mem) Read(addr uint64, dst []byte) { m.read("load", addr, dst, false) }

// Store8 stores a byte.
func (m Mem) Store8(addr uint64, v uint8) {
	b := [1]byte{v}
	m.write("store8", addr, b[:], false)
}

// Store16 stores a little-endian 16-bit word.
func (m Mem) Store16(addr uint64, v uint16) {
	var b [2]byte
	binary.LittleEndian.PutUint16(b[:], v)
	m.write("store16", addr, b[:], false)
}

// Store32 stores a little-endian 32-bit word.
func (m Mem) Store32(addr uint64, v uint32) {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], v)
	m.write("store32", addr, b[:], false)
}

// Store64 stores a little-endian 64-bit word.
func (m Mem) Store64(addr uint64, v uint64) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	m.write("store64", addr, b[:], false)
}

// Write stores src at addr.
func (m Mem) Write(addr uint64, src []byte) { m.write("store", addr, src, false) }

// Fill stores n copies of v from addr.
func (m Mem) Fill(addr, n uint64, v byte) {
	b := make([]byte, n)
	for i := range b {
		b[i] = v
	}
	m.write("fill", addr, b, false)
}

// LoadAcquire32 is a 32-bit load with acquire order.
func (m Mem) LoadAcquire32(addr uint64) uint32 {
	var b [4]byte
	m.read("loadAcquire32", addr, b[:], true)
	return binary.LittleEndian.Uint32(b[:])
}

// LoadAcquire64 is a 64-bit load with acquire order.
func (m Mem) LoadAcquire64(addr uint64) uint64 {
	var b [8]byte
	m.read("loadAcquire64", addr, b[:], true)
	v := binary.LittleEndian.Uint64(b[:])
	m.slotRead("loadAcquire64", addr, v)
	return v
}

// StoreRelease32 is a 32-bit store with release order.
func (m Mem) StoreRelease32(addr uint64, v uint32) {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], v)
	m.write("storeRelease32", addr, b[:], true)
}

// StoreRelease64 is a 64-bit store with release order.
func (m Mem) StoreRelease64(addr uint64, v uint64) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	m.write("storeRelease64", addr, b[:], true)
}

func (m Mem) read(op string, addr uint64, dst []byte, acquire bool) {
	if err := m.mem.Read(addr, dst); err != nil {
		m.t.Fail(op, fmt.Errorf("memory access fault: %w", err))
	}
	if d := m.s.Race(); d != nil {
		m.race(d, op, addr, uint64(len(dst)), false, acquire)
	}
}

func (m Mem) write(op string, addr uint64, src []byte, release bool) {
	if d := m.s.Race(); d != nil {
		if err := m.mem.Check(op, addr, uint64(len(src))); err == nil {
			m.race(d, op, addr, uint64(len(src)), true, release)
		}
	}
	if m.log.Tracked(addr, addr+uint64(len(src))) {
		// A signal slot or flag: the write log names this lane and line.
		info := m.t.RaceInfo(op, 2)
		m.s.SetWriter(sim.WriterFunc(func() string { return fmt.Sprintf("%s by %s (%s)", op, info.Who, info.Site) }))
		defer m.s.SetWriter(nil)
	}
	if err := m.mem.Write(addr, src); err != nil {
		m.t.Fail(op, fmt.Errorf("memory access fault: %w", err))
	}
}

// race records the access for the detector (and the synchronisation of the
// acquire and release forms).
func (m Mem) race(d *race.Detector, op string, addr, n uint64, write, sync bool) {
	t := m.t.RaceThread()
	sp := d.Space(m.mem, "LSA memory")
	info := m.t.RaceInfo(op, 3) // race, read/write, the Mem method: its caller
	d.Access(t, sp, addr, addr+n, race.Access{Info: info, Write: write, Atomic: sync})
	if !sync {
		return
	}
	s := d.AddrSync(sp, addr)
	if write {
		t.Release(s)
	} else {
		t.Acquire(s)
		d.AcquireWriters(t, sp, addr, addr+n) // a flag written by a COPY, say
	}
}

// postedBy introduces the poster in an engine writer's name.
const postedBy = " (posted by "

// raceSignalsSeen: the lanes of a waitSignal that returned acquire their
// slots (the ATOMICs that raised them released into them).
func raceSignalsSeen(g *kernel.Active, args []*syncArgs) {
	d := g.Actor().Sim().Race()
	if d == nil {
		return
	}
	t := g.Actor().RaceThread()
	now := int64(g.Actor().Sim().Now())
	for i, l := range g.Lanes() { // what each lane's wait took, before any lane acquires
		a := args[i]
		st := a.s.st
		addr := st.pool.Base + uint64(a.src*st.n+a.q)*8
		who := l.Who()
		if i := strings.LastIndex(who, " lane "); i > 0 {
			who = who[:i] // the wave's lanes wait together
		}
		what := fmt.Sprintf("waitSignal by %s on signalBuf[%d × %d + %d] ≥ %d", who, a.src, st.n, a.q, a.expected)
		d.WaitHeld(t, d.Space(st.c.h.dev.Memory(), "LSA memory"), addr, what, l.Lane(), a.expected, ^uint64(0))
	}
	for _, a := range args {
		st := a.s.st
		addr := st.pool.Base + uint64(a.src*st.n+a.q)*8
		t.Acquire(d.AddrSync(d.Space(st.c.h.dev.Memory(), "LSA memory"), addr))
		t.Waited(signalWait(st.c.h.dev.Memory(), addr, fmt.Sprintf("waitSignal on signalBuf[%d × %d + %d] ≥ %d", a.src, st.n, a.q, a.expected), now))
	}
}

// signalWait is the race detector's record of a wait, described by what,
// that returned at (picoseconds) on the signal word at addr of mem: who
// wrote the value that released it, when, and, for an SDMA ATOMIC, its
// queue and the lane that posted it (the advice of a later race report
// names them). GIN's waits (WaitWord) record theirs with it too.
func signalWait(mem Memory, addr uint64, what string, at int64) race.Wait {
	w := race.Wait{What: what, At: at}
	if ws, _, _, ok := writeLog(mem).History(addr); ok && len(ws) > 0 {
		last := ws[len(ws)-1]
		w.By, w.ByAt = last.By, int64(last.At)
		if i := strings.Index(last.By, "'s "); strings.HasPrefix(last.By, "sdma ") && i > 0 {
			w.ByQueue = last.By[:i] // engine.Queue's writer name: "<queue>'s <packet> ... (posted by <lane>)"
			if j := strings.LastIndex(last.By, postedBy); j > 0 && strings.HasSuffix(last.By, ")") {
				w.ByPoster = last.By[j+len(postedBy) : len(last.By)-1]
			}
		}
	}
	return w
}
