package daemon

import (
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// engineTotals sums the engine counters of every run the daemon made. Each
// run's node has its own registry (engine.Config.Registry), since two nodes
// cannot register the same collectors in one; after the run, add folds that
// registry's counters in, summed over the labels that name a run's own
// queues (perRunLabels), so the set of series stays bounded by the
// counters' kinds (opcodes, fault kinds) however many runs of however many
// ranks come: kept per gpu, peer and queue, 64-rank runs made the scrape
// 5 MB and 72k lines. It is an unchecked collector: the families appear as
// runs bring them.
type engineTotals struct {
	mu   sync.Mutex
	fams map[string]*counterFamily
}

type counterFamily struct {
	desc    *prometheus.Desc
	labels  []string
	samples map[string]*counterSample // by joined label values
}

type counterSample struct {
	values []string
	v      float64
}

// perRunLabels name a run's GPUs and queues: their values range over the
// run's shape, which requests choose.
var perRunLabels = map[string]bool{"gpu": true, "peer": true, "queue": true}

func newEngineTotals() *engineTotals { return &engineTotals{fams: map[string]*counterFamily{}} }

// add folds reg's counters into the totals.
func (e *engineTotals) add(reg *prometheus.Registry) error {
	mfs, err := reg.Gather()
	if err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, mf := range mfs {
		if mf.GetType() != dto.MetricType_COUNTER {
			continue
		}
		for _, m := range mf.GetMetric() {
			names, values := make([]string, 0, len(m.GetLabel())), make([]string, 0, len(m.GetLabel()))
			for _, lp := range m.GetLabel() {
				if perRunLabels[lp.GetName()] {
					continue
				}
				names, values = append(names, lp.GetName()), append(values, lp.GetValue())
			}
			fam := e.fams[mf.GetName()]
			if fam == nil {
				fam = &counterFamily{desc: prometheus.NewDesc(mf.GetName(), mf.GetHelp()+" Summed over all runs and their GPUs and queues.", names, nil),
					labels: names, samples: map[string]*counterSample{}}
				e.fams[mf.GetName()] = fam
			}
			if strings.Join(names, "\x00") != strings.Join(fam.labels, "\x00") {
				continue // another label set under the same name: not an engine counter we know
			}
			key := strings.Join(values, "\x00")
			s := fam.samples[key]
			if s == nil {
				s = &counterSample{values: values}
				fam.samples[key] = s
			}
			s.v += m.GetCounter().GetValue()
		}
	}
	return nil
}

// Describe sends nothing: an unchecked collector.
func (e *engineTotals) Describe(chan<- *prometheus.Desc) {}

func (e *engineTotals) Collect(ch chan<- prometheus.Metric) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, fam := range e.fams {
		for _, s := range fam.samples {
			if m, err := prometheus.NewConstMetric(fam.desc, prometheus.CounterValue, s.v, s.values...); err == nil {
				ch <- m
			}
		}
	}
}
