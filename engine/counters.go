package engine

import (
	"strconv"
	"sync/atomic"

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
	labels    []string
	m         *metrics
}

func (m *metrics) forQueue(id QueueID) *queueCounters {
	c := &queueCounters{labels: []string{strconv.Itoa(id.GPU), strconv.Itoa(id.Peer), strconv.Itoa(id.Q)}, m: m}
	m.queues = append(m.queues, c)
	return c
}
