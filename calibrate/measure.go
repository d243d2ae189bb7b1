package calibrate

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/model"
	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
)

// Clock says which clock a measurement row's time was read on, and so
// which span of the row it is.
type Clock uint8

const (
	// ClockKernel is the kernel's clock: from the issuing lane's first put
	// to the return of its last quietQueue (what a benchmark kernel reading
	// wall_clock64 measures). The default, and the only clock of rows
	// written before format v3.
	ClockKernel Clock = iota
	// ClockEngine is the engine's clock: from a TIMESTAMP packet executed
	// before the row's first COPY to the latest of the TIMESTAMPs after each
	// queue's last COPY (the global timestamp counter, 100 MHz). It is what
	// MeasureRows reads on real queues, where a kernel's issue costs are not
	// observable from the host.
	ClockEngine
)

// String is the clock's name in a measurement file.
func (c Clock) String() string {
	if c == ClockEngine {
		return "engine"
	}
	return "kernel"
}

// parseClock reads a clock column.
func parseClock(s string) (Clock, bool) {
	switch s {
	case "kernel":
		return ClockKernel, true
	case "engine":
		return ClockEngine, true
	}
	return 0, false
}

// A Backend opens the device one measurement run uses, on a fresh
// simulator, and returns a function that releases it. MeasureRows opens one
// per run, so no queue, ring position or allocation carries over from one
// run to the next. EmulatorBackend is the emulator under a model;
// cmd/emud builds the ROCm backend (hw/rocm over KFD, or over the timing
// stand-in hw/standin) the same way.
type Backend func(s *sim.Sim) (dev cco.Device, release func() error, err error)

// EmulatorBackend is an emulated MI355X node (8 GPUs) under m.
func EmulatorBackend(m model.Model) Backend {
	return func(s *sim.Sim) (cco.Device, func() error, error) {
		cfg := cco.MI355X(engine.DefaultGPUs)
		cfg.Model = m
		// A small ring: each run makes its queues afresh, and a stream
		// longer than half of it is rung in halves before the engine can
		// drain either (postStream), so the engine never idles on it and
		// the times are those of any larger ring.
		cfg.Ring.Size = measureRing
		n, err := engine.NewNode(s, cfg)
		if err != nil {
			return nil, nil, err
		}
		return cco.Emulated(n), func() error { return nil }, nil
	}
}

// Timed is one measurement run's two clocks.
type Timed struct {
	EngineUs float64 // TIMESTAMP span (ClockEngine)
	HostUs   float64 // from the first doorbell to the last queue seen drained, on the simulator's clock
}

// timestampHz is the global timestamp counter's rate on gfx9 (the
// emulator's engine.DefaultTimestampHz; ROCr's
// hsa_system_info HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY on MI300/MI355X).
const timestampHz = engine.DefaultTimestampHz

// measureRing is the emulator's ring size for measurement streams.
const measureRing = 16 << 10

// measureUnit is the ring bytes one packet of a measurement stream takes:
// TIMESTAMP (12 B) and COPY_LINEAR (28 B) each fit one 32 B unit.
const measureUnit = ring.Unit

// MeasureOnce runs row x once on a device from b: for each of the row's
// min(ops, queues) queues from x.Src toward x.Dst, a host stream writes a
// TIMESTAMP, the queue's share of the ops (op i on queue i mod queues, each
// split into COPYs of at most ring.MaxCopyBytes), and a TIMESTAMP, rings
// once, and waits for the queue to drain. The engine time is the latest
// closing TIMESTAMP minus the earliest opening one.
//
// Buffers are phantom where the device has phantom memory (the emulator:
// timing only, any size) and real otherwise; every op reuses the same
// source and destination range, which times the same.
func MeasureOnce(b Backend, x Measurement, seed uint64) (Timed, error) {
	if err := checkMeasureRow(x); err != nil {
		return Timed{}, err
	}
	s := sim.New(sim.Config{Seed: seed})
	dev, release, err := b(s)
	if err != nil {
		return Timed{}, fmt.Errorf("measure %s: %w", PrintName(x.Name), err)
	}
	t, err := measureOn(s, dev, x)
	if rerr := release(); err == nil && rerr != nil {
		err = rerr
	}
	if err != nil {
		return Timed{}, fmt.Errorf("measure %s: %w", PrintName(x.Name), err)
	}
	return t, nil
}

