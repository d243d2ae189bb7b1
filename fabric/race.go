package fabric

import (
	"fmt"

	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/race"
)

// The race detector's view of the fabric (package race; Config.Race,
// sim.EnableRace). Each rank's fabric endpoint is one detector thread whose
// operations each run with the clock of their start:
//   - submit (and pullRed's issue, and a barrier's arrive) releases the
//     issuing wave into the operation;
//   - a put-family operation's reads of its shared-memory source and its
//     writes at each destination are accesses of the operation, granule by
//     granule as they happen; a get's or pullRed's reads of the target's
//     memory and its writes into shared memory likewise. Window memory is
//     accessed through the Fabric proxy; reductions are atomic (they do
//     not race with each other);
//   - having read its source, the operation releases into its ncclCftSmem's
//     flushSmem clock; completing, into its flush clock; FlushSmem and Flush
//     acquire them;
//   - a barrier's own puts and reductions release into the inbox granule
//     they land in; the barrier's wait reads it relaxed, so the peers'
//     clocks take effect at the wait's acquire fence (MemFence with
//     acquireOrderOf(order), producer → consumer);
//   - MemFence with a release part releases what the wave knows across
//     producer → consumer (Sys scope); with an acquire part it makes what
//     the wave saw ordered and, at Sys scope, visible from producer to
//     consumer proxy what writers so released (and what the rank's own
//     endpoint wrote); a barrier's arrive and wait fence likewise; generic loads
//     (DevComm.Load) of bytes the fabric wrote need that visibility
//     (Fabric → Generic), fabric reads of generic stores need Generic →
//     Fabric; DevComm.LoadRelaxed picks up the writers' clocks as a relaxed
//     load does.
// Phantom windows hold no data and are not tracked.
// Shared memory is reached by lanes through kernel.Thread.SharedLoad and
// SharedStore and needs happens-before only (Cta-scope fences move no
// clocks). The old fence checker (Config.Debug) orders by virtual time;
// this subsumes it with happens-before.

// opRace is an operation's detector state.
type opRace struct {
	t                  *race.Thread
	read, write, smemW *race.Info
}

func (sys *System) endpoint(d *race.Detector, rank int) *race.Thread {
	if sys.raceEP == nil {
		sys.raceEP = make([]*race.Thread, len(sys.ranks))
	}
	if sys.raceEP[rank] == nil {
		sys.raceEP[rank] = d.NewThread(fmt.Sprintf("rank %d fabric endpoint", rank))
	}
	return sys.raceEP[rank]
}

func (sys *System) rankSpace(d *race.Detector, rank int) race.SpaceID {
	return d.Space(sys.ranks[rank], fmt.Sprintf("rank %d memory", rank))
}

// raceStart derives o's thread from the running wave.
func (sys *System) raceStart(o *fop) {
	d := sys.s.Race()
	if d == nil {
		return
	}
	from := sys.s.RaceCurrent()
	if from == nil {
		return
	}
	t := d.Derive(sys.endpoint(d, o.rank), from)
	vc, rel := t.Snapshot(), t.Releases()
	who := fmt.Sprintf("rank %d's %s", o.rank, o.call())
	if o.tg.multicast {
		who += " (multicast)"
	} else {
		who += fmt.Sprintf(" to rank %d", o.tg.rank)
	}
	mk := func(op string, k race.OpKind) *race.Info {
		return &race.Info{Kind: race.KindFabric, OpKind: k, Who: who, Op: op, VC: vc, Rel: rel}
	}
	r := &opRace{t: t}
	switch o.kind {
	case opGet, opPullRed:
		r.read, r.smemW = mk(o.call()+" read", race.OpFabric), mk(o.call()+" write (shared memory)", race.OpFabricShared)
	default:
		r.read, r.write = mk(o.call()+" source read (shared memory)", race.OpFabricShared), mk(o.call()+" write", race.OpFabric)
	}
	o.race = r
}

// raceSmemRead records o's read of [off, off+n) of its shared-memory source.
func (sys *System) raceSmemRead(o *fop, off, n uint64) {
	if o.race == nil || o.internal {
		return
	}
	d := sys.s.Race()
	d.Access(o.race.t, o.smemSpace, uint64(o.smemOff)+off, uint64(o.smemOff)+off+n, race.Access{Info: o.race.read})
}

