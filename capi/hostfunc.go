//go:build cgo

package main

import (
	"fmt"

	"github.com/emud-dev/emud/race"
	"github.com/emud-dev/emud/sim"
)

// Host functions on a stream (hipLaunchHostFunc, hipStreamAddCallback
// and CUDA's): the function runs on a host thread once the stream's
// earlier work is done, and the stream's later work waits until it has
// returned. The header starts a thread of the program for each (a host
// thread, as a std::thread is: its turns are the simulator's, so the run
// stays one digest a seed), which first waits here, in virtual time, for
// the stream work before the call, then runs the function natively, and
// completes the call's stream work as it ends. For the race detector the
// function is ordered after the stream's earlier work and after what the
// enqueuing thread did before the call, and the stream's later work (and
// whatever synchronises with the stream) after the function. Partial: a
// forked rank process's function runs on a second thread of the process,
// which emud refuses (a forked rank has one host thread), and a program
// that exits before its stream reaches the function ends without the
// run's end report, as with any thread it never joined.

// hostFn is one host function's stream work.
type hostFn struct {
	deps []streamOp
	call string
	done bool
	wl   *sim.WatchList
	host race.Sync // the enqueuing thread's clock at the call
	end  race.Sync // released as the function's thread ends
	err  error     // the first failure of the work before it
}

func (f *hostFn) Done() bool { return f.done }

// Wait waits for the function to have run and returned, and orders the
// waiter after it.
func (f *hostFn) Wait(a *sim.Actor) error {
	a.Await(sim.Wait{List: f.wl, Lo: 0, Hi: 1, Pred: f.Done,
		Text: func() string { return f.call + " has not run and returned yet" }})
	if t := a.RaceThread(); t != nil {
		t.Acquire(&f.end)
	}
	return nil
}

// hostFnCall is EMUD_H_HOST_FUNC: a[0] 1 queues a function on stream
// a[1] (-> a[2] its token); 2, on the function's own thread with token
// a[1], waits for the stream work before it (an error: that work
// failed, the function gets it as its status) and makes the thread's
// end complete it.
func hostFnCall(h *host, act *sim.Actor, a []uint64, file string, line int, bad func(string, int, error) int) int {
	switch a[0] {
	case 1:
		st, err := streamOf(h, a[1])
		if err != nil {
			return bad("hipLaunchHostFunc", hipErrorInvalidHandle, err)
		}
		f := &hostFn{deps: st.deps(), call: fmt.Sprintf("the host function queued on %s at %s:%d", st, file, line),
			wl: rt.s.NewWatchList("hipLaunchHostFunc")}
		if t := act.RaceThread(); t != nil {
			t.Release(&f.host)
		}
		st.queued(f)
		rt.hostFns = append(rt.hostFns, f)
		a[2] = uint64(len(rt.hostFns))
	case 2:
		if a[1] == 0 || a[1] > uint64(len(rt.hostFns)) || rt.hostFns[a[1]-1] == nil {
			return bad("hipLaunchHostFunc", hipErrorInvalidHandle, fmt.Errorf("token %d: no host function queued with it", a[1]))
		}
		f := rt.hostFns[a[1]-1]
		rt.hostFns[a[1]-1] = nil // one thread a function
		h.onExit = append(h.onExit, func(w *sim.Actor) {
			if t := w.RaceThread(); t != nil {
				t.Release(&f.end)
			}
			f.done = true
			f.wl.Notify(0, 1)
		})
		for _, o := range f.deps {
			if err := o.Wait(act); err != nil && f.err == nil {
				f.err = err
			}
		}
		if t := act.RaceThread(); t != nil {
			t.Acquire(&f.host)
		}
		if f.err != nil {
			return hipErrorLaunchFailure // the function's status (hipStreamAddCallback)
		}
	default:
		return bad("emud host function call", hipErrorNotSupported, fmt.Errorf("unknown call %d (headers and library out of step?)", a[0]))
	}
	return hipSuccess
}
