package kernel

import (
	"fmt"
	"strconv"
	"strings"
	"unsafe"

	"github.com/emud-dev/emud/race"
	"github.com/emud-dev/emud/sim"
)

// Limits of the emulated launcher (gfx9 / CDNA3-4).
const (
	DefaultWaveSize = 64
	MaxBlockThreads = 1024
	// MaxSharedBytes is the LDS one block may use on MI355X (160 KiB).
	MaxSharedBytes = 160 << 10
)

// Config describes one launch: Grid blocks of Block threads on GPU GPU.
type Config struct {
	Name        string // for reports; "" = "kernel"
	GPU         int
	Grid        int // blocks (gridDim.x)
	Block       int // threads per block (blockDim.x)
	WaveSize    int // 64 (default) or 32 (gfx1250)
	SharedBytes int // per-block shared memory (LDS)
	// Between, when set, runs on the wave's actor before each group's
	// call runs (with every lane of the group, idle ones too) and once
	// more when the wave's lanes have all returned (with all of them), so
	// a driver of native lanes can charge there the virtual time its
	// lanes' own code took since their last call (package capi's lane
	// cost): the wave sleeps, as one SIMT wave runs its lanes' code once.
	Between func(a *sim.Actor, lanes []*Thread)
	// Resident, when above 0 and below Grid, is how many blocks run at
	// once: the launch starts the first Resident blocks and each block
	// that retires starts the next, in block order, as a GPU dispatches
	// workgroups while earlier ones free their CUs. A block's waves and
	// lanes are made when it starts and dropped when it retires, so the
	// launch's memory is that of its resident blocks. 0 starts every
	// block at the launch.
	Resident int
	// Pool, when set, bounds the lanes alive at once of every launch
	// that shares it, on any GPU (Pool's doc): a block starts when it
	// fits both Resident and the pool.
	Pool *Pool
}

func (c *Config) check() error {
	if c.Name == "" {
		c.Name = "kernel"
	}
	if c.WaveSize == 0 {
		c.WaveSize = DefaultWaveSize
	}
	switch {
	case c.GPU < 0:
		return fmt.Errorf("kernel %q: GPU %d is negative", c.Name, c.GPU)
	case c.Grid < 1:
		return fmt.Errorf("kernel %q: grid of %d blocks: need at least 1", c.Name, c.Grid)
	case c.Block < 1 || c.Block > MaxBlockThreads:
		return fmt.Errorf("kernel %q: block of %d threads: need 1..%d", c.Name, c.Block, MaxBlockThreads)
	case c.WaveSize != 32 && c.WaveSize != 64:
		return fmt.Errorf("kernel %q: wave size %d: only 32 and 64 exist", c.Name, c.WaveSize)
	case c.SharedBytes < 0 || c.SharedBytes > MaxSharedBytes:
		return fmt.Errorf("kernel %q: %d B of shared memory per block: need 0..%d", c.Name, c.SharedBytes, MaxSharedBytes)
	case c.Resident < 0:
		return fmt.Errorf("kernel %q: %d resident blocks: need 0 (all) or more", c.Name, c.Resident)
	}
	return nil
}

// Kernel is one launched grid.
type Kernel struct {
	s     *sim.Sim
	cfg   Config
	fn    func(*Thread)
	code  Code           // LaunchCode's, run instead of fn
	wl    *sim.WatchList // &wlBuf
	wlBuf sim.WatchList  // inside the kernel: one allocation fewer a launch
	live  int            // waves not finished
	err   error
	// raceEnd collects the ended waves' clocks; nil when the run's race
	// detector is off (race.go).
	raceEnd *race.Sync
	// sites is this kernel's own view of siteCache: its waves look sites
	// up here first, so that parallel runs (explore's jobs) do not all
	// take the process-wide lock at every convergence. With a sim.Scratch
	// it is the Scratch's, shared by the kernels of the runs that borrow
	// it one after another (sitesOf).
	sites siteMap
	ar    *launchArena // the arena the kernel came from, nil without a Scratch
	// next is the first block not yet started when the grid did not fit
	// at its launch (Config.Resident, Config.Pool; 0 when every block
	// started at the launch), running the blocks started and not retired;
	// raceStart is what the launching actor had done at the launch, for
	// the blocks started later (race.go).
	next, running int
	raceStart     *race.Sync
}

