package calibrate

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/emud-dev/emud/model"
)

// TransferBench's results (ROCm/TransferBench, the client's PrintResults;
// read for its format only). Each test prints one table, as box-drawn text
// or, with OUTPUT_TO_CSV=1, with every cell followed by a comma:
//
//	Test 3:                                   (text only)
//	 Executor: DMA 00 | 48.123 GB/s | 0.087 ms | 4194304 bytes | 48.123 GB/s (sum)
//	Transfer 0        | 48.123 GB/s | 0.087 ms | 4194304 bytes | G0 -> D0:1 -> G1
//	 Aggregate (CPU)  | ...         | ...      | ...           | Overhead 0.012 ms
//
// A transfer's cell names its source memory, executor and destination
// memory: G (GPU), F (fine-grained GPU) or M (managed) for a GPU's memory,
// C, B (fine-grained), U (unpinned) or P (closest) for host memory; D<n>
// (or D<n>.<engine>) for GPU n's DMA (copy-engine) executor, and after
// the colon the SubExecutors, which for DMA are streams. The times are each
// transfer's and each executor's average over the timed iterations.
//
// emud reads a test of DMA transfers that all copy one shape (same source,
// executor, destination and size) as one engine-clock row: k transfers of
// s streams each are k·s copies of bytes/s on k·s queues, timed by the
// executor's average; TransferBench times a DMA transfer with HIP events
// around its copy on the stream, which emud takes as its engine clock
// (TIMESTAMPs around the queue's copies). A copy whose executor is the
// destination's GPU, reading a peer, is a pull (Measurement.Pull).

// tbExe is TransferBench's letter for a DMA executor.
const tbExe = 'D'

// IsTransferBench reports whether b looks like TransferBench output: a
// line that starts (after blanks) with "Executor:".
func IsTransferBench(b []byte) bool {
	for _, l := range bytes.Split(b, []byte("\n")) {
		if bytes.HasPrefix(bytes.TrimLeft(l, " \t│|"), []byte("Executor:")) {
			return true
		}
	}
	return false
}

// tbTransfer is one "Transfer" line.
type tbTransfer struct {
	src, exe, dst int // GPUs or model.Host; exe a GPU
	streams       int
	bytes         uint64
	ms, gbps      float64
	msP, gbpsP    float64 // their relative precisions (tbPrec)
	spec          string
}

// tbTest is one test's table.
type tbTest struct {
	num       int
	line      int
	exeCount  int
	exeMs     float64
	exeGBps   float64
	exeMsP    float64
	exeGBpsP  float64
	exeBytes  uint64
	transfers []tbTransfer
}

// ParseTransferBench reads TransferBench's results (its text tables or
// OUTPUT_TO_CSV=1) into engine-clock rows, one per test: what "emud fit"
// does with such a file. Lines that are not part of a result table (the
// banner, the environment listing) are skipped. A test with a non-DMA
// executor, several executors, transfers of different shapes, a reduction
// (several sources) or a broadcast (several destinations), a copy between
// two host memories, or a DMA executor that is neither end's GPU, is an
// error naming the test and line: emud would otherwise fit a row it cannot
// time as measured.
func ParseTransferBench(r io.Reader) ([]Measurement, error) {
	lr := &boundedReader{r: r, line: 1}
	ms, err := parseTransferBench(lr)
	if lr.err != nil {
		return nil, lr.err
	}
	return ms, err
}

