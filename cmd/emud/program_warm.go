package main

import (
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/emud-dev/emud/cxx"
	"github.com/emud-dev/emud/scenario"
)

// A program sweep's seeds run in warm seed servers (cxx.SeedServer) when
// the program was linked by emud c++ with a seed form, one server per
// worker; else, or with --process-per-seed, each seed is a process of its
// own. Either way a seed's status, stdout and stderr are a process run's.

// sweepOpts are how a program sweep runs its seeds.
type sweepOpts struct {
	processPerSeed bool      // --process-per-seed: no seed server
	warn           io.Writer // where a seed server's refusal is said, once
}

// warmSweep is what a sweep's workers share about its seed form.
type warmSweep struct {
	argv []string
	form cxx.SeedForm
	warn io.Writer

	mu  sync.Mutex
	off bool // a server failed outside a seed: processes from here on
}

// newWarmSweep reads argv[0]'s seed form: nil when the sweep runs
// processes (asked, no form, or a form that cannot serve: then warn says
// why).
func newWarmSweep(argv []string, o sweepOpts) *warmSweep {
	if o.processPerSeed {
		return nil
	}
	form, err := cxx.ReadSeedForm(argv[0])
	if err != nil {
		if !errors.Is(err, cxx.ErrNoSeedForm) && o.warn != nil {
			fmt.Fprintf(o.warn, "emud: warning: %s: each seed runs as a process: %v\n", argv[0], err)
		}
		return nil
	}
	return &warmSweep{argv: argv, form: form, warn: o.warn}
}

// disable turns the servers off after one failed outside a seed.
func (w *warmSweep) disable(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.off && w.warn != nil {
		fmt.Fprintf(w.warn, "emud: warning: %s: the rest of the seeds run as processes: %v\n", w.argv[0], err)
	}
	w.off = true
}

func (w *warmSweep) disabled() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.off
}

// seedRunner runs one worker's seeds.
type seedRunner struct {
	argv []string
	warm *warmSweep // nil: processes
	srv  *cxx.SeedServer
	base []string // the servers' starting environment
}

func newSeedRunner(argv, set []string, warm *warmSweep) *seedRunner {
	return &seedRunner{argv: argv, warm: warm, base: programEnv(set)}
}

// run runs one seed with env as its whole environment: in the worker's
// server when there is one (warm), else as a process.
func (r *seedRunner) run(env []string, stdout, stderr io.Writer) (code int, warm bool, err error) {
	if r.warm == nil || r.warm.disabled() {
		code, err = runProgram(r.argv, env, stdout, stderr)
		return code, false, err
	}
	if r.srv == nil {
		srv, err := cxx.NewSeedServer(r.warm.form.Server, r.warm.form.Object, r.base)
		if err != nil {
			r.warm.disable(err)
			code, err = runProgram(r.argv, env, stdout, stderr)
			return code, false, err
		}
		r.srv = srv
	}
	end, err := r.srv.Run(r.argv, env, stdout, stderr)
	var se *cxx.ErrSeedServer
	switch {
	case errors.As(err, &se):
		// Not the seed's doing: the seed runs again as a process, and so
		// does every seed after it.
		r.warm.disable(err)
		r.close()
		code, err = runProgram(r.argv, env, stdout, stderr)
		return code, false, err
	case err != nil:
		return 0, true, err
	case end.Signal != 0: // a signal ended it, as runProgram says
		return scenario.ExitFailed, true, nil
	}
	return end.Code, true, nil
}

// close ends the worker's server.
func (r *seedRunner) close() {
	if r.srv != nil {
		if err := r.srv.Close(); err != nil && r.warm != nil {
			r.warm.disable(err)
		}
		r.srv = nil
	}
}
