//go:build emud_nometrics

package engine

// Registry stands in for prometheus.Registry in a build with the
// emud_nometrics tag (package capi's C ABI, which serves no metrics): the
// queues still count (counters.go), but nothing exports the counts, and
// Prometheus is not linked (metrics.go says why).
type Registry struct{}

func newRegistry() *Registry { return &Registry{} }

// metrics are the node's queue counters, exported by nothing here.
type metrics struct {
	queues []*queueCounters
}

func (*metrics) register(*Registry) error { return nil }

// fault is counted only where the metrics are exported.
func (c *queueCounters) fault(FaultKind) {}