func checkMeasureRow(x Measurement) error {
	switch {
	case x.Ops < 1 || x.Ops > maxFitOps:
		return fmt.Errorf("measure %s: ops %d: need 1..%d", PrintName(x.Name), x.Ops, maxFitOps)
	case x.Queues < 1 || x.Queues > benchQueues:
		return fmt.Errorf("measure %s: queues %d: need 1..%d", PrintName(x.Name), x.Queues, benchQueues)
	case x.Bytes < 1 || x.Bytes > maxFitBytes:
		return fmt.Errorf("measure %s: bytes %d: need 1..%d", PrintName(x.Name), x.Bytes, uint64(maxFitBytes))
	case !validEnd(x.Src) || !validEnd(x.Dst) || x.Src == model.Host && x.Dst == model.Host:
		return fmt.Errorf("measure %s: src %s → dst %s: need GPUs 0..%d, or host at one end", PrintName(x.Name), EndName(x.Src), EndName(x.Dst), maxFitGPUs-1)
	case x.Pull && x.Path() != "xgmi":
		return fmt.Errorf("measure %s: a pull (the destination's engine reading) needs two GPUs, got src %s → dst %s", PrintName(x.Name), EndName(x.Src), EndName(x.Dst))
	}
	return nil
}

// allocData allocates a data buffer: phantom where the device can, real
// where it cannot (hardware backs every allocation).
func allocData(mem cco.Memory, gpu int, size uint64, name string) (uint64, error) {
	if a, err := mem.AllocPhantom(gpu, size, name); err == nil {
		return a, nil
	}
	return mem.Alloc(gpu, size, name)
}

// validEnd is a GPU a row may name, or the host.
func validEnd(g int) bool { return g == model.Host || g >= 0 && g < maxFitGPUs }

func measureOn(s *sim.Sim, dev cco.Device, x Measurement) (Timed, error) {
	if g := dev.GPUs(); x.Src >= g || x.Dst >= g {
		return Timed{}, fmt.Errorf("src %s → dst %s: the device has %d GPUs", EndName(x.Src), EndName(x.Dst), g)
	}
	// The row's GPU runs the copies, on its queues toward Dst, or on its
	// loopback queues for a host copy (the general engines, which serve
	// the GPU's link to the host).
	gpu, peer := x.GPU(), x.Dst
	switch {
	case x.Path() == "host":
		peer = gpu
	case x.Pull:
		peer = x.Src // the destination's queue toward the peer it reads
	}
	mem := dev.Memory()
	src, err := allocData(mem, x.Src, x.Bytes, "measure source")
	if err != nil {
		return Timed{}, err
	}
	dst, err := allocData(mem, x.Dst, x.Bytes, "measure destination")
	if err != nil {
		return Timed{}, err
	}
	nq := min(x.Ops, x.Queues)
	// Two timestamps per queue, 8 B each; real memory, the host reads them.
	ts, err := mem.Alloc(gpu, uint64(16*nq), "measure timestamps")
	if err != nil {
		return Timed{}, err
	}
	rung := make([]sim.Time, nq)
	drained := make([]sim.Time, nq)
	var errs []error
	for q := 0; q < nq; q++ {
		qu, err := dev.Queue(gpu, peer, q)
		if err != nil {
			return Timed{}, err
		}
		var pkts []ring.Packet
		pkts = append(pkts, ring.TimestampGlobal(ts+uint64(16*q)))
		for i := q; i < x.Ops; i += x.Queues {
			for off := uint64(0); off < x.Bytes; off += ring.MaxCopyBytes {
				n := min(ring.MaxCopyBytes, x.Bytes-off)
				pkts = append(pkts, ring.Copy(dst+off, src+off, n))
			}
		}
		pkts = append(pkts, ring.TimestampGlobal(ts+uint64(16*q+8)))
		s.Spawn(fmt.Sprintf("measure stream %s→%s q%d", EndName(x.Src), EndName(x.Dst), q), func(a *sim.Actor) {
			if err := postStream(a, qu, pkts, &rung[q]); err != nil {
				errs = append(errs, err)
				return
			}
			drained[q] = a.Now()
		})
	}
	if err := s.Run(); err != nil {
		return Timed{}, err
	}
	if len(errs) > 0 {
		return Timed{}, errors.Join(errs...)
	}
	var first, last uint64
	for q := 0; q < nq; q++ {
		t0, err0 := mem.Load64(ts + uint64(16*q))
		t1, err1 := mem.Load64(ts + uint64(16*q+8))
		if err := errors.Join(err0, err1); err != nil {
			return Timed{}, err
		}
		if t1 < t0 {
			return Timed{}, fmt.Errorf("queue %d: closing TIMESTAMP %d is before the opening one %d", q, t1, t0)
		}
		if q == 0 || t0 < first {
			first = t0
		}
		last = max(last, t1)
	}
	period := float64(sim.Second) / float64(timestampHz)
	return Timed{
		EngineUs: micros(sim.Time(float64(last-first) * period)),
		HostUs:   micros(slices.Max(drained) - slices.Min(rung)),
	}, nil
}

