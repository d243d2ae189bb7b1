package calibrate

import (
	"fmt"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/job"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/model"
	"github.com/emud-dev/emud/scenario"
	"github.com/emud-dev/emud/sim"
)

// bench is one measurement's emulated machine: an MI355X node (8 GPUs,
// queue ids per pair as MORI) under the model being judged, ranks with a
// send and a receive window each, and their dev comms with 8 queues, in
// package scenario's environment (scenario.Env over job.Job). Every
// measurement builds a fresh one, so no state leaks between rows.
type bench struct {
	*scenario.Env
	m          model.Model
	send, recv []cco.Window
	flags      []cco.Window // 4 KiB per rank for flags the host sets
}

const benchQueues = 8

func newBench(m model.Model, seed uint64, ranks int, win uint64) (*bench, error) {
	e, err := scenario.Build(scenario.Options{Ranks: ranks, Queues: benchQueues, Seed: seed},
		job.Config{Sim: sim.Config{Seed: seed}, Ranks: ranks, GPUs: engine.DefaultGPUs, Model: m})
	if err != nil {
		return nil, err
	}
	b := &bench{Env: e, m: m}
	// Payload windows are phantom: the rows measure time, and no bytes
	// means a 16 MiB row costs what a 4 KiB one does. Flags are real
	// memory: the host stores them and pollers read them.
	if b.send, err = e.PhantomWindow(win); err != nil {
		return nil, err
	}
	if b.recv, err = e.PhantomWindow(win); err != nil {
		return nil, err
	}
	if b.flags, err = e.Job.Window(4 << 10); err != nil {
		return nil, err
	}
	if err := e.CreateDevComms(benchQueues, false); err != nil {
		return nil, err
	}
	return b, nil
}

// hostMem is the memory as the host's device sees it (flag stores, CU
// polls).
func (b *bench) hostMem() cco.Memory { return b.Host.Device().Memory() }

// launch starts fn on every lane of a one-block kernel of threads lanes on
// rank's GPU.
func (b *bench) launch(rank, threads int, fn func(t *kernel.Thread, sdma *cco.Sdma)) error {
	_, err := b.Launch(rank, 1, threads, fn)
	return err
}

// launchWaves launches waves single-lane blocks on rank's GPU instead
// (independent waves).
func (b *bench) launchWaves(rank, waves int, fn func(t *kernel.Thread, sdma *cco.Sdma)) error {
	_, err := b.Launch(rank, waves, 1, fn)
	return err
}

// run runs the machine to the end; a hang or a failed kernel is an error
// naming the scenario.
func (b *bench) run(what string) error {
	if err := b.Sim.Run(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// observeDrain starts a free observer (not a wave: it costs nothing) that
// records when queue gpu → peer, q has executed everything rung on it so
// far: the moment the last packet's data landed. Call it right after the
// doorbell.
func (b *bench) observeDrain(gpu, peer, q int, done *sim.Time) {
	qu := b.Node.LookupQueue(gpu, peer, q)
	if qu == nil {
		*done = b.Sim.Now()
		return
	}
	target := qu.QuietTarget()
	b.Sim.Spawn("observer", func(a *sim.Actor) {
		qu.AwaitDrained(a, target)
		*done = a.Now()
	})
}

// setFlagAt makes the host store v into rank's flag word at time at; the
// store lands the model's HostStore cost later.
func (b *bench) setFlagAt(rank int, at sim.Time, v uint32, set *sim.Time) {
	addr := b.flags[rank].LocalPtr(0)
	*set = at
	b.Sim.At(at+b.m.Cost(model.HostStore), func() {
		_ = b.hostMem().Store32(addr, v) // allocated above: cannot fail
	})
}

// cuPoll is a CU spinning on a flag another agent sets: each read samples
// the word when it is issued and returns one MemRead later.
var cuPollCall = &kernel.Call[*cuPollArgs]{Name: "cuPoll", Run: func(g *kernel.Active, args []*cuPollArgs) error {
	for i, t := range g.Lanes() {
		p := args[i]
		for {
			v, err := p.mem.Load32(p.addr)
			if err != nil {
				return t.Error("cuPoll", err)
			}
			if d := p.m.Cost(model.MemRead); d > 0 {
				g.Actor().Sleep(d)
			} else if v != p.want {
				g.Actor().Sleep(sim.Nanosecond) // a model with free reads still spins in time
			}
			if v == p.want {
				break
			}
		}
		// The flag seen, the CU orders what it does next after it: a
		// system-scope acquire, one more uncached round trip.
		g.Actor().Sleep(p.m.Cost(model.MemRead))
	}
	return nil
}}

type cuPollArgs struct {
	mem  cco.Memory
	m    model.Model
	addr uint64
	want uint32
}

func (b *bench) cuPoll(t *kernel.Thread, rank int, want uint32) {
	kernel.Converge(t, cuPollCall, &cuPollArgs{mem: b.hostMem(), m: b.m, addr: b.flags[rank].LocalPtr(0), want: want})
}

// cuCopy is a CU kernel copying n bytes within its GPU's memory at the
// model's CU copy bandwidth (the bench's buffers are phantom, so only the
// time is real).
var cuCopyCall = &kernel.Call[*cuCopyArgs]{Name: "cuCopy", Run: func(g *kernel.Active, args []*cuCopyArgs) error {
	for i, t := range g.Lanes() {
		p := args[i]
		if err := p.mem.Check("cuCopy source", p.src, p.n); err != nil {
			return t.Error("cuCopy", err)
		}
		if err := p.mem.Check("cuCopy destination", p.dst, p.n); err != nil {
			return t.Error("cuCopy", err)
		}
		g.Actor().Sleep(p.m.Cost(model.CUCopy(p.n)))
		// A pack feeds an engine copy, so it ends with a system-scope
		// release (the engine must see the packed bytes): one uncached
		// round trip.
		g.Actor().Sleep(p.m.Cost(model.MemRead))
	}
	return nil
}}

type cuCopyArgs struct {
	mem      cco.Memory
	m        model.Model
	dst, src uint64
	n        uint64
}
