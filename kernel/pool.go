package kernel

import (
	"fmt"
	"slices"
)

// Pool is a budget of lanes alive at once that the launches sharing it
// (Config.Pool) draw from, across GPUs: a launcher of native lanes, each
// costing it memory while it lives, bounds them all with one Pool. A
// block starts when its lanes fit: the lanes alive, the block's, and the
// room still due to the other GPUs with work (each is due an equal share
// of the budget, less what it has alive) within the budget. A GPU with no
// lane alive always starts a block, so every GPU makes progress (and the
// lanes alive may pass the budget by a block a GPU); blocks
// of one launch start in block order, so launches whose block b waits
// only for block b of other GPUs' launches (and earlier blocks) never
// wait on a block that cannot start. One GPU alone may use the whole
// budget. Grids whose lanes all fit at their launch start at once, as
// without a Pool.
type Pool struct {
	// Hint, when set, ends a hang report's words on the pool: how to
	// raise it (the launcher's setting).
	Hint    string
	limit   int
	live    int
	gpus    map[int]*gpuUse
	waiting []*Kernel // kernels with blocks not started, in launch order
}

// gpuUse is one GPU's lanes alive and its kernels with blocks waiting.
type gpuUse struct{ live, waiting int }

// NewPool is a Pool of lanes lanes alive at once.
func NewPool(lanes int) (*Pool, error) {
	if lanes < 1 {
		return nil, fmt.Errorf("kernel: a lane pool of %d lanes: need at least 1", lanes)
	}
	return &Pool{limit: lanes, gpus: map[int]*gpuUse{}}, nil
}

// Limit is the pool's budget of lanes.
func (p *Pool) Limit() int { return p.limit }

// Live is the number of lanes of the pool's launches alive now.
func (p *Pool) Live() int { return p.live }

func (p *Pool) use(gpu int) *gpuUse {
	u := p.gpus[gpu]
	if u == nil {
		u = &gpuUse{}
		p.gpus[gpu] = u
	}
	return u
}

// fits reports whether n more lanes may start on gpu: within the budget
// with the room due to the other GPUs with work set aside, or as the
// GPU's only block (one is never refused).
func (p *Pool) fits(gpu, n int, one bool) bool {
	u := p.use(gpu)
	if one && u.live == 0 {
		return true
	}
	active := 0
	for _, v := range p.gpus {
		if v.live > 0 || v.waiting > 0 {
			active++
		}
	}
	if u.live == 0 && u.waiting == 0 {
		active++ // gpu's own launch
	}
	share := p.limit / active
	due := 0
	for h, v := range p.gpus {
		if h != gpu && (v.live > 0 || v.waiting > 0) && v.live < share {
			due += share - v.live
		}
	}
	return p.live+n+due <= p.limit
}

func (p *Pool) take(gpu, n int) {
	p.live += n
	p.use(gpu).live += n
}

// retire gives back a retired block's n lanes and starts what now fits.
func (p *Pool) retire(gpu, n int) {
	p.live -= n
	p.use(gpu).live -= n
	p.pump()
}

// Overflow starts blocks past the budget when the run is quiescent
// (sim.Sim.OnQuiescent): every lane alive waits and blocks wait to start.
// The budget bounds emud's memory, not the program: a GPU's CUs hold more
// blocks than its share (Config.Resident), so a wait of the resident
// blocks on later ones (a grid-wide flag, a barrier over every block)
// runs there, and must here. On each GPU with blocks waiting, the first
// waiting kernel (in launch order) whose resident blocks are under its
// Config.Resident starts its next block; it reports whether any started.
// Only a wait past what the CUs hold is then a hang, as on a GPU.
func (p *Pool) Overflow() bool {
	var started []int // GPUs given a block this time
	p.each(func(k *Kernel) {
		if !slices.Contains(started, k.cfg.GPU) && k.startOne() {
			started = append(started, k.cfg.GPU)
		}
	})
	return len(started) > 0
}

// pump starts the waiting kernels' blocks that fit, kernel by kernel in
// launch order.
func (p *Pool) pump() { p.each(func(k *Kernel) { k.startWaiting(0) }) }

// each runs f on every waiting kernel in launch order and drops from the
// list those left with no block to start.
func (p *Pool) each(f func(k *Kernel)) {
	kept := p.waiting[:0]
	for _, k := range p.waiting {
		f(k)
		if k.Waiting() > 0 && k.err == nil {
			kept = append(kept, k)
		} else {
			p.use(k.cfg.GPU).waiting--
		}
	}
	clear(p.waiting[len(kept):])
	p.waiting = kept
}
