package calibrate

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/emud-dev/emud/model"
)

// Tolerance is the largest relative error a row may have.
const Tolerance = 0.10

// Unspecified sizes: the source gives no payload for these rows.
const (
	// bcastBytes is the payload per destination of the broadcast rows: in
	// the bandwidth regime (8 MiB is where bw.8m reaches the link rate).
	bcastBytes = 8 << 20
	// putPtrBytes is the payload of postwaitputptr.holds, a latency row.
	putPtrBytes = 4 << 10
	// gatherBytes is the payload of gather.local.
	gatherBytes = 64 << 20
	// postWaitRuns is how many seeded runs a median-of-N row takes.
	postWaitRuns = 41
)

// differenceMetric is the metric of a difference row: one latency minus
// another, both measured.
const differenceMetric = "latency_delta"

// IsDifference reports whether row documents the difference of two
// measured latencies (metric latency_delta: wait.vs.quiet.*,
// postwait.gap.16m, postwaitputptr.holds). Such a row is judged against
// the larger of its two terms, not against itself: each term is measured
// to some relative precision, so the difference is known to that
// precision of the terms, and the closer they are the more a relative
// error on the difference alone magnifies the same absolute miss
// (wait.vs.quiet.8 is −0.24 µs between two latencies of about 5 µs: 0.04
// µs is 18% of the difference and 1% of the latencies).
func IsDifference(row Row) bool { return row.Metric == differenceMetric }

// judgedError is row's error as the report and the cross-validation judge
// it: relative to the documented value, or for a difference row (or a
// documented 0) relative to ref, the larger of its emulated terms.
func judgedError(row Row, v, ref float64) float64 {
	if (IsDifference(row) || row.Value == 0) && ref != 0 {
		return (v - row.Value) / ref
	}
	return rowError(row, v, ref)
}

// differenceNote is the line the report and the cross-validation print
// about the difference rows ids.
func differenceNote(ids []string) string {
	return fmt.Sprintf("difference rows (%s: %s) are judged against the larger of their two latencies (the \"of\" figure), the precision a difference of two measured times has", differenceMetric, strings.Join(ids, ", "))
}

// conflicts are documented rows that contradict another documented row
// under the mechanism's physics: no parameter set gives both values (for a
// difference row, judged against its terms, both may still be within
// tolerance; the two documented values still cannot both be right). The
// report shows them with the reason and leaves them out of the fit and the
// pass/fail gate.
var conflicts = map[string]string{
	"single.256k": "bw.256k documents the same operation (one 256 KiB put to one peer, drained) at 36 GB/s = 7.3 µs; " +
		"11 µs is 51% slower than that, so no parameter set meets both within ±10%",
	"wait.vs.quiet.64k": "the signal ATOMIC executes after the COPY and quiet drains past the ATOMIC, so both completions follow the copy " +
		"and its size cancels from their difference; wait.vs.quiet.8 (0.24 µs) and this row (0.62 µs) cannot both be right in an in-order engine " +
		"(judged against their terms both are within ±10%, but a fit would read visible_us from their contradiction)",
}

// Result is one row of the report.
type Result struct {
	ID         string  `json:"id"`
	Metric     string  `json:"metric"`
	Unit       string  `json:"unit"`
	Documented float64 `json:"documented"`
	Emulated   float64 `json:"emulated"`
	// Error is (emulated − documented) / documented, or over Ref for a
	// difference row (IsDifference): the larger of its two emulated
	// terms.
	Error     float64 `json:"error"`
	Ref       float64 `json:"ref,omitempty"`
	Tolerance float64 `json:"tolerance"`
	OK        bool    `json:"ok"`
	Conflict  string  `json:"conflict,omitempty"`
}

// Report is a model judged against a table.
type Report struct {
	Model   string   `json:"model"`
	Rows    []Result `json:"rows"`
	Counted int      `json:"counted"` // rows in the gate (not conflicts)
	Max     float64  `json:"max_abs_error"`
	Median  float64  `json:"median_abs_error"`
	Failed  []string `json:"failed,omitempty"`
}

// OK reports whether every counted row is within its tolerance.
func (r *Report) OK() bool { return len(r.Failed) == 0 }

// Run measures every row on the emulator under m. seed fixes the runs.
func Run(m model.Model, rows []Row, seed uint64) (*Report, error) {
	rep := &Report{Model: m.Name()}
	var errs []float64
	for _, row := range rows {
		v, ref, err := Measure(m, row, seed)
		if err != nil {
			return nil, fmt.Errorf("row %s: %w", row.ID, err)
		}
		res := Result{ID: row.ID, Metric: row.Metric, Unit: row.Unit, Documented: row.Value, Emulated: v, Tolerance: Tolerance}
		if IsDifference(row) || row.Value == 0 {
			res.Ref = ref
		}
		res.Error = judgedError(row, v, ref)
		res.OK = math.Abs(res.Error) <= Tolerance
		if why, ok := conflicts[row.ID]; ok {
			res.Conflict = why
		} else {
			rep.Counted++
			errs = append(errs, math.Abs(res.Error))
			if !res.OK {
				rep.Failed = append(rep.Failed, row.ID)
			}
		}
		rep.Rows = append(rep.Rows, res)
	}
	for _, e := range errs {
		rep.Max = max(rep.Max, e)
	}
	rep.Median = median(errs)
	return rep, nil
}

// Measure runs the scenario of row under m and returns the emulated value
// in the row's unit. ref is the reference a difference row is judged
// against, the larger of its two emulated terms (else 0). The scenario is chosen by the row's family; the
// number comes only from running it.
func Measure(m model.Model, row Row, seed uint64) (v, ref float64, err error) {
	return measure(m, row, seed, postWaitRuns)
}

