package race

// VC is a vector clock: entry i is the last clock of thread i known.
type VC []uint32

func (v VC) get(i int32) uint32 {
	if int(i) < len(v) {
		return v[i]
	}
	return 0
}

// join sets v to the entry-wise maximum of v and o.
func (v *VC) join(o VC) {
	if len(o) > len(*v) {
		*v = append(*v, make(VC, len(o)-len(*v))...)
	}
	w := *v
	for i, c := range o {
		if c > w[i] {
			w[i] = c
		}
	}
}

func (v VC) clone() VC { return append(VC(nil), v...) }

// Thread is one sequential actor of the run: a wave, an SDMA queue, a
// rank's fabric endpoint, a host actor.
type Thread struct {
	d     *Detector
	id    int32
	name  string
	waits []Wait // the last waits that released it (explain.go), for reports
	vc    VC
	// pending is what relaxed loads saw, waiting for an acquire fence;
	// pendingRel the cross-proxy releases they saw.
	pending    VC
	pendingRel [2]VC
	// rel[pairIndex] is what writers released across proxies (their
	// release fences), as far as this thread knows; vis what the thread
	// has made visible to itself across proxies (its acquire fences).
	rel [2]VC
	vis [2]VC
	// snap is the last snapshot, valid while dirty is false.
	snap  VC
	dirty bool
	// used: the thread has ticked or recorded something under its id, so
	// its slot can no longer change (Fork re-slots only unused threads);
	// acc: it recorded something at its current clock (retire.go).
	used, acc bool
	// base is the first clock of this occupant of the slot: the slot's
	// clocks below it are earlier occupants' (retire.go).
	base uint32
	// prev are the slot's previous occupant's last waits, for reports on
	// its accesses; born is when this occupant took the slot.
	prev    []Wait
	born    int64
	retired bool
}

// Name is the thread's name, as given to NewThread.
func (t *Thread) Name() string { return t.name }

func (t *Thread) tick() {
	t.vc[t.id]++
	t.dirty = true
	t.used, t.acc = true, false
}

// record notes that something is being recorded under the thread's id at
// its current clock.
func (t *Thread) record() { t.used, t.acc = true, true }

// Snapshot is a release of the thread's clock into a value the caller
// keeps (a packet's writer, a fabric operation's submit): what happened in
// the thread so far is ordered before whoever acquires it.
func (t *Thread) Snapshot() VC {
	if t.snap != nil && !t.dirty {
		return t.snap
	}
	t.snap = t.vc.clone()
	t.tick()
	t.dirty = false
	return t.snap
}

// AcquireVC orders what follows in the thread after v's release.
func (t *Thread) AcquireVC(v VC) {
	if len(v) == 0 {
		return
	}
	t.vc.join(v)
	t.dirty = true
}

// Release joins the thread's clock (and its cross-proxy releases and
// visibility) into s.
func (t *Thread) Release(s *Sync) {
	s.vc.join(t.vc)
	for i := range t.vis {
		joinNonEmpty(&s.vis[i], t.vis[i])
		joinNonEmpty(&s.rel[i], t.rel[i])
	}
	t.tick()
}

func joinNonEmpty(dst *VC, src VC) {
	if len(src) > 0 {
		dst.join(src)
	}
}

// Acquire orders what follows in the thread after every release into s.
func (t *Thread) Acquire(s *Sync) {
	t.AcquireVC(s.vc)
	for i := range s.vis {
		joinNonEmpty(&t.vis[i], s.vis[i])
		joinNonEmpty(&t.rel[i], s.rel[i])
	}
}

// Derive starts an operation that owner (a rank's fabric endpoint) runs
// on behalf of from, as of now: a thread with owner's identity and a new
// clock of owner's, knowing what from did so far (a release of from). Its
// accesses are owner's, so two operations of one owner are never reported
// against each other.
func (d *Detector) Derive(owner, from *Thread) *Thread {
	owner.vc[owner.id]++
	t := &Thread{d: d, id: owner.id, name: owner.name, vc: from.vc.clone()}
	t.vc.join(owner.vc[: owner.id+1 : owner.id+1])
	if len(t.vc) <= int(owner.id) {
		t.vc = append(t.vc, make(VC, int(owner.id)+1-len(t.vc))...)
	}
	t.vc[owner.id] = owner.vc[owner.id]
	for i := range from.vis {
		t.vis[i] = from.vis[i].clone()
		t.rel[i] = from.rel[i].clone()
	}
	from.tick()
	return t
}

// Releases is what t's writes publish across proxies to a relaxed reader
// (Info.Rel): a copy of its release-fence knowledge.
func (t *Thread) Releases() [2]VC { return [2]VC{t.rel[0].clone(), t.rel[1].clone()} }

// AcquirePending is a relaxed read of s: its releases take effect at the
// thread's next acquire fence.
func (t *Thread) AcquirePending(s *Sync) {
	joinNonEmpty(&t.pending, s.vc)
	for i := range s.rel {
		joinNonEmpty(&t.pendingRel[i], s.rel[i])
	}
}

// FenceRelease is the release part of a fence from producer to consumer
// proxy: what the thread knows now is released across them, for a
// reader's acquire fence of the same pair. (Ordering by happens-before
// needs no fence of the writer's: the thread's releases carry it.)
func (t *Thread) FenceRelease(producer, consumer Proxy) {
	if i, ok := pairIndex(producer, consumer); ok {
		t.rel[i].join(t.vc)
		t.dirty = true
	}
}

// FenceAcquire is the acquire part of a fence from producer to consumer
// proxy. What relaxed loads saw is ordered before what follows; for
// producer ≠ consumer, the writes other threads released across the pair
// (FenceRelease, then happens-before to here) and the writes of own (the
// thread's own rank's fabric endpoint, say), become visible across it.
func (t *Thread) FenceAcquire(producer, consumer Proxy, own ...*Thread) {
	if len(t.pending) > 0 {
		t.AcquireVC(t.pending)
		t.pending = t.pending[:0]
	}
	for i := range t.pendingRel {
		if len(t.pendingRel[i]) > 0 {
			t.rel[i].join(t.pendingRel[i])
			t.pendingRel[i] = t.pendingRel[i][:0]
		}
	}
	i, ok := pairIndex(producer, consumer)
	if !ok {
		return
	}
	t.vis[i].join(t.rel[i])
	for _, o := range own {
		if o == nil {
			continue
		}
		if len(t.vis[i]) <= int(o.id) {
			t.vis[i] = append(t.vis[i], make(VC, int(o.id)+1-len(t.vis[i]))...)
		}
		t.vis[i][o.id] = max(t.vis[i][o.id], t.vc.get(o.id))
	}
}

// Sync is a synchronisation object: a signal slot, a flag, a barrier, a
// kernel's end.
type Sync struct {
	vc  VC
	vis [2]VC
	rel [2]VC
}

// Proxy is who accesses fabric memory (ncclMemProxyType).
type Proxy uint8

const (
	ProxyNone    Proxy = iota // ordered by happens-before alone
	ProxyGeneric              // the SM's loads and stores
	ProxyFabric               // the fabric
)

func (p Proxy) String() string {
	switch p {
	case ProxyGeneric:
		return "Generic"
	case ProxyFabric:
		return "Fabric"
	}
	return "none"
}

// pairIndex numbers the proxy crossings: Fabric→Generic 0, Generic→Fabric 1.
func pairIndex(from, to Proxy) (int, bool) {
	switch {
	case from == ProxyFabric && to == ProxyGeneric:
		return 0, true
	case from == ProxyGeneric && to == ProxyFabric:
		return 1, true
	}
	return 0, false
}