func parseTransferBench(r io.Reader) ([]Measurement, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLineBytes+1)
	var tests []*tbTest
	var cur *tbTest
	num, line := 0, 0
	next := 1
	for sc.Scan() {
		line++
		text := strings.TrimSpace(strings.Trim(sc.Text(), "│| \t"))
		switch {
		case strings.HasPrefix(text, "Test ") && strings.HasSuffix(text, ":"):
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(text, "Test "), ":"))
			if err != nil || n < 0 {
				return nil, fmt.Errorf("transferbench line %d: %q is not a test header (Test N:)", line, text)
			}
			num = n
			continue
		case strings.HasPrefix(text, "Executor:"):
			if cur == nil {
				if num == 0 {
					num = next // CSV output numbers no tests: count them
				}
				cur = &tbTest{num: num, line: line}
				next = num + 1
				num = 0
			}
			cells := tbCells(text)
			if len(cells) < 4 {
				return nil, fmt.Errorf("transferbench line %d: executor line has %d cells, want 5", line, len(cells))
			}
			name := strings.Fields(strings.TrimPrefix(cells[0], "Executor:"))
			if len(name) != 2 || name[0] != "DMA" {
				return nil, fmt.Errorf("transferbench line %d (test %d): executor %q is not a single-node DMA (copy-engine) executor: emud fits copy-engine transfers only", line, cur.num, strings.Join(name, " "))
			}
			var err error
			if cur.exeGBps, cur.exeMs, cur.exeBytes, err = tbNumbers(cells[1:4]); err != nil {
				return nil, fmt.Errorf("transferbench line %d (test %d): %w", line, cur.num, err)
			}
			cur.exeGBpsP, cur.exeMsP = tbPrec(cells[1], cur.exeGBps), tbPrec(cells[2], cur.exeMs)
			cur.exeCount++
		case strings.HasPrefix(text, "Transfer "):
			if cur == nil {
				return nil, fmt.Errorf("transferbench line %d: a transfer before any executor line", line)
			}
			cells := tbCells(text)
			if len(cells) < 5 {
				return nil, fmt.Errorf("transferbench line %d (test %d): transfer line has %d cells, want 5", line, cur.num, len(cells))
			}
			t, err := tbParseTransfer(cells)
			if err != nil {
				return nil, fmt.Errorf("transferbench line %d (test %d): %w", line, cur.num, err)
			}
			cur.transfers = append(cur.transfers, t)
		case strings.HasPrefix(text, "Aggregate"):
			if cur == nil {
				return nil, fmt.Errorf("transferbench line %d: an aggregate line before any executor line", line)
			}
			if len(tests) == MaxFitRows {
				return nil, fmt.Errorf("transferbench line %d: more than %d tests: a fit runs every row for each of its candidates; fit a representative subset", line, MaxFitRows)
			}
			tests = append(tests, cur)
			cur = nil
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("transferbench line %d: longer than %d bytes, the most one line may have", line+1, MaxLineBytes)
		}
		return nil, fmt.Errorf("transferbench: %w", err)
	}
	if cur != nil {
		return nil, fmt.Errorf("transferbench line %d (test %d): the test's table has no Aggregate line: a cut-off file?", cur.line, cur.num)
	}
	if len(tests) == 0 {
		return nil, errors.New("transferbench: no test tables (Executor:/Transfer/Aggregate lines)")
	}
	var out []Measurement
	for _, t := range tests {
		m, err := t.row()
		if err != nil {
			return nil, fmt.Errorf("transferbench line %d (test %d): %w", t.line, t.num, err)
		}
		out = append(out, m)
	}
	return out, nil
}

// tbCells splits a table line into its cells (box-drawn or CSV).
func tbCells(text string) []string {
	text = strings.ReplaceAll(text, "│", ",")
	text = strings.ReplaceAll(text, "|", ",")
	var out []string
	for _, c := range strings.Split(text, ",") {
		if c = strings.TrimSpace(c); c != "" {
			out = append(out, c)
		}
	}
	return out
}

// tbPrec is the relative precision of a printed number: half a unit of
// its last digit over its value (0 when the value is 0: no precision).
func tbPrec(cell string, v float64) float64 {
	s := strings.Fields(cell)[0]
	d := 0
	if _, frac, ok := strings.Cut(s, "."); ok {
		d = len(frac)
	}
	if v <= 0 {
		return math.Inf(1)
	}
	return 0.5 * math.Pow(10, -float64(d)) / v
}