// postStream writes pkts into qu, one 32 B unit each, ringing the doorbell
// once when they are all written (or, for a stream longer than the ring
// holds, at each half ring), then waits until the engine has executed them.
func postStream(a *sim.Actor, qu *cco.Queue, pkts []ring.Packet, rung *sim.Time) error {
	batch := max(1, int(qu.Ring().Capacity()/measureUnit/2))
	*rung = -1
	var end uint64
	for lo := 0; lo < len(pkts); lo += batch {
		hi := min(len(pkts), lo+batch)
		n := uint64(hi-lo) * measureUnit
		base, err := qu.Reserve(a, n)
		if err != nil {
			return err
		}
		for i := lo; i < hi; i++ {
			if err := qu.WriteUnit(base+uint64(i-lo)*measureUnit, &pkts[i]); err != nil {
				return err
			}
		}
		if err := qu.Submit(a, base, base+n); err != nil {
			return err
		}
		if *rung < 0 {
			*rung = a.Now()
		}
		end = base + n
	}
	qu.AwaitDrained(a, end)
	return nil
}

// MeasureRows runs every row reps times on devices from b (seeds seed,
// seed+1, …) and returns the rows with TimeUs the median engine time and
// Clock ClockEngine, and the median host time of each row.
func MeasureRows(b Backend, rows []Measurement, reps int, seed uint64) (out []Measurement, hostUs []float64, err error) {
	if reps < 1 || reps > 101 {
		return nil, nil, fmt.Errorf("measure: %d repetitions: need 1..101", reps)
	}
	if len(rows) == 0 || len(rows) > MaxFitRows {
		return nil, nil, fmt.Errorf("measure: %d rows: need 1..%d", len(rows), MaxFitRows)
	}
	for _, x := range rows {
		var eng, host []float64
		for r := 0; r < reps; r++ {
			t, err := MeasureOnce(b, x, seed+uint64(r))
			if err != nil {
				return nil, nil, err
			}
			eng, host = append(eng, t.EngineUs), append(host, t.HostUs)
		}
		x.TimeUs, x.Clock = median(eng), ClockEngine
		if x.TimeUs < minFitTimeUs {
			return nil, nil, fmt.Errorf("measure %s: engine time %g µs: below the timestamp counter's resolution", PrintName(x.Name), x.TimeUs)
		}
		out, hostUs = append(out, x), append(hostUs, median(host))
	}
	return out, hostUs, nil
}