// siteMap maps a call stack's pcs (as a string) to its interned site.
type siteMap map[string]*site

// sitesKey keys a Scratch's site cache.
var sitesKey = sim.NewLocalKey[siteMap]()

// sitesOf is the site cache a kernel of run s starts with: the one its
// Scratch keeps across an explore worker's seeds (a site is the same in
// every run: it depends on the program, not the seed; a map and its keys
// made per kernel were a dozen allocations of a 4 KiB all-to-all seed),
// or nil, made at the kernel's first site.
func sitesOf(s *sim.Sim) siteMap {
	sc := s.Scratch()
	if sc == nil {
		return nil
	}
	return sim.WorkerLocal(sc, sitesKey, func() siteMap { return siteMap{} })
}

// site returns the interned site of pcs (lookupSite), through the
// kernel's own cache.
func (k *Kernel) site(pcs []uintptr) *site {
	key := unsafe.String((*byte)(unsafe.Pointer(unsafe.SliceData(pcs))), len(pcs)*int(unsafe.Sizeof(uintptr(0))))
	if s := k.sites[key]; s != nil {
		return s
	}
	s := lookupSite(pcs)
	if k.sites == nil {
		k.sites = siteMap{}
	}
	k.sites[strings.Clone(key)] = s
	return s
}

// Launch starts fn on every thread of the grid. It may be called before
// sim.Run or from a running actor (a host thread launching a kernel); the
// kernel's waves start at the current virtual time.
func Launch(s *sim.Sim, cfg Config, fn func(t *Thread)) (*Kernel, error) {
	if fn == nil {
		return nil, fmt.Errorf("kernel %q: nil kernel function", cfg.Name)
	}
	return launch(s, cfg, fn, nil)
}

// Code is a kernel's code as a method of the state it runs with
// (LaunchCode), for a launcher that keeps that state (a job's handles)
// where a closure over it would be an allocation a launch.
type Code interface{ Run(t *Thread) }

// LaunchCode is Launch running c.Run on every thread.
func LaunchCode(s *sim.Sim, cfg Config, c Code) (*Kernel, error) {
	if c == nil {
		return nil, fmt.Errorf("kernel %q: nil kernel code", cfg.Name)
	}
	return launch(s, cfg, nil, c)
}