// tbNumbers reads the "X GB/s", "Y ms" and "N bytes" cells.
func tbNumbers(cells []string) (gbps, ms float64, n uint64, err error) {
	num := func(c, unit string) (string, error) {
		v, ok := strings.CutSuffix(c, " "+unit)
		if !ok {
			return "", fmt.Errorf("cell %q: want a number in %s", c, unit)
		}
		return strings.TrimSpace(v), nil
	}
	var s [3]string
	for i, u := range []string{"GB/s", "ms", "bytes"} {
		if s[i], err = num(cells[i], u); err != nil {
			return
		}
	}
	gbps, err1 := strconv.ParseFloat(s[0], 64)
	ms, err2 := strconv.ParseFloat(s[1], 64)
	n, err3 := strconv.ParseUint(s[2], 10, 64)
	switch {
	case err1 != nil || !(gbps >= 0) || math.IsInf(gbps, 0):
		err = fmt.Errorf("bandwidth %q: want a number of GB/s", s[0])
	case err2 != nil || !(ms >= 0) || math.IsInf(ms, 0):
		err = fmt.Errorf("time %q: want a number of ms", s[1])
	case err3 != nil || n == 0:
		err = fmt.Errorf("bytes %q: want a positive integer", s[2])
	}
	return
}

// tbParseTransfer reads a transfer line's cells.
func tbParseTransfer(cells []string) (tbTransfer, error) {
	var t tbTransfer
	var err error
	if t.gbps, t.ms, t.bytes, err = tbNumbers(cells[1:4]); err != nil {
		return t, err
	}
	t.gbpsP, t.msP = tbPrec(cells[1], t.gbps), tbPrec(cells[2], t.ms)
	t.spec = cells[4]
	parts := strings.Split(t.spec, "->")
	if len(parts) != 3 {
		return t, fmt.Errorf("transfer %q: want SRC -> EXE:STREAMS -> DST", t.spec)
	}
	if t.src, err = tbMem(strings.TrimSpace(parts[0])); err != nil {
		return t, fmt.Errorf("transfer %q: source: %w", t.spec, err)
	}
	if t.dst, err = tbMem(strings.TrimSpace(parts[2])); err != nil {
		return t, fmt.Errorf("transfer %q: destination: %w", t.spec, err)
	}
	exe, se, ok := strings.Cut(strings.TrimSpace(parts[1]), ":")
	if !ok || exe == "" {
		return t, fmt.Errorf("transfer %q: executor %q: want D<gpu>:<streams>", t.spec, parts[1])
	}
	if exe[0] != tbExe {
		return t, fmt.Errorf("transfer %q: executor %s is not a DMA (copy-engine) executor", t.spec, exe)
	}
	g, _, _ := strings.Cut(exe[1:], ".") // D0.1: a chosen engine; emud places queues as MORI does
	if t.exe, err = strconv.Atoi(g); err != nil || t.exe < 0 || t.exe >= maxFitGPUs {
		return t, fmt.Errorf("transfer %q: executor %s: want D0..D%d", t.spec, exe, maxFitGPUs-1)
	}
	if t.streams, err = strconv.Atoi(se); err != nil || t.streams < 1 || t.streams > benchQueues {
		return t, fmt.Errorf("transfer %q: %q streams: want 1..%d", t.spec, se, benchQueues)
	}
	return t, nil
}

// tbMem reads one memory device: a GPU's (G, F, M) or host memory (C, B,
// U, P), with its index.
func tbMem(s string) (int, error) {
	if len(s) < 2 {
		return 0, fmt.Errorf("%q: want a memory type and index (G0, C0)", s)
	}
	n, err := strconv.Atoi(s[1:])
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q: want one memory (several make a reduction or broadcast, which emud does not fit)", s)
	}
	switch s[0] {
	case 'G', 'F', 'M':
		if n >= maxFitGPUs {
			return 0, fmt.Errorf("%q: GPUs 0..%d", s, maxFitGPUs-1)
		}
		return n, nil
	case 'C', 'B', 'U', 'P':
		return model.Host, nil
	}
	return 0, fmt.Errorf("%q: memory type %c is not a GPU's (G, F, M) or host memory (C, B, U, P)", s, s[0])
}

