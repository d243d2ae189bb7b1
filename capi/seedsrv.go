package main

/*
#include <stdlib.h>
#include "lane.h"
extern char** environ;
static char* emud_environ_at(int i) { return environ ? environ[i] : NULL; }
*/
import "C"

import (
	"debug/elf"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"syscall"
	"unsafe"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/race"
)

// The seed server's Go side (seedsrv.c runs the loop): the environment
// of each seed, the loaded object's line tables, and the reset that
// makes the next seed's emulation as a fresh process's. Its state
// machine: idle (no emulation; rt is zero) → running a seed (the
// program's first call built rt) → ended clean (main returned, every host
// thread ended, the simulation's end was waited for and reported) →
// idle again by seedReset. Any other end of a seed ends the process.

// seedServing is set at the first request: the process is a seed
// server, whose Go environment must follow C's (start).
var seedServing bool

// emudGoSeedEnv replaces Go's environment (and through cgo's setenv,
// C's, which seedsrv.c has cleared) with the seed's n K=V strings.
//
//export emudGoSeedEnv
func emudGoSeedEnv(kv **C.char, n C.int) {
	seedServing = true
	os.Clearenv()
	for _, p := range unsafe.Slice(kv, int(n)) {
		k, v, _ := strings.Cut(C.GoString(p), "=")
		if err := os.Setenv(k, v); err != nil {
			fmt.Fprintf(os.Stderr, "emud seed server: the seed's environment: %v\n", err)
			os.Exit(exitFailed)
		}
	}
}

// emudGoSeedEnvSync brings Go's copy of the environment up to C's.
//
//export emudGoSeedEnvSync
func emudGoSeedEnvSync() { syncEnvFromC() }

// syncEnvFromC makes Go's environment C's environ: a variable only Go
// has goes, one C has (set by C code after Go's copy was made) comes.
func syncEnvFromC() {
	c := map[string]string{}
	var order []string
	for i := 0; ; i++ {
		p := C.emud_environ_at(C.int(i))
		if p == nil {
			break
		}
		k, v, ok := strings.Cut(C.GoString(p), "=")
		if !ok {
			continue
		}
		if _, dup := c[k]; !dup {
			order = append(order, k)
			c[k] = v
		}
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := c[k]; !ok {
			os.Unsetenv(k)
		}
	}
	for _, k := range order {
		if v, ok := syscall.Getenv(k); !ok || v != c[k] {
			os.Setenv(k, c[k])
		}
	}
}

// fileID names a file's version: the seed form's line tables are read
// again only when it changes.
type fileID struct {
	dev, ino    uint64
	size, mtime int64
}

// emudGoSeedObject says the seed form at path is loaded at bias: lanes'
// return addresses are looked up in its line tables. It returns the
// run-time address of the object's __dso_handle (its symbol table's), by
// which its exit handlers are registered, or 0 where it has none.
//
//export emudGoSeedObject
func emudGoSeedObject(path *C.char, bias C.uint64_t) C.uint64_t {
	p := C.GoString(path)
	var st syscall.Stat_t
	var id fileID
	if syscall.Stat(p, &st) == nil {
		id = fileID{uint64(st.Dev), st.Ino, st.Size, st.Mtim.Nano()}
	}
	if !pcLines.loaded || id != pcLines.id || id == (fileID{}) {
		pcLines = pcLineTable{loaded: true, id: id, cache: map[uint64]fileLine{}}
		pcLines.d, _ = lineDWARF(p, true) // nil: no line table
		seedDSO = dsoHandle(p)
	}
	pcLines.bias = uint64(bias)
	if seedDSO == 0 {
		return 0
	}
	return C.uint64_t(uint64(bias) + seedDSO)
}

// seedDSO is the seed form's __dso_handle, as an address in the file.
var seedDSO uint64

// dsoHandle finds __dso_handle in the object's symbol table (0 when it
// was stripped).
func dsoHandle(path string) uint64 {
	f, err := elf.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		return 0
	}
	for _, s := range syms {
		if s.Name == "__dso_handle" && s.Section != elf.SHN_UNDEF {
			return s.Value
		}
	}
	return 0
}

// emudGoSeedLive counts the host threads other than main that have not
// ended: the seed cannot be reset while one may still run the program's
// code.
//
//export emudGoSeedLive
func emudGoSeedLive() C.int {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	live := 0
	for i, h := range rt.hosts {
		if i != 0 && !h.exited {
			live++
		}
	}
	return C.int(live)
}

// emudGoSeedReset puts every piece of the emulation's Go state back as a
// fresh process has it (capi/doc.go lists them), after a seed that ended
// clean; the line tables of the seed form are kept (emudGoSeedObject).
//
//export emudGoSeedReset
func emudGoSeedReset() { seedReset() }

func seedReset() {
	if rt.stop != nil {
		close(rt.stop) // the spin watch
	}
	if rt.j != nil {
		// The node's rings go back to the process's pool now, cleared
		// where they were written, for the next seed's node to take
		// resident: dropped unclosed, they stayed out until a collection
		// ran the node's cleanup, and the seeds between took fresh
		// mappings whose pages each faulted in when first written.
		rt.j.Close()
	}
	rt = emulation{}
	ctxSites = map[string]*kernel.NativeSite{}
	callLoopLimit = 0
	freeState = freeSections{}
	procs = procTable{}
	cftState = cftTable{}
	gins = newGinTable()
	gdaState = newGdaTable()
	moriDevSeq, moriDevOf, moriPoolsOf = map[cco.UniqueId]map[int]int{}, map[uint64]moriDevKey{}, map[moriDevKey][]uint64{}
	spinWatch = spinMarks{}
	hostAllocs, hostFlags = map[uint64]uint64{}, map[uint64]uint64{}
	hipUsed, hipLive, hipFreed, hipSerial = nil, nil, nil, 0
	ipcOpened = map[ipcKey]int{}
	symbolFills = map[symbolKey]symbolFill{}
	hostRate = 0
	laneCode, lsaTimed = nil, false
	ncclDevs = map[uint64]bool{}
	lanes = map[*kernel.Thread]*lane{}
	sites = map[siteKey]*kernel.NativeSite{}
	queueNoted = map[queueNote]bool{}
	moriRings, moriSpare, moriPending, moriRng = nil, map[int][]moriMem{}, map[*lane][]moriStore{}, (*rand.Rand)(nil)
	threadBarriers = map[uint64]*threadBarrier{}
	threadSyncs = map[uint64]*threadSync{}
	hostAtomicsAll, hostAtomicsOver = race.Sync{}, false
	pcLines.bias = 0 // the next seed's object says its own
}