// DefaultSweep is the rows `emud calibrate --measure` runs: single copies
// local (GPU 0 to itself) and to a peer (GPU 0 to GPU 1), 64 B to 64 MiB in
// steps of 4×; bursts of 8 and 64 copies at 4 KiB and 1 MiB; 64 copies of
// 4 KiB split over 2 to 8 queues (a split over q queues tells whether
// the link has q engines), and 16 MiB over 4; host copies (GPU 0 to host
// memory 64 B to 16 MiB and a burst of 8, host to GPU 0 64 B and 16 MiB).
// These are the shapes that identify the engine-side parameters (per-path
// fixed costs and rates, the per-packet gap, the engines a link feeds).
func DefaultSweep() []Measurement {
	var rows []Measurement
	for _, path := range []struct {
		name     string
		src, dst int
	}{{"local", 0, 0}, {"peer", 0, 1}} {
		for b := uint64(64); b <= 64<<20; b *= 4 {
			rows = append(rows, Measurement{Name: fmt.Sprintf("%s.%s", path.name, sizeName(b)), Src: path.src, Dst: path.dst, Ops: 1, Bytes: b, Queues: 1})
		}
		for _, ops := range []int{8, 64} {
			for _, b := range []uint64{4 << 10, 1 << 20} {
				rows = append(rows, Measurement{Name: fmt.Sprintf("%s.burst%d.%s", path.name, ops, sizeName(b)), Src: path.src, Dst: path.dst, Ops: ops, Bytes: b, Queues: 1})
			}
		}
	}
	// Splits of small copies over queues show how many engines share the
	// per-packet cost (the engines a link feeds); a split of large ones
	// shows the link they share.
	for q := 2; q <= benchQueues; q++ {
		rows = append(rows, Measurement{Name: fmt.Sprintf("peer.split%d.64x4K", q), Src: 0, Dst: 1, Ops: 64, Bytes: 4 << 10, Queues: q})
	}
	rows = append(rows, Measurement{Name: "peer.split4.16M", Src: 0, Dst: 1, Ops: 4, Bytes: 4 << 20, Queues: 4})
	// The host path (GPU memory to and from system memory over PCIe): its
	// fixed cost from the small copies and the burst, its rate from the
	// large ones, each direction.
	for _, b := range []uint64{64, 4 << 10, 256 << 10, 16 << 20} {
		rows = append(rows, Measurement{Name: "d2h." + sizeName(b), Src: 0, Dst: model.Host, Ops: 1, Bytes: b, Queues: 1})
	}
	rows = append(rows, Measurement{Name: "d2h.burst8.4K", Src: 0, Dst: model.Host, Ops: 8, Bytes: 4 << 10, Queues: 1})
	for _, b := range []uint64{64, 16 << 20} {
		rows = append(rows, Measurement{Name: "h2d." + sizeName(b), Src: model.Host, Dst: 0, Ops: 1, Bytes: b, Queues: 1})
	}
	return rows
}

// sizeName is 64, 4K, 1M: a size in a row name.
func sizeName(b uint64) string {
	switch {
	case b >= 1<<20 && b%(1<<20) == 0:
		return fmt.Sprintf("%dM", b>>20)
	case b >= 1<<10 && b%(1<<10) == 0:
		return fmt.Sprintf("%dK", b>>10)
	}
	return fmt.Sprint(b)
}

// WriteMeasurements writes rows as a measurement file (format v3, with the
// clock column; v4, with the exec column too, when a row is a pull) that
// ParseMeasurements reads back.
func WriteMeasurements(w io.Writer, rows []Measurement) error {
	v4 := false
	for _, x := range rows {
		v4 = v4 || x.Pull
	}
	cw := csv.NewWriter(w)
	hdr := headerV3
	if v4 { // only rows with a pull need the exec column
		hdr = headerV4
	}
	_ = cw.Write(strings.Split(hdr, ","))
	for _, x := range rows {
		rec := []string{x.Name, EndName(x.Src), EndName(x.Dst), strconv.Itoa(x.Ops),
			strconv.FormatUint(x.Bytes, 10), strconv.Itoa(x.Queues), strconv.FormatFloat(x.TimeUs, 'g', 7, 64), x.Clock.String()}
		if v4 {
			rec = append(rec, strconv.Itoa(x.GPU()))
		}
		_ = cw.Write(rec)
	}
	cw.Flush()
	return cw.Error()
}
