//go:build !emud_nometrics

package engine

import (
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

// metrics are the node's Prometheus collectors. They live on the node's own
// registry: no global state, so runs side by side never mix their counts.
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

func newMetrics(reg *Registry) (*metrics, error) {
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

// queueCollector exports every queue's counters.
type queueCollector struct{ m *metrics }

func (queueCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descPackets, descBytes, descDoorbells, descPollWaits, descRingFull} {
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
}

func (c *queueCounters) fault(kind FaultKind) {
	l := c.labels()
	c.m.faults.WithLabelValues(append(l[:3:3], string(kind))...).Inc()
}
