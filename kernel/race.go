package kernel

import (
	"fmt"
	"runtime"

	"github.com/emud-dev/emud/race"
	"github.com/emud-dev/emud/sim"
)

// The race detector's edges of the launcher (package race): a launch
// orders each wave after what the launching actor did so far; a wave's end
// is released to its kernel, which Wait acquires; SyncThreads releases
// each arriving wave into the block's barrier and acquires it on the way
// out. The lanes of a wave are one detector thread (the wave's actor), so
// SyncWarp adds nothing.

// Actor is the wave's sim actor: the one its lanes run on.
func (w *Wave) Actor() *sim.Actor { return w.a }

// raceLaunch forks the wave's detector thread from the launching actor,
// or, for a block started after the launch (Config.Resident), from what
// that actor had done at the launch: the block that retired to make room
// for it is no order a program may rely on.
func (k *Kernel) raceLaunch(w *Wave) {
	d := k.s.Race()
	if d == nil {
		return
	}
	if k.raceEnd == nil {
		k.raceEnd = &race.Sync{}
	}
	if k.raceStart != nil {
		d.ForkSync(k.raceStart, w.a.RaceThread())
		return
	}
	d.Fork(k.s.RaceCurrent(), w.a.RaceThread())
}

// raceDefer keeps what the launching actor did so far for the blocks
// that start later (raceLaunch).
func (k *Kernel) raceDefer() {
	d := k.s.Race()
	if d == nil {
		return
	}
	k.raceStart = &race.Sync{} // empty for a launch before the run starts
	if t := k.s.RaceCurrent(); t != nil {
		t.Release(k.raceStart)
	}
}

// raceWaveEnd releases the ending wave (the running actor) to the kernel.
func (k *Kernel) raceWaveEnd() {
	if k.raceEnd != nil {
		if t := k.s.RaceCurrent(); t != nil {
			t.Release(k.raceEnd)
		}
	}
}

// raceJoin orders a after every wave that has ended.
func (k *Kernel) raceJoin(a *sim.Actor) {
	if k.raceEnd != nil {
		if t := a.RaceThread(); t != nil {
			t.Acquire(k.raceEnd)
		}
	}
}

func (b *block) raceArrive(a *sim.Actor) {
	if b.k.raceEnd == nil {
		return
	}
	if t := a.RaceThread(); t != nil {
		t.Release(&b.raceBar)
	}
}

func (b *block) raceLeave(a *sim.Actor) {
	if b.k.raceEnd == nil {
		return
	}
	if t := a.RaceThread(); t != nil {
		t.Acquire(&b.raceBar)
	}
}

// raceInfos caches one race.Info per (lane, call site, op) of a run.
type raceInfos map[raceSite]*race.Info

type raceSite struct {
	t  *Thread
	pc uintptr
	op string
}

// raceInfosKey keys the run's race descriptions of lanes' call sites.
var raceInfosKey = sim.NewLocalKey[raceInfos]()

// RaceInfo is the race detector's description of an access op by this
// lane at the call site skip frames above RaceInfo's caller (0: the
// caller itself): who (kernel, GPU, block, wave, lane) and file:line.
// Device-memory APIs (cco.Mem, fabric's generic loads and stores) call it.
func (t *Thread) RaceInfo(op string, skip int) *race.Info {
	var pcs [1]uintptr
	runtime.Callers(skip+2, pcs[:])
	s := t.w.k.s
	infos := sim.RunLocal(s, raceInfosKey, func() raceInfos { return raceInfos{} })
	k := raceSite{t, pcs[0], op}
	if i := infos[k]; i != nil {
		return i
	}
	f, _ := runtime.CallersFrames(pcs[:]).Next()
	i := &race.Info{Kind: race.KindLane, OpKind: race.OpLane, Op: op,
		Who:  t.Who(),
		Site: fmt.Sprintf("%s:%d", shortFile(f.File), f.Line)}
	infos[k] = i
	return i
}

// shortFile keeps the last two path elements: pkg/file.go.
func shortFile(p string) string {
	slash := 0
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' {
			if slash++; slash == 2 {
				return p[i+1:]
			}
		}
	}
	return p
}

// RaceThread is the lane's thread in the race detector (its wave's), or
// nil when the detector is off.
func (t *Thread) RaceThread() *race.Thread { return t.w.a.RaceThread() }

// SharedSpace is the block's shared memory as an address space of d.
func (t *Thread) SharedSpace(d *race.Detector) race.SpaceID {
	b := t.w.b
	return d.Space(b, fmt.Sprintf("shared memory of kernel %q GPU %d block %d", b.k.cfg.Name, b.k.cfg.GPU, b.idx))
}

// SharedLoad copies len(dst) bytes of the block's shared memory at off
// into dst; SharedStore stores src there. Shared returns the same bytes
// for direct use; these are the accesses the race detector sees. A range
// outside the block's shared memory fails the kernel at the lane.
func (t *Thread) SharedLoad(off int, dst []byte) {
	t.sharedAccess("shared load", off, len(dst), false)
	copy(dst, t.w.b.shared[off:])
}

// SharedStore stores src into the block's shared memory at off.
func (t *Thread) SharedStore(off int, src []byte) {
	t.sharedAccess("shared store", off, len(src), true)
	copy(t.w.b.shared[off:], src)
}

func (t *Thread) sharedAccess(op string, off, n int, write bool) {
	sh := t.w.b.shared
	if off < 0 || n < 0 || off+n > len(sh) {
		t.Fail(op, fmt.Errorf("[%d, %d) is outside the block's %d B of shared memory", off, off+n, len(sh)))
	}
	d := t.w.k.s.Race()
	if d == nil || n == 0 {
		return
	}
	d.Access(t.RaceThread(), t.SharedSpace(d), uint64(off), uint64(off+n), race.Access{Info: t.RaceInfo(op, 2), Write: write})
}
