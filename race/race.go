package race

import (
	"fmt"
	"sort"
)

// Kind says what sort of actor made an access, for the report's words.
type Kind uint8

const (
	KindLane   Kind = iota // lane code (a CU load or store)
	KindSDMA               // an SDMA engine executing a queue's packet
	KindFabric             // a fabric operation (put, get, red, pullRed)
	KindHost               // host code
)

var kindNames = [...]string{"lane", "sdma", "fabric", "host"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Info says who made an access and where. Callers keep one per access site
// (a lane at a line, a queue's packet, a fabric operation) and pass the
// same pointer for every access from it.
type Info struct {
	Kind Kind
	// Who is the actor: "kernel "k" GPU 1 block 0 wave 0 lane 3",
	// "sdma gpu0→gpu1 q0", "fabric put by rank 2".
	Who string
	// Op is the access: "load", "store", "COPY source read", ...
	Op string
	// Site is where: file:line for lane code, the packet for a queue.
	// SiteOf, when set, gives it at report time instead (formatting on
	// every packet would cost more than the detector).
	Site   string
	SiteOf fmt.Stringer
	// OpKind is what sort of operation it is, as its layer knows it: it
	// picks the missing edge's advice (RegisterAdvice).
	OpKind OpKind
	// Queue names the SDMA queue (KindSDMA), for the missing edge's words.
	Queue string
	// Poster, when set, names at report time who posted the packet
	// (KindSDMA): two blocks posting to one queue share its name.
	Poster fmt.Stringer
	// VC is the writer's knowledge, which a relaxed load of the written
	// bytes picks up (fabric operations set it; nil elsewhere), and Rel
	// its cross-proxy releases (Thread.Releases).
	VC  VC
	Rel [2]VC

	k string // key, made on first report
}

// key identifies the access site for de-duplicating reports: a lane's
// access by who, op and site; an engine's or the fabric's by who and op
// (each packet or operation has its own Info, and one report per queue and
// op is enough).
func (i *Info) key() string {
	if i == nil {
		return ""
	}
	if i.k == "" {
		i.k = i.Kind.String() + "|" + i.Who + "|" + i.Op
		if i.Kind == KindLane || i.Kind == KindHost {
			i.k += "|" + i.Site
		}
	}
	return i.k
}

// Access is one memory access's kind.
type Access struct {
	Info   *Info
	Write  bool
	Atomic bool // atomics do not conflict with atomics
	Proxy  Proxy
}

// SpaceID names one address space of the detector.
type SpaceID int32

type space struct {
	name  string
	pages map[uint64]*page
}

type syncKey struct {
	sp   SpaceID
	addr uint64
}

// MaxReports is how many distinct races a detector keeps.
const MaxReports = 64

// Detector is one run's race detector. Like the rest of a run it is used by
// one actor or event at a time and needs no locks.
type Detector struct {
	now     func() int64
	threads []*Thread
	spaces  []*space
	spaceBy map[any]SpaceID
	syncs   map[syncKey]*Sync
	reports []Report
	seen    map[[2]string]int // report index by the sites' keys; −1: dropped
	dropped int
	lives   map[syncKey]*slotLife // signal slots' epochs (signals.go)
	// lifeOnly keeps only the signal-lifecycle findings (SetLifecycleOnly).
	lifeOnly bool
	free     []freeSlot // retired threads' slots (retire.go)
}

// New returns a detector; now gives the virtual time in picoseconds.
func New(now func() int64) *Detector {
	return &Detector{now: now, spaceBy: map[any]SpaceID{}, syncs: map[syncKey]*Sync{}, seen: map[[2]string]int{}}
}

// NewThread starts a thread that knows nothing yet.
func (d *Detector) NewThread(name string) *Thread {
	t := &Thread{d: d, id: int32(len(d.threads)), name: name}
	t.vc = make(VC, t.id+1)
	t.vc[t.id] = 1
	d.threads = append(d.threads, t)
	return t
}

// SetLifecycleOnly makes the detector keep only its signal-lifecycle
// findings (a Report with a Class), not plain data races: debug mode's
// checks (package cco turns it on for MORI_CCO_SDMA_DEBUG when no one asked
// for the detector). The happens-before state is kept in full either way.
func (d *Detector) SetLifecycleOnly(on bool) { d.lifeOnly = on }

// LifecycleOnly reports whether SetLifecycleOnly is on.
func (d *Detector) LifecycleOnly() bool { return d.lifeOnly }

// Fork orders child after what parent did so far (a launch, a spawn).
func (d *Detector) Fork(parent, child *Thread) {
	if parent == nil || child == nil {
		return
	}
	if !child.used {
		d.reslot(parent, child)
	}
	child.AcquireVC(parent.vc)
	parent.tick()
}

// ForkSync orders child after what s holds (a launching thread's clock
// released into s earlier): a wave started after its launch, when the
// launching thread has gone on. child keeps the slot it has.
func (d *Detector) ForkSync(s *Sync, child *Thread) {
	if s == nil || child == nil {
		return
	}
	child.AcquireVC(s.vc)
}

// Space returns the address space of key, making it on first use; name
// describes it in reports.
func (d *Detector) Space(key any, name string) SpaceID {
	if id, ok := d.spaceBy[key]; ok {
		return id
	}
	id := SpaceID(len(d.spaces))
	d.spaces = append(d.spaces, &space{name: name, pages: map[uint64]*page{}})
	d.spaceBy[key] = id
	return id
}

// AddrSync is the synchronisation object of the word at addr of sp: a
// signal slot or a flag.
func (d *Detector) AddrSync(sp SpaceID, addr uint64) *Sync {
	k := syncKey{sp, addr}
	s := d.syncs[k]
	if s == nil {
		s = &Sync{}
		d.syncs[k] = s
	}
	return s
}

// ---- shadow memory ----

const (
	pageBits = 12
	pageSize = 1 << pageBits
)

// ep is one access as the shadow keeps it.
type ep struct {
	tid    int32
	clk    uint32
	proxy  Proxy
	atomic bool
	write  bool
	at     int64
	info   *Info
	lo, hi uint64 // the whole access
}

// seg is the state of the bytes up to end (from the previous segment's end).
type seg struct {
	end uint32
	w   ep   // last plain write; tid < 0 if none
	aw  []ep // atomic writes since w, one per thread
	r   []ep // plain reads since w, one per thread
}

type page struct{ segs []seg }

var noWrite = ep{tid: -1}

func newPage() *page { return &page{segs: []seg{{end: pageSize, w: noWrite}}} }

// split makes a segment boundary at off and returns the index of the
// segment that starts there.
func (p *page) split(off uint32) int {
	i := sort.Search(len(p.segs), func(i int) bool { return p.segs[i].end > off })
	if i == len(p.segs) {
		return i
	}
	start := uint32(0)
	if i > 0 {
		start = p.segs[i-1].end
	}
	if start == off {
		return i
	}
	left := p.segs[i]
	left.end = off
	p.segs = append(p.segs, seg{})
	copy(p.segs[i+1:], p.segs[i:])
	p.segs[i] = left
	return i + 1
}

func epsEqual(a, b []ep) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func (s *seg) sameState(o *seg) bool {
	return s.w == o.w && epsEqual(s.aw, o.aw) && epsEqual(s.r, o.r)
}

// merge joins equal neighbours among segments [from−1, to]: only those
// can have become equal, so the rest of the page is moved once, not
// compared.
func (p *page) merge(from, to int) {
	lo := max(from, 1)
	hi := min(to, len(p.segs)-1)
	if lo > hi {
		return
	}
	out := lo // p.segs[:out] is merged so far
	for i := lo; i <= hi; i++ {
		if p.segs[out-1].sameState(&p.segs[i]) {
			p.segs[out-1].end = p.segs[i].end
			continue
		}
		p.segs[out] = p.segs[i]
		out++
	}
	if out == hi+1 {
		return // nothing merged
	}
	n := copy(p.segs[out:], p.segs[hi+1:])
	clear(p.segs[out+n:])
	p.segs = p.segs[:out+n]
}

// with returns a new list with e in place of the entry of e's thread.
func with(list []ep, e ep) []ep {
	out := make([]ep, 0, len(list)+1)
	for _, x := range list {
		if x.tid != e.tid {
			out = append(out, x)
		}
	}
	return append(out, e)
}

func (sp *space) page(n uint64) *page {
	p := sp.pages[n]
	if p == nil {
		p = newPage()
		sp.pages[n] = p
	}
	return p
}

// Access records an access by t to [lo, hi) of sp and reports every
// earlier conflicting access not ordered before it.
func (d *Detector) Access(t *Thread, sp SpaceID, lo, hi uint64, a Access) {
	if t == nil || hi <= lo {
		return
	}
	t.dirty = true
	t.record()
	e := ep{tid: t.id, clk: t.vc[t.id], proxy: a.Proxy, atomic: a.Atomic, write: a.Write, at: d.now(), info: a.Info, lo: lo, hi: hi}
	s := d.spaces[sp]
	for pn := lo >> pageBits; pn <= (hi-1)>>pageBits; pn++ {
		base := pn << pageBits
		p := s.page(pn)
		from := uint32(max(lo, base) - base)
		to := uint32(min(hi, base+pageSize) - base)
		i := p.split(from)
		j := i
		if to < pageSize {
			j = p.split(to)
		} else {
			j = len(p.segs)
		}
		start := uint64(from)
		for k := i; k < j; k++ {
			g := &p.segs[k]
			d.check(t, sp, base+start, base+uint64(g.end), g, &e, a)
			switch {
			case a.Write && !a.Atomic:
				g.w, g.aw, g.r = e, nil, nil
			case a.Write:
				g.aw = with(g.aw, e)
			case !a.Atomic:
				g.r = with(g.r, e)
			}
			start = uint64(g.end)
		}
		p.merge(i, j)
	}
}

// check reports the earlier accesses in g that conflict with e.
func (d *Detector) check(t *Thread, sp SpaceID, lo, hi uint64, g *seg, e *ep, a Access) {
	conflict := func(prev *ep) {
		if ok, hb := t.before(prev, e.proxy); !ok {
			d.report(sp, lo, hi, prev, e, hb)
		}
	}
	if g.w.tid >= 0 {
		conflict(&g.w)
	}
	if !a.Atomic {
		for i := range g.aw {
			conflict(&g.aw[i])
		}
	}
	if a.Write {
		for i := range g.r {
			conflict(&g.r[i])
		}
	}
}

// before reports whether prev is ordered before an access by t through
// proxy p; hb says whether happens-before held (so a false ok with a true
// hb is a missing proxy crossing).
func (t *Thread) before(prev *ep, p Proxy) (ok, hb bool) {
	if prev.tid == t.id && prev.clk >= t.base {
		return true, true // program order (an earlier occupant's access is not: retire.go)
	}
	if prev.clk > t.vc.get(prev.tid) {
		return false, false
	}
	if i, cross := pairIndex(prev.proxy, p); cross && prev.clk > t.vis[i].get(prev.tid) {
		return false, true
	}
	return true, true
}

func (t *Thread) pendInfo(i *Info) {
	joinNonEmpty(&t.pending, i.VC)
	for k := range i.Rel {
		joinNonEmpty(&t.pendingRel[k], i.Rel[k])
	}
}

// AcquireWriters is an acquire load by t of [lo, hi) of sp: what the last
// writers of the bytes knew when they wrote (Info.VC) is ordered before
// what follows in t. An engine's POLL of a flag that a COPY wrote, say.
func (d *Detector) AcquireWriters(t *Thread, sp SpaceID, lo, hi uint64) {
	if t == nil {
		return
	}
	saved, savedRel := t.pending, t.pendingRel
	t.pending, t.pendingRel = nil, [2]VC{}
	d.AcquireRelaxed(t, sp, lo, hi)
	if len(t.pending) > 0 {
		t.AcquireVC(t.pending)
	}
	t.pending, t.pendingRel = saved, savedRel
}

// AcquireRelaxed is a relaxed load by t of [lo, hi) of sp: the writers'
// knowledge (Info.VC) of the bytes read takes effect at t's next acquire
// fence.
func (d *Detector) AcquireRelaxed(t *Thread, sp SpaceID, lo, hi uint64) {
	if t == nil || hi <= lo {
		return
	}
	s := d.spaces[sp]
	for pn := lo >> pageBits; pn <= (hi-1)>>pageBits; pn++ {
		p := s.pages[pn]
		if p == nil {
			continue
		}
		base := pn << pageBits
		from := max(lo, base) - base
		to := min(hi, base+pageSize) - base
		start := uint64(0)
		for k := range p.segs {
			g := &p.segs[k]
			if uint64(g.end) > from && start < to {
				if g.w.tid >= 0 && g.w.info != nil {
					t.pendInfo(g.w.info)
				}
				for _, x := range g.aw {
					if x.info != nil {
						t.pendInfo(x.info)
					}
				}
			}
			start = uint64(g.end)
		}
	}
}
