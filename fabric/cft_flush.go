package fabric

import (
	"fmt"

	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/sim"
)

// ncclCft's submit, flushSmem and flush: handing the ops cft.go issued to
// the fabric, and waiting for their shared-memory reads and completion on
// the ncclCft's mbarrier.

// ---- submit, flushSmem, flush ----

var submitCall = &kernel.Call[*opArgs]{Name: "ncclCft::submit", Run: func(g *kernel.Active, args []*opArgs) error {
	for i, t := range g.Lanes() {
		a := args[i]
		if !elected(g, t, a.op.Scope()) {
			continue
		}
		a.c.mb.submit(a.c.issuer())
	}
	return nil
}}

// issuer is mb.byThread[c.t], the issuer of the ops c's thread issued as
// an elected thread (c.t is always the thread a lane's call runs on), from
// c's cache while mb's issuers have not been reset since; nil if it has
// none.
func (c *Cft) issuer() *issuer {
	m := c.mb
	if c.is != nil && c.isGen == m.gen {
		return c.is
	}
	is := m.byThread[c.t]
	if is != nil {
		c.is, c.isGen = is, m.gen
	}
	return is
}

// submit hands the elected thread's issued ops to the fabric, then
// expect_tx(txCount).
func (m *mbar) submit(is *issuer) {
	if is == nil {
		return
	}
	for _, o := range is.unsub {
		if !o.started {
			m.sys.start(o)
		}
	}
	clear(is.unsub)
	is.unsub = is.unsub[:0] // the next ops reuse its array
	m.tx += is.txCount
	is.txCount = 0
	m.maybeComplete()
}

func (c *Cft) converge(op kernel.Group, call *kernel.Call[*opArgs]) {
	if op.Thread() != c.t {
		c.t.Fail(call.Name, fmt.Errorf("OpCoop belongs to %v, not to this ncclCft's thread", op.Thread()))
	}
	c.a = opArgs{c: c, op: op}
	kernel.Converge(c.t, call, &c.a)
}

// Submit is ncclCft::submit: the elected thread of op hands its issued
// operations to the fabric. Every OpCoop that issued must submit before
// flushSmem or flush.
func (c *Cft) Submit(op kernel.Group) { c.converge(op, submitCall) }

var flushSmemCall = &kernel.Call[*opArgs]{Name: "ncclCft::flushSmem", Run: func(g *kernel.Active, args []*opArgs) error {
	a := args[0]
	m := a.c.mb
	if m.sys.debug {
		if n, by := m.unsubmitted(); n > 0 {
			return g.Errorf(g.Lanes()[0], "%d operations issued by %s were never submitted: call submit before flushSmem", n, by[0].who())
		}
	}
	w := m.sys.diag.enterFlush(g, m, "flushSmem")
	defer m.sys.diag.leave(g.Wave())
	g.Actor().Await(sim.Wait{List: m.wl, Lo: 0, Hi: 1,
		Pred: func() bool { n, _ := m.unsubmitted(); return m.smemBusy == 0 && n == 0 },
		Text: w.text})
	raceAcquire(g, &m.raceSmem)
	return nil
}}

// FlushSmem is ncclCft::flushSmem: every thread of op waits until submitted
// operations have read their shared-memory sources (so the buffers may be
// reused), then op syncs. It says nothing about completion at the
// destination.
func (c *Cft) FlushSmem(op kernel.Group) {
	c.converge(op, flushSmemCall)
	op.Sync()
}

var flushCall = &kernel.Call[*opArgs]{Name: "ncclCft::flush", Run: func(g *kernel.Active, args []*opArgs) error {
	var m *mbar
	for i, t := range g.Lanes() {
		a := args[i]
		m = a.c.mb
		if !elected(g, t, a.op.Scope()) {
			continue
		}
		if m.flushBy.t != nil {
			return g.Errorf(t, "%s already has a flush in this phase (by %s): one flush per phase, and its coop must include every issuing group", m.name, m.flushBy)
		}
		if m.sys.debug {
			if n, by := m.unsubmitted(); n > 0 {
				return g.Errorf(t, "%d operations issued by %s were never submitted: every group that issues must call submit before flush", n, by[0].who())
			}
		}
		m.flushBy = groupRef{t, a.op.Scope()}
		m.pending = 0
		m.maybeComplete()
	}
	w := m.sys.diag.enterFlush(g, m, "flush")
	defer m.sys.diag.leave(g.Wave())
	for _, a := range args {
		p := a.c.parity
		g.Actor().Await(sim.Wait{List: m.wl, Lo: 0, Hi: 1, Pred: func() bool { return m.phase&1 != p }, Text: w.text})
		r := m.done[p&1]
		a.report, a.code = r.has, uint32(r.code)
		a.c.parity ^= 1
	}
	raceAcquire(g, &m.raceDone)
	return nil
}}

// Flush is ncclCft::flush: the elected thread arrives on the mbarrier and
// every thread of op waits until everything tracked in the phase has
// completed. hasReport says a fabric error was reported in the phase and
// report is its 8-bit code (0 on success: the code writes it either way).
// op must include the threads of every group that issued on the object.
func (c *Cft) Flush(op kernel.Group) (hasReport bool, report uint32) {
	c.converge(op, flushCall)
	return c.a.report, c.a.code
}