func launch(s *sim.Sim, cfg Config, fn func(t *Thread), code Code) (*Kernel, error) {
	if s == nil {
		return nil, fmt.Errorf("kernel: Launch with a nil simulator")
	}
	if err := cfg.check(); err != nil {
		return nil, err
	}
	ar := arenaOf(s)
	var k *Kernel
	if ar != nil {
		k = ar.kernels.New()
	} else {
		k = new(Kernel)
	}
	k.s, k.cfg, k.fn, k.code, k.sites, k.ar = s, cfg, fn, code, sitesOf(s), ar
	s.InitWatchList(&k.wlBuf, cfg.Name)
	k.wl = &k.wlBuf
	wavesPerBlock := (cfg.Block + cfg.WaveSize - 1) / cfg.WaveSize
	// Under timing perturbation (sim.Config.Perturb) the launch lands late
	// and each block starts a little after the launch, from the seed; at
	// level 0 every wave starts now.
	pert := s.Perturb()
	skew := pert.LaunchSkew()
	// A grid over Config.Resident or its Pool starts the blocks that fit
	// now and the others as blocks retire (startWaiting); its waves count
	// as live from the launch, so Wait waits for the blocks not started.
	if fits := cfg.Resident == 0 || cfg.Resident >= cfg.Grid; !fits || cfg.Pool != nil && !cfg.Pool.fits(cfg.GPU, cfg.Grid*cfg.Block, false) {
		k.live = cfg.Grid * wavesPerBlock
		k.raceDefer()
		k.next = -1 // none started yet (startWaiting)
		k.startWaiting(skew)
		if k.Waiting() > 0 && cfg.Pool != nil {
			cfg.Pool.waiting = append(cfg.Pool.waiting, k)
			cfg.Pool.use(cfg.GPU).waiting++
		}
		return k, nil
	}
	if cfg.Pool != nil {
		cfg.Pool.take(cfg.GPU, cfg.Grid*cfg.Block)
	}
	k.running = cfg.Grid
	// A launch's blocks, waves, lanes and lane lists are made a slice each
	// (not one object each): a 4 KiB all-to-all seed launches 8 kernels.
	// With a Scratch they come from its arena (arena.go).
	var (
		blks  []block
		waves []Wave
		ts    []Thread
		ptrs  []*Thread
	)
	// Per lane: its wave's lane list and the wave's two group lists
	// (Wave.pick), so picking a group never grows a slice.
	if ar != nil {
		blks, waves = ar.blocks.Take(cfg.Grid), ar.waves.Take(cfg.Grid*wavesPerBlock)
		ts, ptrs = ar.threads.Take(cfg.Grid*cfg.Block), ar.ptrs.Take(3*cfg.Grid*cfg.Block)
	} else {
		blks, waves = make([]block, cfg.Grid), make([]Wave, cfg.Grid*wavesPerBlock)
		ts, ptrs = make([]Thread, cfg.Grid*cfg.Block), make([]*Thread, 3*cfg.Grid*cfg.Block)
	}
	for b := 0; b < cfg.Grid; b++ {
		k.live += wavesPerBlock
		k.start(b, skew+pert.BlockSkew(), &blks[b], waves[b*wavesPerBlock:(b+1)*wavesPerBlock],
			ts[b*cfg.Block:(b+1)*cfg.Block], ptrs[3*b*cfg.Block:3*(b+1)*cfg.Block])
	}
	return k, nil
}

// start spawns block b's waves after delay start: in blk, waves, ts and
// ptrs (its share of the launch's slices), or, when blk is nil, in slices
// of its own that go when the block retires.
func (k *Kernel) start(b int, start sim.Time, blk *block, waves []Wave, ts []Thread, ptrs []*Thread) {
	s, cfg := k.s, k.cfg
	wavesPerBlock := (cfg.Block + cfg.WaveSize - 1) / cfg.WaveSize
	if blk == nil {
		blk, waves = new(block), make([]Wave, wavesPerBlock)
		ts, ptrs = make([]Thread, cfg.Block), make([]*Thread, 3*cfg.Block)
	}
	*blk = block{k: k, idx: b, shared: make([]byte, cfg.SharedBytes), live: wavesPerBlock}
	names, prefix := blockNames(s, cfg, b, wavesPerBlock)
	s.InitWatchList(&blk.wlBuf, names[:prefix])
	blk.wl = &blk.wlBuf
	for wi := 0; wi < wavesPerBlock; wi++ {
		w := &waves[wi]
		w.k, w.b, w.idx = k, blk, wi
		first := wi * cfg.WaveSize
		last := min(first+cfg.WaveSize, cfg.Block)
		n := last - first
		lanes := ts[first:last:last]
		p := ptrs[3*first : 3*last]
		w.lanes = p[:0:n]
		w.act.all, w.act.lanes = p[n:n:2*n], p[2*n:2*n:3*n]
		for tid := first; tid < last; tid++ {
			t := &lanes[tid-first]
			t.w, t.lane, t.tid = w, tid-first, tid
			w.lanes = append(w.lanes, t)
		}
		w.a = s.SpawnBodyAfter(start, waveName(names, prefix, wi), (*waveBody)(w))
		k.raceLaunch(w)
	}
}

