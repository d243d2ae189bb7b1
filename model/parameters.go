package model

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"
)

// Parameter is one parameter of [Params]: its model-file name, unit, where
// its value comes from, and whether the calibration fits it. A fixed
// parameter's value is a cited hardware or software fact; a fitted one is
// found by "emud calibrate"'s least-squares fit over every documented row
// it moves (never set to one row's value).
type Parameter struct {
	Name   string
	Unit   string
	Fitted bool
	// Source says what fixes the value, or which documented rows the fit
	// reads it from.
	Source string
	// Int parameters are counts: Set rounds.
	Int   bool
	field int // index in Params
}

var paramMeta = []struct {
	name, unit string
	fitted     bool
	source     string
	prior      float64 // a fitted parameter's start: a round, uninformed magnitude
}{
	{"cu_clock_ghz", "GHz", false, "AMD MI355X specification: 2.4 GHz peak engine clock (it also turns the seed's 64-packet issue, 3220 cycles, into its 1.3 µs)", 0},
	{"issue_base_cycles", "cycles", true, "issue.* trigger-cycle rows (one lane, one queue) with the bw.* intercepts", 1000},
	{"issue_scan_cycles", "cycles", true, "issue.samequeue.* (lanes sharing one queue) and engine.issue.64", 100},
	{"issue_queue_cycles", "cycles", true, "issue.spread8.* (lanes spread over distinct queues)", 1000},
	{"submit_cycles", "cycles", true, "chain.8warps (the commit chain serialises Submit) with issue.*", 500},
	{"uncached_read_cycles", "cycles", false, "MORI include/mori/cco/cco.hpp: about 2600 GPU cycles per uncached rptr read (docs/sdma-hardware.md §8); also each read of a CU's flag poll, the acquire after it, and a system-scope release", 0},
	{"host_store_us", "µs", true, "postwait.* (flag set by the host to copy complete)", 1},
	{"hbm_gbps", "GB/s", false, "AMD MI355X specification: 8 TB/s HBM3E peak bandwidth (a CU pack kernel streams at it)", 0},
	{"visible_us", "µs", true, "bw.* intercepts, postwait.*, postwaitputptr.holds and wait.vs.quiet.8 (doorbell to fetch, ATOMIC to a spinning CU; a POLL that holds costs the engine two such round trips)", 1},
	{"packet_us", "µs", true, "engine.packet.64, scatter.64x4k, signal.* (about 2 µs per packet, COPY and ATOMIC alike)", 1},
	{"link_gbps", "GB/s", true, "bw.* slopes, bw.split.2x4m, bcast.ref.*", 50},
	{"local_gbps", "GB/s", true, "bcast.local2, bcast.local_remote (an engine writing its own GPU's memory)", 100},
	{"bcast_link_gbps", "GB/s", true, "bcast.remote2, bcast.local_remote", 50},
	{"jitter", "", false, "a run setting (relative spread of engine gaps), 0 in every calibration; timing perturbation is sim.Perturber's", 0},
	{"sdma_engines", "engines", false, "KFD topology NumSdmaEngines on MI300X/MI355X: 2 (MORI anvil.cpp: gfx950 engines 0-1 general)", 0},
	{"sdma_xgmi_engines", "engines", false, "KFD topology NumSdmaXgmiEngines on MI300X/MI355X: 14", 0},
	{"engines_per_link", "engines", false, "KFD recommended_sdma_engine_id_mask as MORI anvil.cpp reads it: 2 engines per peer link on MI350 (docs/sdma-hardware.md §4.4)", 0},
	{"queues_per_engine", "queues", false, "KFD NumSdmaQueuesPerEngine: 8 on gfx950 (MORI anvil.cpp)", 0},
	{"engine_quantum_kcycles", "kcycles", false, "amdgpu_sdma_phase_quantum default 32 (×1K cycles), which KFD programs as every SDMA user queue's CONTEXT_QUANTUM (kfd_mqd_manager_v9.c)", 0},
}

var parameters = func() []Parameter {
	t := reflect.TypeOf(Params{})
	byName := map[string]int{} // engine_links, a layout, is not a parameter
	for i := 0; i < t.NumField(); i++ {
		byName[jsonName(t.Field(i))] = i
	}
	var ps []Parameter
	for _, m := range paramMeta {
		i, ok := byName[m.name]
		if !ok {
			panic("model: parameter table names no field " + m.name) // a build-time table: tested
		}
		ps = append(ps, Parameter{Name: m.name, Unit: m.unit, Fitted: m.fitted, Source: m.source,
			Int: t.Field(i).Type.Kind() == reflect.Int, field: i})
	}
	return ps
}()

// Prior returns the MI355X preset with every fitted parameter at its
// prior: a round, uninformed magnitude (1000 cycles, 1 µs, 50 GB/s, ...)
// that knows nothing of the documented table. The calibration's fit and
// each cross-validation refit start here, so a parameter the rows they
// see do not identify stays at a value no documented row chose.
func Prior() *Params {
	p := MI355X()
	p.Label = "mi355x-prior"
	for i, m := range paramMeta {
		if m.fitted {
			parameters[i].Set(p, m.prior)
		}
	}
	return p
}

// Parameters lists every parameter of Params, in model-file order.
func Parameters() []Parameter { return parameters }

// FittedParameters lists the names of the parameters the calibration fits.
func FittedParameters() []string {
	var n []string
	for _, p := range parameters {
		if p.Fitted {
			n = append(n, p.Name)
		}
	}
	return n
}

// LookupParameter returns the parameter with model-file name name. The
// error lists the names there are.
func LookupParameter(name string) (Parameter, error) {
	for _, p := range parameters {
		if p.Name == name {
			return p, nil
		}
	}
	names := make([]string, len(parameters))
	for i, p := range parameters {
		names[i] = p.Name
	}
	sort.Strings(names)
	return Parameter{}, fmt.Errorf("unknown parameter %q; parameters: %s", name, strings.Join(names, ", "))
}

// Get returns the parameter's value in p.
func (x Parameter) Get(p *Params) float64 {
	f := reflect.ValueOf(p).Elem().Field(x.field)
	if x.Int {
		return float64(f.Int())
	}
	return f.Float()
}

// Set sets the parameter's value in p; a count is rounded to the nearest
// integer.
func (x Parameter) Set(p *Params, v float64) {
	f := reflect.ValueOf(p).Elem().Field(x.field)
	if x.Int {
		f.SetInt(int64(math.Round(math.Max(-1<<31, math.Min(v, 1<<31))))) // NaN stays NaN → 0 after the bounds; Validate refuses what is out of range
		return
	}
	f.SetFloat(v)
}
