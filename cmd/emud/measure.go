package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"

	"github.com/emud-dev/emud/calibrate"
	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/hw/rocm"
	"github.com/emud-dev/emud/hw/standin"
	"github.com/emud-dev/emud/internal/fileio"
	"github.com/emud-dev/emud/model"
	"github.com/emud-dev/emud/sim"
)

// measureFlags are calibrate's --measure flags: time the calibration sweep
// on queues of a device and write the rows `emud fit` reads.
type measureFlags struct {
	on       bool
	backend  string
	truth    string
	rowsPath string
	outPath  string
	reps     int
	format   string
}

// Measurement file formats --format names.
const (
	formatEmud          = "emud"
	formatTransferBench = "transferbench"
)

func (mf *measureFlags) register(f *pflag.FlagSet) {
	f.BoolVar(&mf.on, "measure", false, "instead of judging a model: time the calibration sweep on SDMA queues (TIMESTAMP packets, median of --reps) and write a measurement CSV for emud fit")
	f.StringVar(&mf.backend, "backend", "rocm", `with --measure: "rocm" (real queues through hw/rocm and KFD; needs a binary built with -tags rocm and /dev/kfd), "stand-in" (hw/rocm over the timing stand-in, whose engine follows --truth), or "emu" (the emulator under --model)`)
	f.StringVar(&mf.truth, "truth", "", "with --backend stand-in: the timing model (preset or model file) the stand-in's engine follows")
	f.StringVar(&mf.rowsPath, "rows", "", "with --measure: the rows to time, a measurement CSV (its times are ignored); default the built-in sweep (local and peer copies 64 B..64 MiB, bursts, queue splits, host copies each way)")
	f.StringVar(&mf.outPath, "out", "", "with --measure: write the measurement CSV to this file instead of stdout")
	f.IntVar(&mf.reps, "reps", 5, "with --measure: runs of each row; the median is written")
	f.StringVar(&mf.format, "format", formatEmud, `with --measure: "emud" (the measurement CSV, format v3) or "transferbench" (TransferBench's OUTPUT_TO_CSV=1 results, one test per row; the default rows are then the TransferBench sweep: local, pushed and pulled copies, parallel pushes, host copies)`)
}

// open is the Backend --backend names.
func (mf *measureFlags) open(modelName string) (calibrate.Backend, error) {
	switch mf.backend {
	case "emu":
		m, err := model.Load(modelName)
		if err != nil {
			return nil, fmt.Errorf("invalid --model: %w", err)
		}
		return calibrate.EmulatorBackend(m), nil
	case "stand-in":
		if mf.truth == "" {
			return nil, errors.New("--backend stand-in needs --truth: the timing model its engine follows (a preset or a model file)")
		}
		truth, err := model.Load(mf.truth)
		if err != nil {
			return nil, fmt.Errorf("invalid --truth: %w", err)
		}
		return func(s *sim.Sim) (cco.Device, func() error, error) {
			drv, err := standin.New(s, truth, 0)
			if err != nil {
				return nil, nil, err
			}
			d, err := rocm.New(s, drv, rocm.Config{})
			if err != nil {
				return nil, nil, err
			}
			return d, d.Close, nil
		}, nil
	case "rocm":
		// Fail before the sweep when the backend cannot run here.
		if d, err := rocm.Open(sim.New(sim.Config{}), rocm.Config{}); err != nil {
			return nil, fmt.Errorf("--backend rocm: %w", err)
		} else if err := d.Close(); err != nil {
			return nil, fmt.Errorf("--backend rocm: %w", err)
		}
		return func(s *sim.Sim) (cco.Device, func() error, error) {
			d, err := rocm.Open(s, rocm.Config{})
			if err != nil {
				return nil, nil, err
			}
			return d, d.Close, nil
		}, nil
	}
	return nil, fmt.Errorf(`invalid --backend %q: need "rocm", "stand-in" or "emu"`, mf.backend)
}

// run times the rows and writes the CSV (stdout or --out) and a table of
// both clocks (stderr).
func (mf *measureFlags) run(cf *calibrateFlags, out, errOut io.Writer) error {
	if mf.reps < 1 || mf.reps > 101 {
		return fmt.Errorf("invalid --reps %d: need 1..101", mf.reps)
	}
	if mf.truth != "" && mf.backend != "stand-in" {
		return fmt.Errorf("--truth is for --backend stand-in (got --backend %s)", mf.backend)
	}
	tb := false
	switch mf.format {
	case formatEmud:
	case formatTransferBench:
		tb = true
	default:
		return fmt.Errorf(`invalid --format %q: need "emud" or "transferbench"`, mf.format)
	}
	b, err := mf.open(cf.modelName)
	if err != nil {
		return err
	}
	rows := calibrate.DefaultSweep()
	if tb {
		rows = calibrate.TransferBenchSweep()
	}
	if mf.rowsPath != "" {
		f, err := fileio.Open(mf.rowsPath, calibrate.MaxFileBytes, "--rows")
		if err != nil {
			return fmt.Errorf("invalid %w", err)
		}
		rows, err = calibrate.ParseMeasurements(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("invalid --rows %s: %w", mf.rowsPath, err)
		}
		for _, x := range rows {
			if err := calibrate.TransferBenchRow(x); tb && err != nil {
				return fmt.Errorf("invalid --rows %s for --format transferbench: %w", mf.rowsPath, err)
			}
		}
	}
	got, host, err := calibrate.MeasureRows(b, rows, mf.reps, cf.seed)
	if err != nil {
		return err
	}
	var csv bytes.Buffer
	write := calibrate.WriteMeasurements
	if tb {
		write = calibrate.WriteTransferBench
	}
	if err := write(&csv, got); err != nil {
		return err
	}
	if mf.outPath != "" {
		if err := fileio.WriteFile(mf.outPath, csv.Bytes(), 0o644); err != nil {
			return fmt.Errorf("writing --out: %w", err)
		}
	} else if _, err := out.Write(csv.Bytes()); err != nil {
		return err
	}
	fmt.Fprintf(errOut, "%-20s %12s %12s  (median of %d on %s)\n", "row", "engine_us", "host_us", mf.reps, mf.backend)
	for i, x := range got {
		fmt.Fprintf(errOut, "%-20s %12.3f %12.3f\n", calibrate.PrintName(x.Name), x.TimeUs, host[i])
	}
	if mf.outPath != "" {
		fmt.Fprintf(errOut, "measurements: %s (%d rows); fit them with: emud fit %s --params all\n", mf.outPath, len(got), mf.outPath)
	}
	return nil
}