// startWaiting starts the blocks not started that fit now, in block
// order, each after skew (the launch's, at the launch) and its own,
// unless the kernel failed.
func (k *Kernel) startWaiting(skew sim.Time) {
	cfg := k.cfg
	for k.canStart() && (cfg.Pool == nil || cfg.Pool.fits(cfg.GPU, cfg.Block, true)) {
		k.startNext(skew)
	}
}

// startOne starts the kernel's next block whatever its pool says, if
// canStart (Pool's Overflow), and reports whether it did.
func (k *Kernel) startOne() bool {
	if !k.canStart() {
		return false
	}
	k.startNext(0)
	return true
}

// canStart reports whether a block of the kernel waits to start and the
// kernel, not failed, has fewer than Config.Resident blocks running.
func (k *Kernel) canStart() bool {
	return k.Waiting() > 0 && k.err == nil && (k.cfg.Resident == 0 || k.running < k.cfg.Resident)
}

// startNext starts the next block, its lanes taken from the pool, after
// skew and its own skew.
func (k *Kernel) startNext(skew sim.Time) {
	cfg := k.cfg
	b := max(k.next, 0) // -1: none started yet
	if cfg.Pool != nil {
		cfg.Pool.take(cfg.GPU, cfg.Block)
	}
	k.running++
	k.next = b + 1
	k.start(b, skew+k.s.Perturb().BlockSkew(), nil, nil, nil, nil)
}

// retired is a block's last wave ending: its lanes go back to the pool
// and the blocks that fit now start.
func (k *Kernel) retired() {
	k.running--
	if p := k.cfg.Pool; p != nil {
		p.retire(k.cfg.GPU, k.cfg.Block) // starts k's next blocks too, if waiting
		return
	}
	k.startWaiting(0)
}

// Waiting is how many blocks of the grid have not started yet (a grid
// over Config.Resident or its Pool).
func (k *Kernel) Waiting() int {
	switch {
	case k.next == 0:
		return 0
	case k.next < 0:
		return k.cfg.Grid
	}
	return k.cfg.Grid - k.next
}

// blockNames names block b ("kernel/gpuG/bB", all[:prefix]) and its waves
// ("kernel/gpuG/bB/wW", waveName) from one string: one allocation a block
// (a Sprintf each was two allocations of every launch of one wave),
// interned by the run's Scratch, if any (none after the first seed).
func blockNames(s *sim.Sim, cfg Config, b, waves int) (all string, prefix int) {
	var arr [160]byte // a wave or two of short names; the string is interned (sim.Sim.Intern)
	buf := arr[:0]
	buf = append(buf, cfg.Name...)
	buf = append(buf, "/gpu"...)
	buf = strconv.AppendInt(buf, int64(cfg.GPU), 10)
	buf = append(buf, "/b"...)
	buf = strconv.AppendInt(buf, int64(b), 10)
	prefix = len(buf)
	for wi := 0; wi < waves; wi++ {
		if wi > 0 {
			buf = append(buf, buf[:prefix]...)
		}
		buf = append(buf, "/w"...)
		buf = strconv.AppendInt(buf, int64(wi), 10)
	}
	return s.Intern(buf), prefix
}

// waveName is wave wi's name in blockNames' string: the block's name and
// "/w0", "/w1" ... one after another.
func waveName(all string, prefix, wi int) string {
	start := 0
	for j := 0; ; j++ {
		end := start + prefix + 2 + len(strconv.Itoa(j))
		if j == wi {
			return all[start:end]
		}
		start = end
	}
}

