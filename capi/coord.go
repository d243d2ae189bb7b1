package main

/*
#include "lane.h"
*/
import "C"

import (
	"fmt"
	"os"
	"sort"
	"strings"
)

// procs is what the coordinator knows of its forked rank processes
// (procs.c), for reports: by host thread id, how each process ended.
var procs procTable

type procTable struct {
	pids  map[int]int    // host id of each proxy -> its process
	ended map[int]string // host id -> "host thread N is forked rank process P (GPU g), which was killed by ..."
}

//export emudGoProcStarted
func emudGoProcStarted(id, pid C.int) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if procs.pids == nil {
		procs.pids = map[int]int{}
	}
	procs.pids[int(id)] = int(pid)
}

// procNotes and the records above are read by fail on another goroutine
// than the proxies' (under rt.mu).

//export emudGoProcEnded
func emudGoProcEnded(id, pid, apart C.int, how *C.char) {
	rt.announced = false // what the process stored before it ended is not known
	h := hostByID(int(id))
	if h == nil {
		return
	}
	// Called on the proxy thread in its turn (between the process's calls).
	h.attach()
	kind := "forked rank process"
	if apart != 0 {
		kind = "rank process"
	}
	text := fmt.Sprintf("%s is %s %d (GPU %d), which %s after its last call (%s)", h.name, kind, int(pid), h.dev, C.GoString(how), h.lastCallText())
	rt.mu.Lock()
	if procs.ended == nil {
		procs.ended = map[int]string{}
	}
	procs.ended[h.id] = text
	rt.mu.Unlock()
	if s := C.GoString(how); apart == 0 && s != "exited with status 0" {
		fmt.Fprintf(os.Stderr, "emud: %s\n", text)
	}
}

// procGone is the error of lane l, whose rank process is gone: it names
// the process and how it ended, and so does the report's list of ranks
// (the process's proxy, in a call that waits for the kernel, would see
// it end only after the report).
func procGone(l *C.emud_lane) error {
	var host, apart C.int
	var how [128]C.char
	pid := C.emud_remote_gone(l, &host, &apart, &how[0], C.int(len(how)))
	text := C.GoString(&how[0])
	kind := "forked rank process"
	if apart != 0 {
		kind = "rank process"
	}
	if h := hostByID(int(host)); h != nil {
		rt.mu.Lock()
		if procs.ended == nil {
			procs.ended = map[int]string{}
		}
		if _, ok := procs.ended[h.id]; !ok {
			procs.ended[h.id] = fmt.Sprintf("%s is %s %d (GPU %d), which %s while its kernel ran", h.name, kind, int(pid), h.dev, text)
		}
		rt.mu.Unlock()
	}
	return fmt.Errorf("the %s %d that runs this lane %s while its kernel ran", kind, int(pid), text)
}

// procNotes lists the forked rank processes that ended, for a failed
// run's report: a hang's waiters then read which process did not come.
func procNotes() string {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if len(procs.pids) == 0 {
		return ""
	}
	ids := make([]int, 0, len(procs.pids))
	for id := range procs.pids {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	var b strings.Builder
	b.WriteString("emud: ranks as processes (served by host threads of this one):\n")
	for _, id := range ids {
		if e, ok := procs.ended[id]; ok {
			fmt.Fprintf(&b, "  %s\n", e)
		} else {
			dev := -1
			if h := rt.hosts[id]; h != nil {
				dev = h.dev // the run has stopped: no thread moves it now
			}
			fmt.Fprintf(&b, "  host thread %d is rank process %d (GPU %d), still running; it exits with this run's status, saying nothing\n", id, procs.pids[id], dev)
		}
	}
	return b.String()
}
