package engine

import (
	"strconv"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/emud-dev/emud/ring"
)

// metrics are the node's Prometheus collectors. They live on the node's own
// registry: no global state, so runs side by side never mix their counts.
//
// The per-queue counters are plain atomic counts that one Collector
// (queueCollector) reads at scrape time: a node makes thousands of queues,
// and resolving a labelled child of each CounterVec per queue (about
// fifteen label lookups and allocations) was a fifth of a small run's
// CPU. What a scrape sees is the same: every queue's series, zeros
// included, under the same names, help and labels.
type metrics struct {
	queues []*queueCounters // creation order; destroyed queues keep their series
	faults *prometheus.CounterVec
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

func newMetrics(reg *prometheus.Registry) (*metrics, error) {
	m := &metrics{
		faults: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "emud", Subsystem: "sdma",
			Name: "faults_total", Help: "Faults and engine events (TRAP, POLL_TIMEOUT, ...), by kind."}, append(queueLabels, "kind")),
	}
	for _, c := range []prometheus.Collector{queueCollector{m}, m.faults} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

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

// queueCollector exports every queue's counters.
type queueCollector struct{ m *metrics }

func (queueCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descPackets, descBytes, descDoorbells, descPollWaits, descRingFull} {
		ch <- d
	}
}

func (qc queueCollector) Collect(ch chan<- prometheus.Metric) {
	for _, c := range qc.m.queues {
		for k := range c.packets {
			ch <- prometheus.MustNewConstMetric(descPackets, prometheus.CounterValue, c.packets[k].value(), append(c.labels[:3:3], ring.Kind(k).String())...)
		}
		for _, x := range []struct {
			d *prometheus.Desc
			c *count
		}{{descBytes, &c.bytes}, {descDoorbells, &c.doorbells}, {descPollWaits, &c.pollWaits}, {descRingFull, &c.ringFull}} {
			ch <- prometheus.MustNewConstMetric(x.d, prometheus.CounterValue, x.c.value(), c.labels...)
		}
	}
}

func (c *queueCounters) fault(kind FaultKind) {
	c.m.faults.WithLabelValues(append(c.labels[:3:3], string(kind))...).Inc()
}
