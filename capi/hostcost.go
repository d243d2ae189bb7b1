package main

/*
#include "lane.h"
*/
import "C"

import (
	"fmt"
	"math"
	"os"
	"strconv"

	"github.com/emud-dev/emud/sim"
)

// Host code's virtual time (issue 38), an explicit setting: with
// EMUD_HOST_GBPS=R (GB/s, 1 GB = 1e9 bytes), the bytes of memory a host
// thread's instrumented code loads and stores between two of its HIP or
// cco calls (lane.c counts them, host memory and device memory alike) are
// paid at the next call, before it runs, as R GB/s of the thread's time:
// the host's actor sleeps bytes / R, perturbed per use at levels 1 and 2
// (sim.KeyLane, A = ^0). Unset or 0, host code takes no virtual time, as
// before: no document here measures a host CPU's rate, so emud sets no
// default, and a default would move every C++ program's timing and digest
// (every program's host code touches memory: filling a buffer, checking
// one), and with them the C++ = Go equivalence tests (cxx
// TestAlltoallMatchesGo, bench), whose Go host side does the same work
// for free. Partial: code before the first call and after the last is not
// charged, nor is code that ends in pthread_create, pthread_join or the
// program's exit (the next HIP or cco call pays for it), and a program
// built with -fno-sanitize=thread has no counts.
var hostRate float64 // GB/s; 0: off

// hostCostFromEnv reads EMUD_HOST_GBPS and turns lane.c's counting on.
func hostCostFromEnv() error {
	hostRate = 0
	v := os.Getenv("EMUD_HOST_GBPS")
	if v == "" {
		C.emud_set_host_cost(0)
		return nil
	}
	r, err := strconv.ParseFloat(v, 64)
	if err != nil || r < 0 || math.IsNaN(r) || math.IsInf(r, 0) || (r > 0 && r < 1e-3) {
		return fmt.Errorf("EMUD_HOST_GBPS=%q: want the rate host code touches memory at, in GB/s (0.001 or more; 0 or unset: host code takes no virtual time)", v)
	}
	hostRate = r
	on := C.int(0)
	if r > 0 {
		on = 1
	}
	C.emud_set_host_cost(on)
	return nil
}

// payHostCode makes host actor a sleep for the bytes its thread's code
// touched since its last call.
func payHostCode(a *sim.Actor) {
	if hostRate == 0 {
		return
	}
	n := uint64(C.emud_host_bytes_take())
	if n == 0 {
		return
	}
	d := sim.Time(math.Round(float64(n) / hostRate * float64(sim.Nanosecond)))
	if d <= 0 {
		return
	}
	a.Sleep(rt.s.Perturb().Duration(sim.Key{Kind: sim.KeyLane, A: ^uint32(0)}, d))
}