// row turns a test into one engine-clock row.
func (t *tbTest) row() (Measurement, error) {
	switch {
	case t.exeCount != 1:
		return Measurement{}, fmt.Errorf("%d executors: emud fits a test of one DMA executor's transfers", t.exeCount)
	case len(t.transfers) == 0:
		return Measurement{}, errors.New("no transfers")
	}
	a := t.transfers[0]
	streams := 0
	for _, x := range t.transfers {
		if x.src != a.src || x.dst != a.dst || x.exe != a.exe || x.bytes != a.bytes || x.streams != a.streams {
			return Measurement{}, fmt.Errorf("transfers %q and %q differ: emud fits a test whose transfers copy one shape", a.spec, x.spec)
		}
		streams += x.streams
	}
	m := Measurement{Src: a.src, Dst: a.dst, Ops: streams, Queues: streams, Clock: ClockEngine,
		Name: fmt.Sprintf("tb%d.%s", t.num, strings.ReplaceAll(strings.ReplaceAll(a.spec, " ", ""), "->", "-"))}
	if len(m.Name) > maxNameBytes {
		m.Name = m.Name[:maxNameBytes]
	}
	switch {
	case a.src == model.Host && a.dst == model.Host:
		return m, fmt.Errorf("transfer %q copies host memory to host memory: a row needs a GPU whose engine copies", a.spec)
	case a.exe != m.GPU() && !(a.src != model.Host && a.dst != model.Host && a.exe == a.dst):
		return m, fmt.Errorf("transfer %q: the executor D%d is neither end's GPU", a.spec, a.exe)
	case streams > benchQueues:
		return m, fmt.Errorf("%d streams in all: at most %d", streams, benchQueues)
	case a.bytes%uint64(a.streams) != 0:
		return m, fmt.Errorf("transfer %q: %d bytes do not split evenly over %d streams", a.spec, a.bytes, a.streams)
	}
	m.Pull = a.src != a.dst && a.src != model.Host && a.dst != model.Host && a.exe == a.dst
	m.Bytes = a.bytes / uint64(a.streams)
	switch {
	case m.Bytes > maxFitBytes:
		return m, fmt.Errorf("transfer %q: %d bytes a stream: at most %d (16 GiB)", a.spec, m.Bytes, uint64(maxFitBytes))
	case m.Bytes*uint64(m.Ops) > maxFitTotal:
		return m, fmt.Errorf("%d streams of %d bytes exceed the %d (1 TiB) one row may move", m.Ops, m.Bytes, uint64(maxFitTotal))
	}
	// The executor's time covers all its transfers; of its two printed
	// numbers (ms and GB/s, three decimals each in TransferBench's output)
	// the one with more significant digits gives the time.
	ms, gbps, total, msP, gbpsP := t.exeMs, t.exeGBps, t.exeBytes, t.exeMsP, t.exeGBpsP
	if len(t.transfers) == 1 {
		ms, gbps, total, msP, gbpsP = a.ms, a.gbps, a.bytes, a.msP, a.gbpsP
	}
	m.TimeUs = ms * 1e3
	if gbpsP < msP {
		m.TimeUs = float64(total) / gbps / 1e3
	}
	if !(m.TimeUs >= minFitTimeUs) || m.TimeUs > model.MaxStepUs {
		return m, fmt.Errorf("time %g µs (%g ms, %g GB/s): need %g to %g µs", m.TimeUs, ms, gbps, minFitTimeUs, float64(model.MaxStepUs))
	}
	return m, nil
}

// tbMemName is how TransferBench names an end: G<n>, or C0 for host memory
// (emud's host rows are one host memory).
func tbMemName(g int) string {
	if g == model.Host {
		return "C0"
	}
	return fmt.Sprintf("G%d", g)
}

// TransferBenchRow reports whether TransferBench can state x: one copy,
// or one copy per queue (parallel transfers on streams of their own); a
// burst of copies on one queue is not a TransferBench transfer.
func TransferBenchRow(x Measurement) error {
	if x.Ops != 1 && x.Ops != x.Queues {
		return fmt.Errorf("row %s: %d copies on %d queues is not a TransferBench test (its transfers each run on streams of their own): time it in emud's format", PrintName(x.Name), x.Ops, x.Queues)
	}
	return nil
}

