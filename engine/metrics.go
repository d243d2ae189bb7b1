package engine

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/emud-dev/emud/ring"
)

// metrics are the node's Prometheus collectors. They live on the node's own
// registry: no global state, so runs side by side never mix their counts.
type metrics struct {
	packets   *prometheus.CounterVec
	bytes     *prometheus.CounterVec
	doorbells *prometheus.CounterVec
	pollWaits *prometheus.CounterVec
	ringFull  *prometheus.CounterVec
	faults    *prometheus.CounterVec
}

var queueLabels = []string{"gpu", "peer", "queue"}

func newMetrics(reg *prometheus.Registry) (*metrics, error) {
	m := &metrics{
		packets: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "emud", Subsystem: "sdma",
			Name: "packets_total", Help: "SDMA packets executed, by opcode."}, append(queueLabels, "op")),
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "emud", Subsystem: "sdma",
			Name: "bytes_copied_total", Help: "Bytes written by COPY packets (a broadcast counts both destinations)."}, queueLabels),
		doorbells: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "emud", Subsystem: "sdma",
			Name: "doorbells_total", Help: "Doorbell writes."}, queueLabels),
		pollWaits: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "emud", Subsystem: "sdma",
			Name: "poll_waits_total", Help: "POLL_REGMEM packets that found the condition false and parked the queue."}, queueLabels),
		ringFull: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "emud", Subsystem: "sdma",
			Name: "ring_full_waits_total", Help: "Reservations that had to wait for the engine to free ring space."}, queueLabels),
		faults: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "emud", Subsystem: "sdma",
			Name: "faults_total", Help: "Faults and engine events (TRAP, POLL_TIMEOUT, ...), by kind."}, append(queueLabels, "kind")),
	}
	for _, c := range []prometheus.Collector{m.packets, m.bytes, m.doorbells, m.pollWaits, m.ringFull, m.faults} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// queueCounters are one queue's counters, resolved once so the per-packet
// cost is an atomic add.
type queueCounters struct {
	packets   [ring.NumKinds]prometheus.Counter
	bytes     prometheus.Counter
	doorbells prometheus.Counter
	pollWaits prometheus.Counter
	ringFull  prometheus.Counter
	labels    []string
	m         *metrics
}

func (m *metrics) forQueue(id QueueID) *queueCounters {
	l := []string{strconv.Itoa(id.GPU), strconv.Itoa(id.Peer), strconv.Itoa(id.Q)}
	c := &queueCounters{
		bytes:     m.bytes.WithLabelValues(l...),
		doorbells: m.doorbells.WithLabelValues(l...),
		pollWaits: m.pollWaits.WithLabelValues(l...),
		ringFull:  m.ringFull.WithLabelValues(l...),
		labels:    l,
		m:         m,
	}
	for k := range c.packets {
		c.packets[k] = m.packets.WithLabelValues(append(l[:3:3], ring.Kind(k).String())...)
	}
	return c
}

func (c *queueCounters) fault(kind FaultKind) {
	c.m.faults.WithLabelValues(append(c.labels[:3:3], string(kind))...).Inc()
}