// raceSmemWrite records a fetching op's write into shared memory.
func (sys *System) raceSmemWrite(o *fop, off, n uint64) {
	if o.race == nil {
		return
	}
	d := sys.s.Race()
	d.Access(o.race.t, o.smemSpace, uint64(o.smemOff)+off, uint64(o.smemOff)+off+n, race.Access{Info: o.race.smemW, Write: true})
}

// raceRemote records o's access of [leOff+off, +n) of rank d's memory.
func (sys *System) raceRemote(o *fop, rank int, off, n uint64, write bool) {
	if o.race == nil {
		return
	}
	d := sys.s.Race()
	sp := sys.rankSpace(d, rank)
	lo := o.leOff + off
	if !o.internal && sys.ranks[rank].bytes(lo, n) == nil {
		return // a phantom window holds no data to race on
	}
	if o.internal {
		if write {
			o.race.t.Release(d.AddrSync(sp, o.leOff)) // a barrier's inbox
		}
		return
	}
	info := o.race.read
	if write {
		info = o.race.write
	}
	a := race.Access{Info: info, Write: write, Atomic: write && o.kind.reduces(), Proxy: race.ProxyFabric}
	if !write || o.mask == FullMask {
		d.Access(o.race.t, sp, lo, lo+n, a)
		return
	}
	// A cpMask writes only its enabled bytes of each 16-byte word.
	for w := lo &^ 15; w < lo+n; w += 16 {
		for b := 0; b < 16; {
			if o.mask&(1<<uint(b)) == 0 {
				b++
				continue
			}
			e := b
			for e < 16 && o.mask&(1<<uint(e)) != 0 {
				e++
			}
			d.Access(o.race.t, sp, max(lo, w+uint64(b)), min(lo+n, w+uint64(e)), a)
			b = e
		}
	}
}

// raceRelease releases o into s (its mbarrier's flushSmem or flush clock).
func (o *fop) raceRelease(s *race.Sync) {
	if o.race != nil {
		o.race.t.Release(s)
	}
}

// raceAcquire: the wave of g acquires s (flushSmem, flush).
func raceAcquire(g *kernel.Active, s *race.Sync) {
	if t := g.Actor().RaceThread(); t != nil {
		t.Acquire(s)
	}
}

// raceInboxes: a barrier wait saw its inbox granules reach their targets
// (relaxed loads: they take effect at the wait's acquire fence).
func (sys *System) raceInboxes(g *kernel.Active, rank int, ws []slotWait) {
	d := sys.s.Race()
	if d == nil {
		return
	}
	t := g.Actor().RaceThread()
	sp := sys.rankSpace(d, rank)
	for _, w := range ws {
		t.AcquirePending(d.AddrSync(sp, w.off&^15))
	}
}

// raceFence applies a fence by lane t of rank to its wave: a release part
// releases across producer → consumer (Sys scope), an acquire part commits
// what relaxed loads saw and, at Sys scope, makes visible across the pair
// what writers released and what the rank's own fabric endpoint wrote.
func (sys *System) raceFence(t *kernel.Thread, rank int, order MemoryOrder, producer, consumer ProxyType, scope FenceScope) {
	d := sys.s.Race()
	if d == nil {
		return
	}
	rt := t.RaceThread()
	p, c := raceProxy(producer), raceProxy(consumer)
	if scope != FenceScopeSys {
		p, c = race.ProxyNone, race.ProxyNone // Cta scope: shared memory only
	}
	if hasRelease(order) {
		rt.FenceRelease(p, c)
	}
	if hasAcquire(order) {
		rt.FenceAcquire(p, c, sys.endpoint(d, rank))
	}
}

func raceProxy(p ProxyType) race.Proxy {
	if p == ProxyFabric {
		return race.ProxyFabric
	}
	return race.ProxyGeneric
}

// raceGeneric records a generic load or store by lane t of [off, off+n) of
// its rank's memory; relaxed loads pick up the writers' clocks instead.
func (sys *System) raceGeneric(t *kernel.Thread, rank int, op string, off, n uint64, write, relaxed bool) {
	d := sys.s.Race()
	if d == nil {
		return
	}
	if sys.ranks[rank].bytes(off, n) == nil {
		return // a phantom window
	}
	sp := sys.rankSpace(d, rank)
	rt := t.RaceThread()
	if relaxed {
		d.AcquireRelaxed(rt, sp, off, off+n)
		return
	}
	d.Access(rt, sp, off, off+n, race.Access{Info: t.RaceInfo(op, 2), Write: write, Proxy: race.ProxyGeneric})
}
