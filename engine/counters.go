package engine

import (
	"strconv"
	"sync/atomic"

	"github.com/emud-dev/emud/internal/slab"
	"github.com/emud-dev/emud/ring"
)

// The per-queue counters are plain atomic counts that the node's
// Prometheus collector (metrics.go) reads at scrape time: a node makes
// thousands of queues, and resolving a labelled child of each CounterVec
// per queue (about fifteen label lookups and allocations) was a fifth of a
// small run's CPU. What a scrape sees is the same: every queue's series,
// zeros included, under the same names, help and labels.

// count is one counter of a queue: the simulator's actors add to it one at
// a time, a scrape may read it from another goroutine.
type count struct{ n atomic.Uint64 }

func (c *count) Inc()           { c.n.Add(1) }
func (c *count) Add(n uint64)   { c.n.Add(n) }
func (c *count) value() float64 { return float64(c.n.Load()) }

// queueCounters are one queue's counters: the per-packet cost is an
// atomic add.
type queueCounters struct {
	packets   [ring.NumKinds]count
	bytes     count
	doorbells count
	pollWaits count
	ringFull  count
	id        QueueID
	m         *metrics
}

// labels are the queue's label values (gpu, peer, queue), made when a
// scrape or a fault asks rather than with every queue of every run.
func (c *queueCounters) labels() [3]string {
	return [3]string{strconv.Itoa(c.id.GPU), strconv.Itoa(c.id.Peer), strconv.Itoa(c.id.Q)}
}

func (m *metrics) forQueue(id QueueID, sl *slab.Slab[queueCounters]) *queueCounters {
	c := sl.New()
	c.id, c.m = id, m
	if m.queues == nil {
		m.queues = make([]*queueCounters, 0, firstListCap)
	}
	m.queues = append(m.queues, c)
	return c
}
