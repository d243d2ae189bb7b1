package planted

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/race"
	"github.com/emud-dev/emud/sim"
)

// The reset shapes: a receiver that counts each call from 0 resets its
// signal slot between two calls of a point-to-point step, after the first
// call's wait. The fixed twins are the correct shape the signal-lifecycle
// checks must stay quiet on (issue 37): the reset is ordered after the
// last wait of the first epoch and before the second call's signal (a
// host barrier: rank 0's second send is launched once the reset is done),
// so the second wait holds on the second call's signal, not on the value
// the first one left. The bugs launch rank 0's second send as soon as its
// first has finished, so the reset races the second call's signal: when
// the signal lands first the reset erases it and the receiver waits for
// good (store-over-signal).

// resetMech is how the receiver resets its slot.
type resetMech int

const (
	resetLane   resetMech = iota // a lane store in the first call's receive kernel, after its wait
	resetHost                    // a host thread's store once the receive kernel has finished
	resetMemset                  // a fill kernel on the receiver's stream after the receive kernel, which the host synchronises with (hipMemsetAsync, then hipStreamSynchronize)
)

// resetBetweenCalls is the reset program for mechanism m.
func resetBetweenCalls(m resetMech) program {
	return func(p *prog) func() error {
		const n = epochBytes
		w := p.window(4 * n) // rank 0: the calls' blocks at 0 and n; rank 1: their destinations at 2n and 3n
		p.fill(w, 0, 0, n, 0)
		p.fill(w, 0, n, n, 1)
		if p.err != nil {
			return nil
		}
		sl := p.slot(1, 0, 0)
		var got1, got2 []byte
		send := func(call uint64) kernelFn {
			return func(t *kernel.Thread, sdma *cco.Sdma) {
				sdma.Put(1, w[1], (2+call)*n, w[0], call*n, n, 0, cco.RemoteSignal)
				sdma.QuietQueue(1, 0)
			}
		}
		send1 := p.launchNamed("send-call1", 0, send(0))
		recv1 := p.launchNamed("recv-call1", 1, func(t *kernel.Thread, sdma *cco.Sdma) {
			sdma.WaitSignal(0, 0, 1)
			got1 = snapshot(sdma, w[1], 2*n, n)
			if m == resetLane {
				cco.NewMem(sdma.Thread(), sdma.DevComm()).Store64(sl, 0) // the reset, after this epoch's last wait
			}
		})
		if !p.fixed {
			p.after(send1, 0, "send-call2", send(1)) // bug: not ordered after the reset
		}
		p.Sim.Spawn("host barrier", func(a *sim.Actor) {
			if recv1.Wait(a) != nil {
				return
			}
			switch m {
			case resetHost:
				p.hostStore64(a, sl, 0)
			case resetMemset:
				k, err := p.LaunchNamed("memset-async", 1, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
					cco.NewMem(sdma.Thread(), sdma.DevComm()).Write(sl, make([]byte, 8))
				})
				if err != nil {
					p.Sim.Fail(err)
					return
				}
				if k.Wait(a) != nil { // hipStreamSynchronize
					return
				}
			}
			// Both hosts past a barrier: the second call starts.
			if p.fixed {
				if _, err := p.LaunchNamed("send-call2", 0, 1, 1, send(1)); err != nil {
					p.Sim.Fail(err)
					return
				}
			}
			if _, err := p.LaunchNamed("recv-call2", 1, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
				sdma.WaitSignal(0, 0, 1)
				got2 = snapshot(sdma, w[1], 3*n, n)
			}); err != nil {
				p.Sim.Fail(err)
			}
		})
		return func() error {
			return errors.Join(checkBytes("rank 1's call-1 block as its kernel read it", got1, 0, 0),
				checkBytes("rank 1's call-2 block as its kernel read it", got2, 0, 1))
		}
	}
}

// hostStore64 is host thread a's store of v at addr, as the race detector
// sees a host store (emutest.HostMem's): a plain write by that thread.
func (p *prog) hostStore64(a *sim.Actor, addr, v uint64) {
	mem := p.Mem()
	if d := p.Sim.Race(); d != nil {
		site := "?"
		if _, file, line, ok := runtime.Caller(1); ok {
			site = fmt.Sprintf("%s:%d", filepath.Base(file), line)
		}
		info := &race.Info{Kind: race.KindHost, OpKind: race.OpHost, Who: "host thread " + a.Name(), Op: "store64", Site: site}
		d.Access(a.RaceThread(), d.Space(mem, "LSA memory"), addr, addr+8, race.Access{Info: info, Write: true})
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	if err := mem.Write(addr, b[:]); err != nil {
		p.Sim.Fail(err)
	}
}

// destroy-before-quiet: rank 0's kernel puts a block to rank 1 and ends
// without draining its queue; the host, once the kernel has finished,
// destroys the comm (ccoCommDestroy), whose queue may still hold the copy.
// Kernel exit does not drain SDMA, so the destroy is refused for the work
// in flight. The fixed twin quiets the queue before the kernel ends: the
// queue has retired every packet (rptr == wptr), and its destroy must
// succeed under every timing, the engine's gap after the last packet
// included (issue 37's false alarm).
func destroyBeforeQuiet(p *prog) func() error {
	const n = epochBytes
	w := p.sender(2*n, n)
	send := p.launchNamed("send", 0, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.Put(1, w[1], n, w[0], 0, n, 0, cco.RemoteSignal)
		if p.fixed {
			sdma.QuietQueue(1, 0)
		}
	})
	recv := p.launchNamed("recv", 1, func(t *kernel.Thread, sdma *cco.Sdma) { sdma.WaitSignal(0, 0, 1) })
	if p.err != nil {
		return nil
	}
	p.Sim.Spawn("host0", func(a *sim.Actor) {
		if send.Wait(a) != nil {
			return
		}
		if err := cco.CommDestroy(p.Comms[0]); err != nil {
			p.Sim.Fail(err)
		}
	})
	p.Sim.Spawn("host1", func(a *sim.Actor) {
		if recv.Wait(a) != nil {
			return
		}
		if err := cco.CommDestroy(p.Comms[1]); err != nil {
			p.Sim.Fail(err)
		}
	})
	return func() error { return p.expect("rank 1's block from rank 0", w[1], n, n, 0, 0) }
}