// WriteTransferBench writes rows as TransferBench's OUTPUT_TO_CSV=1
// results, one test per row (k copies on k queues: k transfers of one
// stream each, run together), every transfer and the executor timed by
// the row's time; ParseTransferBench reads it back. The times are written
// to the nanosecond (TransferBench prints three decimals of ms).
func WriteTransferBench(w io.Writer, rows []Measurement) error {
	for _, x := range rows {
		if err := TransferBenchRow(x); err != nil {
			return err
		}
	}
	bw := bufio.NewWriter(w)
	for _, x := range rows {
		ms := x.TimeUs / 1e3
		gbps := float64(x.Bytes) / (x.TimeUs * 1e3)
		total := x.Bytes * uint64(x.Ops)
		sum := gbps * float64(x.Ops)
		exe := x.GPU()
		fmt.Fprintf(bw, " Executor: DMA %02d ,%9.3f GB/s ,%12.6f ms ,%12d bytes , %.3f GB/s (sum),\n", exe, float64(total)/(x.TimeUs*1e3), ms, total, sum)
		for k := 0; k < x.Ops; k++ {
			fmt.Fprintf(bw, "Transfer %-4d ,%9.3f GB/s ,%12.6f ms ,%12d bytes , %s -> %c%d:1 -> %s,\n", k, gbps, ms, x.Bytes, tbMemName(x.Src), tbExe, exe, tbMemName(x.Dst))
		}
		fmt.Fprintf(bw, " Aggregate (CPU) ,%9.3f GB/s ,%12.6f ms ,%12d bytes , Overhead 0.000 ms,\n", float64(total)/(x.TimeUs*1e3), ms, total)
	}
	return bw.Flush()
}

// TransferBenchSweep is the rows "emud calibrate --measure --format
// transferbench" times by default, each a TransferBench test: single
// copies local (G0 -> D0 -> G0), pushed to a peer (G0 -> D0 -> G1) and
// pulled from one (G1 -> D0 -> G0), 64 B to 16 MiB in steps of 16×; 2, 4
// and 8 parallel 4 MiB pushes to one peer (streams sharing the link); and
// host copies each way (G0 -> D0 -> C0, C0 -> D0 -> G0). They identify
// each path's fixed cost and rate, the pull rate and link sharing.
func TransferBenchSweep() []Measurement {
	var rows []Measurement
	row := func(name string, src, dst, k int, b uint64, pull bool) {
		rows = append(rows, Measurement{Name: name, Src: src, Dst: dst, Ops: k, Queues: k, Bytes: b, Pull: pull, Clock: ClockEngine})
	}
	for b := uint64(64); b <= 16<<20; b *= 16 {
		row("local."+sizeName(b), 0, 0, 1, b, false)
		row("push."+sizeName(b), 0, 1, 1, b, false)
		row("pull."+sizeName(b), 1, 0, 1, b, true)
	}
	for _, k := range []int{2, 4, 8} {
		row(fmt.Sprintf("push%dx.4M", k), 0, 1, k, 4<<20, false)
	}
	for _, b := range []uint64{64, 64 << 10, 16 << 20} {
		row("d2h."+sizeName(b), 0, model.Host, 1, b, false)
	}
	for _, b := range []uint64{64, 16 << 20} {
		row("h2d."+sizeName(b), model.Host, 0, 1, b, false)
	}
	return rows
}

// WriteTransferBenchConfig writes rows as a TransferBench configuration
// file in its advanced form, one test per line: "-N (SRC->EXE->DST
// STREAMS BYTES) ..." with N transfers of one stream each. Run with
// OUTPUT_TO_CSV=1, TransferBench prints results ParseTransferBench reads.
func WriteTransferBenchConfig(w io.Writer, rows []Measurement) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "# emud's TransferBench sweep: one test per line (advanced form: -transfers, then")
	fmt.Fprintln(bw, "# (src->executor->dst subexecutors bytes) for each). Run on the GPU under test with")
	fmt.Fprintln(bw, "#   OUTPUT_TO_CSV=1 NUM_ITERATIONS=100 ./TransferBench transferbench-sweep.cfg > rows.csv")
	fmt.Fprintln(bw, "# and fit with: emud fit rows.csv --params all")
	for _, x := range rows {
		if err := TransferBenchRow(x); err != nil {
			return err
		}
		fmt.Fprintf(bw, "# %s\n-%d", x.Name, x.Ops)
		for k := 0; k < x.Ops; k++ {
			fmt.Fprintf(bw, " (%s->%c%d->%s 1 %d)", tbMemName(x.Src), tbExe, x.GPU(), tbMemName(x.Dst), x.Bytes)
		}
		fmt.Fprintln(bw)
	}
	return bw.Flush()
}
