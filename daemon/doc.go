// Package daemon is emud serve's HTTP daemon: it takes runs as JSON
// requests, runs them on a bounded pool, keeps their reports and traces
// within budgets, and serves Prometheus metrics.
//
// Requests are decoded strictly (decodeRequest: one JSON object, field
// names exact, each field's own check, the scenario's admission) and a bad
// one gets a 4xx naming the field. Runs wait, in the order they were
// submitted, for one of --max-runs slots and for their estimated
// footprint out of --mem-budget; a finished run keeps only its record (request, status, report as JSON, trace within
// --trace-budget), and records count against --mem-budget too: the oldest
// go to make room, for runs first. The default budget is a quarter of the
// memory the process may use (scenario.MachineMemory: physical, or its
// cgroup's limit), and a budget over that memory is refused.
//
// Access (guard): the daemon listens on loopback unless Config.Token is
// set (--token-file), and then every request but /healthz must carry it
// as a Bearer token. Every request must name the daemon in Host and every
// POST must be application/json: a browser sends a cross-site POST without
// a preflight only as a form or text, and a page reaching 127.0.0.1 by a
// rebound name (DNS rebinding) carries that name in Host.
//
// DELETE /runs/{id} cancels a queued run at once and a running one, SDMA
// or fabric, at its next event: each run gets a sim.Stopper through
// scenario.Options.Stop, which every scenario hands to its simulator.
//
// Records live in memory only: ids are BOOT-N, BOOT the daemon's start
// time, so a restarted daemon never reuses an id and answers an earlier
// daemon's id with a 404 that says it was lost in a restart. /metrics
// sums the engine counters of every run over its GPUs and queues (series
// by opcode or fault kind only), so it stays small however many runs of
// however many ranks come. Shutdown drains the runs, then gives open
// connections a short grace and cuts off clients still sending.
package daemon