// measure is Measure with runs seeded runs for a median-of-N row.
func measure(m model.Model, row Row, seed uint64, runs int) (v, ref float64, err error) {
	fam, _, _ := strings.Cut(row.ID, ".")
	bytes := row.param("bytes", 0)
	switch {
	case strings.HasPrefix(row.ID, "issue.samequeue."), strings.HasPrefix(row.ID, "issue.spread8."):
		lanes := int(row.param("lanes", 1))
		v, err = issueCycles(m, seed, lanes, strings.HasPrefix(row.ID, "issue.spread8."))
	case row.ID == "bw.get.8m":
		var tp, tg float64
		if tp, err = putQuiet(m, seed, false, bytes, 1, 1, false); err == nil {
			tg, err = putQuiet(m, seed, true, bytes, 1, 1, false)
			v = tp / tg // bandwidth ratio = inverse time ratio
		}
	case fam == "bw":
		ops, queues := row.param("ops", 1), row.param("queues", 1)
		var t float64
		t, err = putQuiet(m, seed, false, bytes, int(ops), int(queues), false)
		v = gbps(bytes*ops, t)
	case row.ID == "engine.packet.64", row.ID == "engine.issue.64", fam == "scatter":
		var g grouped64
		g, err = runGrouped64(m, seed, int(row.param("packets", 64)), row.param("bytes", 64), false, false)
		switch {
		case row.ID == "engine.packet.64":
			v = g.engine
		case row.ID == "engine.issue.64":
			v = g.issue
		default:
			v = g.quiet
		}
	case fam == "single":
		v, err = putQuiet(m, seed, false, bytes, 1, 1, false)
	case fam == "signal":
		var g grouped64
		g, err = runGrouped64(m, seed, int(row.param("packets", 64)), 64, true, row.ID == "signal.percopy.64")
		v = g.wait
	case fam == "gather":
		v, err = gatherGBps(m, seed, gatherBytes)
	case fam == "wait":
		v, ref, err = waitVsQuiet(m, seed, bytes)
	case fam == "chain":
		var one, many float64
		w := int(row.param("warps", 8))
		if one, err = chainIssue(m, seed, w, true); err == nil {
			many, err = chainIssue(m, seed, w, false)
			v = one / many
		}
	case fam == "ring":
		v, err = ringCapacity(m, seed)
	case row.ID == "postwait.gap.16m":
		var eng, cu float64
		if eng, err = postWaitLatency(m, seed, pwEngine, bytes, runs); err == nil {
			cu, err = postWaitLatency(m, seed, pwCUPoll, bytes, runs)
			v, ref = eng-cu, math.Max(math.Abs(eng), math.Abs(cu))
		}
	case fam == "postwait":
		kind := map[string]postWaitKind{"cupoll": pwCUPoll, "preplaced": pwPreplaced, "engine": pwEngine}
		k, ok := kind[strings.Split(row.ID, ".")[1]]
		if !ok {
			return 0, 0, fmt.Errorf("no scenario for %s", row.ID)
		}
		v, err = postWaitLatency(m, seed, k, bytes, runs)
	case fam == "postwaitputptr":
		var with, without float64
		if with, err = putPtrHolds(m, seed, putPtrBytes, true); err == nil {
			without, err = putPtrHolds(m, seed, putPtrBytes, false)
			v, ref = with-without, math.Max(with, without)
		}
	case fam == "bcast":
		kind := map[string]bcastKind{"bcast.remote2": bcRemote2, "bcast.local_remote": bcLocalRemote, "bcast.local2": bcLocal2,
			"bcast.ref.2puts1q": bcTwoPuts1Q, "bcast.ref.2puts2q": bcTwoPuts2Q}
		k, ok := kind[row.ID]
		if !ok {
			return 0, 0, fmt.Errorf("no scenario for %s", row.ID)
		}
		v, err = bcastGBps(m, seed, k, bcastBytes)
	default:
		return 0, 0, fmt.Errorf("no scenario for row %s (%s)", row.ID, row.Scenario)
	}
	return v, ref, err
}

// gbps is bytes per µs in GB/s (1e9 bytes per second).
func gbps(bytes uint64, us float64) float64 { return float64(bytes) / us / 1e3 }

// WriteText prints one line per row and the summary line.
func (r *Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "id\tdocumented\temulated\tunit\terror\ttolerance\t\t\n")
	for _, x := range r.Rows {
		status := "ok"
		switch {
		case x.Conflict != "":
			status = "conflict (not counted)"
		case !x.OK:
			status = "FAIL"
		}
		errs := fmt.Sprintf("%+.1f%%", 100*x.Error)
		if x.Ref != 0 {
			errs += fmt.Sprintf(" of %.3g", x.Ref)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t±%.0f%%\t%s\t\n", x.ID, num(x.Documented), num(x.Emulated), x.Unit, errs, 100*x.Tolerance, status)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, x := range r.Rows {
		if x.Conflict != "" {
			fmt.Fprintf(w, "conflict %s: %s\n", x.ID, x.Conflict)
		}
	}
	var diff []string
	for _, x := range r.Rows {
		if x.Metric == differenceMetric {
			diff = append(diff, x.ID)
		}
	}
	if len(diff) > 0 {
		fmt.Fprintf(w, "%s\n", differenceNote(diff))
	}
	_, err := fmt.Fprintf(w, "max |error| %.1f%% over %d rows (median %.1f%%)\n", 100*r.Max, r.Counted, 100*r.Median)
	return err
}

// WriteJSON prints the report as JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

func num(v float64) string {
	switch a := math.Abs(v); {
	case a == 0:
		return "0"
	case a >= 1000:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.3g", v)
	}
}