// residency says what bounds the blocks alive at once, for hang reports.
func (k *Kernel) residency() string {
	var parts []string
	if r := k.cfg.Resident; r > 0 && r < k.cfg.Grid {
		parts = append(parts, fmt.Sprintf("at most %d blocks resident at once", r))
	}
	if p := k.cfg.Pool; p != nil {
		parts = append(parts, fmt.Sprintf("%d resident; the launches share %d lanes alive at once, %d alive now, passed when every lane alive waits (Pool.Overflow)", k.running, p.limit, p.live))
		if p.Hint != "" {
			parts[len(parts)-1] += " (" + p.Hint + ")"
		}
	}
	return strings.Join(parts, ", ")
}

// Config returns the launch configuration, defaults filled in.
func (k *Kernel) Config() Config { return k.cfg }

// Done reports whether every thread has returned (or the kernel failed).
func (k *Kernel) Done() bool { return k.live == 0 || k.err != nil }

// Err returns the error that failed the kernel, or nil.
func (k *Kernel) Err() error { return k.err }

// Wait blocks actor a (a host thread) until the kernel is done, like
// hipDeviceSynchronize, and returns its error.
func (k *Kernel) Wait(a *sim.Actor) error {
	a.Await(sim.Wait{List: k.wl, Lo: 0, Hi: 1, Pred: k.Done,
		Text: func() string {
			if n := k.Waiting(); n > 0 {
				return fmt.Sprintf("kernel %q on GPU %d: %d waves still running, %d of its %d blocks not started (%s; a block starts when a resident one retires: a wait of resident blocks on later ones hangs on a GPU too)",
					k.cfg.Name, k.cfg.GPU, k.live-n*((k.cfg.Block+k.cfg.WaveSize-1)/k.cfg.WaveSize), n, k.cfg.Grid, k.residency())
			}
			return fmt.Sprintf("kernel %q on GPU %d: %d waves still running", k.cfg.Name, k.cfg.GPU, k.live)
		}})
	k.raceJoin(a)
	return k.err
}

// WaitAll waits for every kernel and returns the first error.
func WaitAll(a *sim.Actor, ks ...*Kernel) error {
	var first error
	for _, k := range ks {
		if err := k.Wait(a); err != nil && first == nil {
			first = err
		}
	}
	return first
}

func (k *Kernel) fail(err error) {
	if k.err == nil {
		k.err = err
		k.s.Fail(err)
		k.wl.Notify(0, 1)
	}
}

func (k *Kernel) waveDone() {
	k.raceWaveEnd()
	k.live--
	if k.live == 0 {
		k.wl.Notify(0, 1)
	}
}

// block is one thread block: its shared memory and its barrier.
type block struct {
	k       *Kernel
	idx     int
	shared  []byte
	live    int // waves not finished
	arrived int // waves at the barrier
	gen     uint64
	wl      *sim.WatchList // &wlBuf
	wlBuf   sim.WatchList  // inside the block: one allocation fewer a block
	raceBar race.Sync      // the barrier's clock (race.go)
}

// arrive is one wave reaching s_barrier: it waits until every live wave of
// the block has arrived.
func (b *block) arrive(a *sim.Actor, w *Wave) {
	gen := b.gen
	b.arrived++
	b.raceArrive(a)
	defer b.raceLeave(a)
	if b.arrived >= b.live {
		b.release()
		return
	}
	a.Await(sim.Wait{List: b.wl, Lo: 0, Hi: 1, Pred: func() bool { return b.gen != gen },
		Text: func() string {
			return fmt.Sprintf("block barrier (SyncThreads) of block %d: %d of %d live waves arrived", b.idx, b.arrived, b.live)
		}})
}

func (b *block) release() {
	b.arrived = 0
	b.gen++
	b.wl.Notify(0, 1)
}

// waveDone takes a finished wave out of the barrier count; the waves already
// waiting may now be all there are.
func (b *block) waveDone() {
	b.live--
	if b.arrived > 0 && b.arrived >= b.live {
		b.release()
	}
	if b.live == 0 {
		b.k.retired()
	}
}
