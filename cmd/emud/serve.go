package main

import (
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/emud-dev/emud/daemon"
	"github.com/emud-dev/emud/internal/fileio"
	"github.com/emud-dev/emud/scenario"
)

func newServeCmd() *cobra.Command {
	cfg := daemon.DefaultConfig()
	maxBody, traceBudget, memBudget := byteSize(cfg.MaxBody), byteSize(cfg.TraceBudget), byteSize(cfg.MemBudget)
	var tokenFile string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve runs over HTTP: submit, list, fetch reports and traces, Prometheus metrics",
		Long:  serveLong,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg.MaxBody, cfg.TraceBudget, cfg.MemBudget = int64(maxBody), int64(traceBudget), uint64(memBudget)
			if tokenFile != "" {
				tok, err := readToken(tokenFile)
				if err != nil {
					return err
				}
				cfg.Token = tok
			}
			if err := cfg.Validate(); err != nil {
				return err
			}
			defer scenario.WithMemLimit(cfg.MemBudget + uint64(cfg.TraceBudget))()
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
	fs.StringVar(&cfg.Addr, "addr", cfg.Addr, "address to listen on; one other than loopback needs --token-file")
	fs.StringVar(&tokenFile, "token-file", "", "file holding a secret token (its first line, at most 4 KiB); every request but /healthz must then send \"Authorization: Bearer TOKEN\"")
	fs.StringArrayVar(&cfg.AllowHosts, "allow-host", nil, "a host name, besides localhost, IP addresses and --addr's host, that requests may name in their Host header (repeatable)")
	fs.IntVar(&cfg.MaxRuns, "max-runs", cfg.MaxRuns, "runs executing at once")
	fs.IntVar(&cfg.MaxQueued, "max-queued", cfg.MaxQueued, "runs waiting for a slot before submissions get 503")
	fs.Var(&maxBody, "max-body", "request body limit")
	fs.IntVar(&cfg.Keep, "keep", cfg.Keep, "finished runs kept in memory (each keeps its request, status and report)")
	fs.Var(&traceBudget, "trace-budget", "bytes of serialized traces kept in memory; beyond it the oldest traces are dropped (0 keeps none: a run's trace is dropped as soon as it is written, and its /trace answers 410)")
	fs.BoolVar(&cfg.Phantom, "phantom", false, `runs are timing only (no bytes stored, data checks skipped) unless a request says "phantom": false`)
	fs.Var(&memBudget, "mem-budget", "memory for the runs executing at once, by their estimated footprints, and the finished runs' records: a run over it is refused with 422, runs that together exceed it wait (default a quarter of the memory this process may use: physical, or its cgroup's limit; over that memory is refused; 0 = no limit)")
	fs.DurationVar(&cfg.ReadTimeout, "read-timeout", cfg.ReadTimeout, "time a client has to send a whole request (headers and body); a stalled upload is cut off")
	fs.DurationVar(&cfg.ShutdownTimeout, "shutdown-timeout", cfg.ShutdownTimeout, "how long shutdown waits for runs in flight")
	return cmd
}

// maxTokenFile bounds --token-file: a token is a line, not a file's worth.
const maxTokenFile = 4 << 10

// readToken reads --token-file: its first line, trimmed, not empty.
func readToken(path string) (string, error) {
	b, err := fileio.ReadFile(path, maxTokenFile, "--token-file")
	if err != nil {
		return "", err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	tok := strings.TrimSpace(line)
	switch {
	case tok == "":
		return "", fmt.Errorf("invalid --token-file %s: its first line is empty: write the token there", path)
	case strings.ContainsFunc(tok, func(r rune) bool { return r < 0x21 || r > 0x7e }):
		return "", fmt.Errorf("invalid --token-file %s: the token must be printable ASCII without spaces (it travels in an HTTP header)", path)
	}
	return tok, nil
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
                         race, misuse, error, canceled), the request, and the
                         report (summary, hang report or error). Ids are BOOT-N: a restarted
                         daemon never reuses one, and a 404 says when an id
                         is of an earlier daemon (records live in memory).
  DELETE /runs/{id}      cancel a run: a queued one at once, a running one
                         at its next event; answers 202, the run ends
                         "canceled" (409 for a run already finished).
  GET  /runs/{id}/trace  its Chrome trace-event JSON (runs submitted with trace);
                         410 once dropped to stay within --trace-budget.
  GET  /metrics          Prometheus: engine counters summed over all runs, run
                         counts by scenario and status, run durations.
  GET  /healthz          200 "ok".

Access: the daemon listens on loopback (--addr 127.0.0.1:8080) unless given
--token-file; with one, every request but /healthz must send
"Authorization: Bearer TOKEN" (401 otherwise), and --addr may be any
address. Every request must name the daemon in Host (localhost, an IP
address, --addr's host or an --allow-host name: 403 otherwise) and a POST
must be application/json (415 otherwise), so a web page the user visits
cannot start runs. The start-up line says which applies.

Bad requests get 400 with a message naming the field (field names are
case-sensitive; null, non-objects and trailing data are refused); a body over
--max-body gets 413; a run whose estimated footprint exceeds --mem-budget
gets 422 (runs that fit alone but not together wait; "race" with a phantom
run gets 400); a request not sent within --read-timeout is cut off. A
finished run keeps only its request, status, report and (within
--trace-budget) its serialized trace; the last --keep runs are kept, and
their records count against --mem-budget with the runs executing: the
oldest go first to make room. --mem-budget defaults to a quarter of the
memory this process may use (its cgroup's limit where lower than the
machine's), and one over that memory is refused. /metrics sums the engine
counters over runs, GPUs and queues (series by opcode or fault kind only). At most --max-runs runs execute at once; the rest queue. A run that
fails, panics or hangs is reported, never fatal to the daemon. SIGINT or
SIGTERM stops taking runs, cancels queued ones, waits for those in flight
(up to --shutdown-timeout; runs still in flight then make the exit status 1),
cuts off clients still sending after a 2 s grace, and exits.`
