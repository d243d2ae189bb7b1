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
	d    *Detector
	id   int32
	name string
	vc   VC
	// pending is what relaxed loads saw, waiting for an acquire fence.
	pending VC
	// vis[pairIndex] is what the thread has made visible across proxies.
	vis [2]VC
	// snap is the last snapshot, valid while dirty is false.
	snap  VC
	dirty bool
}

// Name is the thread's name, as given to NewThread.
func (t *Thread) Name() string { return t.name }

func (t *Thread) tick() {
	t.vc[t.id]++
	t.dirty = true
}

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

// Release joins the thread's clock (and what it made visible across
// proxies) into s.
func (t *Thread) Release(s *Sync) {
	s.vc.join(t.vc)
	for i := range t.vis {
		if len(t.vis[i]) > 0 {
			s.vis[i].join(t.vis[i])
		}
	}
	t.tick()
}

// Acquire orders what follows in the thread after every release into s.
func (t *Thread) Acquire(s *Sync) {
	t.AcquireVC(s.vc)
	for i := range s.vis {
		if len(s.vis[i]) > 0 {
			t.vis[i].join(s.vis[i])
		}
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
	}
	from.tick()
	return t
}

// AcquirePending is a relaxed read of s: its releases take effect at the
// thread's next acquire fence.
func (t *Thread) AcquirePending(s *Sync) {
	if len(s.vc) > 0 {
		t.pending.join(s.vc)
	}
}

// Fence is a fence on the thread. An acquire part makes what relaxed loads
// saw ordered before what follows and, for producer ≠ consumer, makes
// everything ordered before the thread visible from producer to consumer
// proxy. A release part has no effect of its own (see the package doc).
func (t *Thread) Fence(acquire bool, producer, consumer Proxy) {
	if !acquire {
		return
	}
	if len(t.pending) > 0 {
		t.AcquireVC(t.pending)
		t.pending = t.pending[:0]
	}
	if i, ok := pairIndex(producer, consumer); ok {
		t.vis[i].join(t.vc)
	}
}

// Sync is a synchronisation object: a signal slot, a flag, a barrier, a
// kernel's end.
type Sync struct {
	vc  VC
	vis [2]VC
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
