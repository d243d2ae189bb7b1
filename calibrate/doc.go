// Package calibrate judges a timing model against documented hardware
// measurements by running each one as a real scenario through the whole
// emulator: kernels call the ccoSdma API, packets go into rings, the engine
// executes them under the model, and the scenario reads the emulated clock
// where the benchmark read its clock.
//
// # The documented table and the report
//
// [Documented] is the embedded MI355X table (testdata/mi355x-documented.csv:
// id, scenario, parameters, metric, value, unit, note; [ParseTable] reads
// another in the same form). [Run] measures every row under a model
// ([Measure] one row; median-of-N rows such as postwait.* take several
// seeded runs) and judges it against [Tolerance]; rows that contradict
// another documented row under any physical parameter set are conflicts,
// named with the reason and not counted. A difference row ([IsDifference]:
// metric latency_delta, one measured latency minus another) is judged
// against the larger of its two emulated latencies, not against the
// difference: each term is measured to some relative precision, so that is
// the difference's precision, and a relative error on a difference of
// nearly equal terms magnifies the same absolute miss (wait.vs.quiet.8 is
// −0.24 µs between latencies of about 5 µs). The report prints the
// reference ("+0.2% of 4.9") and names those rows. [Report.WriteText] prints one
// line per row and "max |error| X% over N rows (median Y%)";
// [Report.WriteJSON] the same as JSON. [BandwidthCurve] and [WritePlot]
// draw emulated bandwidth against the bw.* rows (SVG or PNG).
//
// # The fit
//
// The fitted parameters of the model's parameter table ([model.Parameters])
// are found by one least-squares fit: [FitTable] minimises the sum of
// squared relative errors of the counted rows, every candidate judged by
// running the rows' scenarios. A fit weighs a difference row by the
// difference it documents (its residual relative to the documented value,
// or to its larger term when that is 0): the tightest reading of the row,
// which is what lets the fit read visible_us from wait.vs.quiet.8. The search (lsq.go) is Levenberg–Marquardt
// over the parameters' logarithms with a forward-difference Jacobian, a
// small ridge toward the start (model.Prior: round, uninformed values)
// that only decides directions no row sees, and far probes for a
// parameter a regime hides. A parameter that Follows a fitted one
// (model.Parameter.Follows: link_read_gbps, local_packet_us,
// host_packet_us) and is not fitted itself takes its value in every
// candidate, as the preset has it. A parameter that moves no row by
// [MinSensitivity] under ±10% at the fit is not identified by the rows:
// it goes back to its prior and the rest are refitted.
//
// # Sensitivities
//
// [Sensitivities] changes each parameter by ±10% (a count by ±1) and
// reports the counted row it moves most; [Parameters] does this for every
// parameter and, optionally, the fit from the priors, and
// [ParameterReport.WriteText] prints the parameter table "emud calibrate"
// shows (value, unit, fitted or fixed, "±10% moves", the row groups that
// identify it, source; then "fitted
// parameters: N" and the values the fit from the priors found).
//
// # Cross-validation
//
// [CrossValidate] is leave-one-group-out: for each group of rows ([Group],
// the id up to its first dot: bw, issue, signal, postwait, bcast, ...) the
// fitted parameters are refitted from the priors on every other group and
// the group's rows are predicted, each judged as the report judges it (a
// difference row against its larger predicted term, which the line shows).
// A parameter that only the held-out group identifies stays at its prior,
// and [CrossValidation.WriteText] says so;
// it lists the parameters only their own group identifies, then prints
// "cross-validation (identified groups): max |error| X% (median Y%) over N
// rows" over the other groups and the same figure for all rows,
// "cross-validation (all rows): ...", last.
//
// # Measurements a user brings
//
// [ParseMeasurements] reads a measurement CSV (name,src,dst,ops,bytes,
// queues,time_us; the first format ops,bytes,queues,time_us is still
// read; src or dst "host" is host memory, a copy over the GPU's PCIe link
// that the GPU end's loopback queues run: the host path, model.Host) or
// TransferBench's results ([ParseTransferBench]: its text tables or
// OUTPUT_TO_CSV=1; a test of DMA transfers of one shape is one engine-clock
// row, a transfer whose executor is the destination's GPU a pull), [Fit]
// fits named parameters to it, [Residuals] and [Predict] predict rows
// under a model, and
// [WriteResiduals] (a table naming each row's path: local, xgmi, host) and
// [WritePredictions] (CSV) print them: what "emud fit" does. A count parameter (engines_per_link) moves rows in
// steps no gradient follows: after the Levenberg–Marquardt descent the fit
// tries each of its values 1..8 and descends again from a better one.
// A time or fraction that starts at 0 (a copy latency, link sharing) is
// searched as log(v + step), so it can leave 0 and come back.
//
// [Identify] is what "--params all" fits: every parameter probed by ±10%
// and by a step at its scale ([ScaleStep]: 1 µs, 1000 cycles, 0.1), so a
// mechanism the start model has at 0 is found when the rows need it; of
// the parameters some row moves, one whose effect on the rows is a
// combination of others' (Gram–Schmidt over the scale steps' effects,
// most specific first: fewest rows moved, then the larger effect, then
// table order) is held at the start value and named with those it moves
// with (visible_us beside every path's copy latency on kernel-clock rows;
// a path's copy latency beside its gap on engine-clock rows, where the
// closing TIMESTAMP waits for both). [ExplainRows] lists, for each row a
// fit leaves beyond its bound, the parameters that move it and by how
// much, or that none does: a mechanism the model lacks.
//
// # Measuring a device
//
// [MeasureRows] times rows on SDMA queues of any cco.Device a [Backend]
// opens (a fresh simulator and device per run): for each of a row's
// queues a host stream of TIMESTAMP, the queue's COPYs and TIMESTAMP, rung
// once; the engine's clock is the latest closing timestamp minus the
// earliest opening one, and the host's the first doorbell to the last
// drain. The rows come back on [ClockEngine], medians of the repetitions;
// [WriteMeasurements] writes them as format v3 (a clock column) or
// [WriteTransferBench] as TransferBench's results ([TransferBenchSweep]
// is the sweep in TransferBench's shapes, [WriteTransferBenchConfig] its
// TransferBench configuration, docs/transferbench-sweep.cfg), and
// [Predict] times an engine-clock row by running the same stream on the
// emulator ([EmulatorBackend]). [DefaultSweep] is the sweep "emud
// calibrate --measure" runs. On real queues the Backend is hw/rocm over
// KFD; without a GPU, hw/rocm over hw/standin, whose engine follows a
// hidden model, which is how the tests check that a fit recovers it.
package calibrate
