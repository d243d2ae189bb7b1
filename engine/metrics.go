//go:build !emud_nometrics

package engine

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/emud-dev/emud/ring"
)

// Registry is the Prometheus registry a node's metrics live on
// (Config.Registry). A build with the emud_nometrics tag (the C ABI's,
// package capi, which serves no metrics) has a stand-in instead
// (metrics_off.go) and does not link Prometheus, whose package
// initialisation (its protobuf descriptors, net/http) was a large part of
// a C++ program's start.
type Registry = prometheus.Registry

func newRegistry() *Registry { return prometheus.NewRegistry() }

// metrics are the node's Prometheus collector. It lives on the node's own
// registry: no global state, so runs side by side never mix their counts.
// Faults are counted here, not in a CounterVec: a CounterVec and its
// registration were two dozen allocations of every node, scraped or not.
type metrics struct {
	queues []*queueCounters // creation order; destroyed queues keep their series
	mu     sync.Mutex       // faults: counted by the run, read by a scrape
	faults []faultCount     // each queue's and kind's, in order of first fault
}

// faultCount is the faults of one kind on one queue.
type faultCount struct {
	c    *queueCounters
	kind FaultKind
	n    uint64
}

var queueLabels = []string{"gpu", "peer", "queue"}

var (
	descPackets = prometheus.NewDesc("emud_sdma_packets_total", "SDMA packets executed, by opcode.", append(queueLabels, "op"), nil)
	descBytes   = prometheus.NewDesc("emud_sdma_bytes_copied_total",
		"Bytes written by COPY packets (a broadcast counts both destinations).", queueLabels, nil)
	descDoorbells = prometheus.NewDesc("emud_sdma_doorbells_total", "Doorbell writes.", queueLabels, nil)
	descPollWaits = prometheus.NewDesc("emud_sdma_poll_waits_total",
		"POLL_REGMEM packets that found the condition false and parked the queue.", queueLabels, nil)
	descRingFull = prometheus.NewDesc("emud_sdma_ring_full_waits_total",
		"Reservations that had to wait for the engine to free ring space.", queueLabels, nil)
)

var descFaults = prometheus.NewDesc("emud_sdma_faults_total",
	"Faults and engine events (TRAP, POLL_TIMEOUT, ...), by kind.", append(queueLabels, "kind"), nil)

// register puts the node's collector on reg: when the node is made with a
// registry, or when one is first asked of a node made without
// (Node.Registry), so a run nobody scrapes builds none.
func (m *metrics) register(reg *Registry) error { return reg.Register(queueCollector{m}) }

// queueCollector exports every queue's counters.
type queueCollector struct{ m *metrics }

func (queueCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descPackets, descBytes, descDoorbells, descPollWaits, descRingFull, descFaults} {
		ch <- d
	}
}

func (qc queueCollector) Collect(ch chan<- prometheus.Metric) {
	for _, c := range qc.m.queues {
		l := c.labels()
		for k := range c.packets {
			ch <- prometheus.MustNewConstMetric(descPackets, prometheus.CounterValue, c.packets[k].value(), append(l[:3:3], ring.Kind(k).String())...)
		}
		for _, x := range []struct {
			d *prometheus.Desc
			c *count
		}{{descBytes, &c.bytes}, {descDoorbells, &c.doorbells}, {descPollWaits, &c.pollWaits}, {descRingFull, &c.ringFull}} {
			ch <- prometheus.MustNewConstMetric(x.d, prometheus.CounterValue, x.c.value(), l[:]...)
		}
	}
	qc.m.mu.Lock()
	defer qc.m.mu.Unlock()
	for _, f := range qc.m.faults {
		l := f.c.labels()
		ch <- prometheus.MustNewConstMetric(descFaults, prometheus.CounterValue, float64(f.n), append(l[:3:3], string(f.kind))...)
	}
}

func (c *queueCounters) fault(kind FaultKind) {
	m := c.m
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range m.faults {
		if f := &m.faults[i]; f.c == c && f.kind == kind {
			f.n++
			return
		}
	}
	m.faults = append(m.faults, faultCount{c: c, kind: kind, n: 1})
}
