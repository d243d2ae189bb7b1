package main

import (
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/emud-dev/emud/daemon"
	"github.com/emud-dev/emud/scenario"
)

func newServeCmd() *cobra.Command {
	cfg := daemon.DefaultConfig()
	maxBody, traceBudget, memBudget := byteSize(cfg.MaxBody), byteSize(cfg.TraceBudget), byteSize(cfg.MemBudget)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve runs over HTTP: submit, list, fetch reports and traces, Prometheus metrics",
		Long:  serveLong,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.MaxBody, cfg.TraceBudget, cfg.MemBudget = int64(maxBody), int64(traceBudget), uint64(memBudget)
			defer scenario.WithMemLimit(cfg.MemBudget + uint64(cfg.TraceBudget))()
			if err := cfg.Validate(); err != nil {
				return err
			}
			ln, err := net.Listen("tcp", cfg.Addr)
			if err != nil {
				return fmt.Errorf("invalid --addr: %w", err)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return daemon.Serve(ctx, cfg, ln, cmd.ErrOrStderr())
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&cfg.Addr, "addr", cfg.Addr, "address to listen on")
	fs.IntVar(&cfg.MaxRuns, "max-runs", cfg.MaxRuns, "runs executing at once")
	fs.IntVar(&cfg.MaxQueued, "max-queued", cfg.MaxQueued, "runs waiting for a slot before submissions get 503")
	fs.Var(&maxBody, "max-body", "request body limit")
	fs.IntVar(&cfg.Keep, "keep", cfg.Keep, "finished runs kept in memory (each keeps its request, status and report)")
	fs.Var(&traceBudget, "trace-budget", "bytes of serialized traces kept in memory; beyond it the oldest traces are dropped (0 keeps none: a run's trace is dropped as soon as it is written, and its /trace answers 410)")
	fs.BoolVar(&cfg.Phantom, "phantom", false, `runs are timing only (no bytes stored, data checks skipped) unless a request says "phantom": false`)
	fs.Var(&memBudget, "mem-budget", "memory for the runs executing at once, by their estimated footprints: a run over it is refused with 422, runs that together exceed it wait (default a quarter of the physical memory; 0 = no limit)")
	fs.DurationVar(&cfg.ReadTimeout, "read-timeout", cfg.ReadTimeout, "time a client has to send a whole request (headers and body); a stalled upload is cut off")
	fs.DurationVar(&cfg.ShutdownTimeout, "shutdown-timeout", cfg.ShutdownTimeout, "how long shutdown waits for runs in flight")
	return cmd
}

// serveLong is the command's help.
const serveLong = `Run emud as a daemon. The HTTP API (JSON):

  POST /runs             submit a run: {"scenario", "ranks", "bytes", "queues",
                         "seed", "debug", "race", "model", "trace", "phantom",
                         "perturb", "strategy", "faults", "lsa_size",
                         "cft_size", "mc_size"}; every field is optional
                         (defaults as "emud run"; "bytes" is a number or a
                         size such as "64K"; "model" is a preset name only,
                         never a file path; "race", "perturb", "strategy" and
                         "faults" as --race, --perturb, --strategy and
                         --faults; "trace": true keeps the trace;
                         "phantom": true runs timing only, as --phantom).
                         Answers 202 {"id", "status", "url"}.
  GET  /runs             the runs, newest first: id, scenario, seed, status.
  GET  /runs/{id}        one run: status (queued, running, ok, hang, mismatch,
                         race, error, canceled), the request, and the report (summary,
                         hang report or error).
  GET  /runs/{id}/trace  its Chrome trace-event JSON (runs submitted with trace);
                         410 once dropped to stay within --trace-budget.
  GET  /metrics          Prometheus: engine counters summed over all runs, run
                         counts by scenario and status, run durations.
  GET  /healthz          200 "ok".

Bad requests get 400 with a message naming the field (field names are
case-sensitive; null, non-objects and trailing data are refused); a body over
--max-body gets 413; a run whose estimated footprint exceeds --mem-budget
gets 422 (runs that fit alone but not together wait); a request not sent
within --read-timeout is cut off. A
finished run keeps only its request, status, report and (within
--trace-budget) its serialized trace; the last --keep runs are kept. At most --max-runs runs execute at once; the rest queue. A run that
fails, panics or hangs is reported, never fatal to the daemon. SIGINT or
SIGTERM stops taking runs, cancels queued ones, waits for those in flight
(up to --shutdown-timeout; runs still in flight then make the exit status 1)
and exits.`
