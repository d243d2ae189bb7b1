package cco

import (
	"errors"
	"fmt"
	"strings"
)

// Queue lifecycle (emud issue 24). MORI's cco creates a comm's SDMA queues
// in ccoDevCommCreate and frees them in ccoCommDestroy; KFD caps the queues
// one engine holds (8 on gfx950, 6 on gfx1250: model.Arch), so a program
// that re-creates comms without destroying them fills its engines until a
// queue creation fails (mori fixed such a leak: queues freed on destroy).
//
// emud keeps two ownership modes:
//   - shared (the default): the process's comms share the queues of a GPU
//     pair, as MORI's anvil keys them by (src, dst, channel). CommDestroy
//     drops the comm's references; a queue no live comm references is
//     destroyed (where the device can destroy queues).
//   - owned (DevCommRequirements.PerCommQueues): the comm takes the lowest
//     free generation slot of its GPU among the live owning comms. Slot 0
//     uses the shared queue ids; a comm created while an earlier one is
//     alive gets queues of its own beside them (engine.Node.CommQueue), on
//     the same engines. Creating a comm while another owning comm of the
//     GPU is alive is reported as a possible leak (Host.Warnings), and a
//     queue creation refused by the engine cap names the live comms that
//     hold the engine's queues.

type lifecycle struct {
	refs   map[*Queue]int
	owners map[int][]*Comm // GPU → generation slots (nil: free)
}

// commQueuer is a device whose comms can own queues (the emulator).
type commQueuer interface {
	CommQueue(gpu, peer, q, gen int) (*Queue, error)
	DestroyQueue(q *Queue) error
}

func (l *lifecycle) ref(q *Queue) {
	if l.refs == nil {
		l.refs = map[*Queue]int{}
	}
	l.refs[q]++
}

// own gives c its generation slot (first owning dev comm of c).
func (l *lifecycle) own(c *Comm) {
	if c.gen >= 0 {
		return
	}
	if l.owners == nil {
		l.owners = map[int][]*Comm{}
	}
	slots := l.owners[c.GPU]
	gen := len(slots)
	var live []string
	for g, o := range slots {
		if o == nil {
			gen = min(gen, g)
			continue
		}
		live = append(live, o.name())
	}
	if gen == len(slots) {
		slots = append(slots, nil)
	}
	slots[gen] = c
	l.owners[c.GPU] = slots
	c.gen = gen
	if len(live) > 0 {
		perEngine := 0
		if m := c.h.dev.Model(); m != nil {
			perEngine = m.Engines().QueuesPerEngine
		}
		c.h.warn("ccoDevCommCreate (rank %d): GPU %d already has live comms that own queues (%s), never destroyed: this comm's queues are new hardware queues beside theirs; if those comms are finished, that is a queue leak (ccoCommDestroy frees them; an engine holds %d)",
			c.Rank, c.GPU, strings.Join(live, ", "), perEngine)
	}
}

func (c *Comm) name() string {
	return fmt.Sprintf("rank %d's comm in slot %d", c.Rank, c.gen)
}

// make creates (or finds) the queue toward peer p with id q for comm c.
func (l *lifecycle) make(c *Comm, p, q int) (*Queue, error) {
	if c.destroyed {
		return nil, fmt.Errorf("comm of rank %d was destroyed (ccoCommDestroy): its queues are gone", c.Rank)
	}
	var qu *Queue
	var err error
	if cq, ok := c.h.dev.(commQueuer); ok && c.gen > 0 {
		qu, err = cq.CommQueue(c.GPU, p, q, c.gen)
	} else {
		qu, err = c.h.dev.Queue(c.GPU, p, q)
	}
	if err != nil && c.gen >= 0 {
		var held []string
		for _, o := range l.owners[c.GPU] {
			if o != nil && o != c {
				held = append(held, fmt.Sprintf("%s holds %d queues", o.name(), o.queueCount()))
			}
		}
		if len(held) > 0 {
			err = fmt.Errorf("%w; live comms never destroyed hold this GPU's queues: %s (a queue leak: ccoCommDestroy frees them)", err, strings.Join(held, ", "))
		}
	}
	return qu, err
}

func (c *Comm) queueCount() int {
	n := 0
	for _, st := range c.devs {
		for _, q := range st.queues {
			if q != nil {
				n++
			}
		}
	}
	return n
}

// CommDestroy is ccoCommDestroy: it frees the comm's queues (owned ones, and
// shared ones no live comm references any more, where the device can
// destroy queues) and its generation slot. Every queue must be drained
// (quiet before destroying); a queue with work in flight is a *MisuseError
// and is kept. Using the comm's dev comms afterwards is an error.
func CommDestroy(c *Comm) error {
	if c == nil {
		return errors.New("ccoCommDestroy: nil comm")
	}
	if c.destroyed {
		return fmt.Errorf("ccoCommDestroy (rank %d): destroyed twice", c.Rank)
	}
	h := c.h
	l := &h.life
	cq, canDestroy := h.dev.(commQueuer)
	var errs []error
	for _, st := range c.devs {
		for i, q := range st.queues {
			if q == nil {
				continue
			}
			if l.refs[q]--; l.refs[q] > 0 {
				st.queues[i] = nil
				continue
			}
			delete(l.refs, q)
			if canDestroy {
				if err := cq.DestroyQueue(q); err != nil {
					errs = append(errs, err)
					continue
				}
			}
			st.queues[i] = nil
		}
	}
	if err := errors.Join(errs...); err != nil {
		return misuse("ccoCommDestroy", c.Rank, err)
	}
	if c.gen >= 0 {
		l.owners[c.GPU][c.gen] = nil
	}
	c.destroyed = true
	if c.w.comms[c.Rank] == c {
		c.w.comms[c.Rank] = nil
	}
	return nil
}
