package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/emud-dev/emud/scenario"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/sim"
)

// The run queue: submission, the runs executed in turn under the memory
// budget, cancellation (DELETE) and a run's end.

func (d *daemon) submit(w http.ResponseWriter, r *http.Request) {
	req, sc, o, rerr := d.decodeRequest(w, r)
	if rerr != nil {
		writeError(w, rerr)
		return
	}
	d.mu.Lock()
	if d.draining {
		d.mu.Unlock()
		writeError(w, &requestError{http.StatusServiceUnavailable, "", "shutting down: not taking runs"})
		return
	}
	if d.queuedLocked() >= d.cfg.MaxQueued+d.cfg.MaxRuns {
		d.mu.Unlock()
		writeError(w, &requestError{http.StatusServiceUnavailable, "", fmt.Sprintf("too many runs waiting (%d): try again later", d.cfg.MaxQueued)})
		return
	}
	d.nextID++
	ru := &run{ID: d.boot + "-" + strconv.Itoa(d.nextID), Status: statusQueued, Request: *req, Submitted: time.Now().UTC(), sc: sc, o: o}
	ru.ctx, ru.cancel = context.WithCancel(d.ctx)
	ru.stop = &sim.Stopper{}
	ru.prev, ru.turn = d.lastTurn, make(chan struct{})
	d.lastTurn = ru.turn
	d.runs[ru.ID] = ru
	d.order = append(d.order, ru.ID)
	d.evictLocked()
	d.wg.Add(1)
	d.mu.Unlock()
	d.waiting.Inc()
	go d.execute(ru)
	writeJSONResponse(w, http.StatusAccepted, map[string]string{"id": ru.ID, "status": statusQueued, "url": "/runs/" + ru.ID})
}

// beforeSlot, when a test sets it, runs in each run's goroutine before it
// asks for a slot: the goroutines' start order is the scheduler's, and a
// test delays them to show it does not decide which run starts first.
var beforeSlot func(id string)

// takeSlot waits for ru's turn, then for one of the --max-runs slots.
// Runs start in the order they were submitted: each goroutine asks the
// semaphore (whose waiters are served first come, first served) only
// once the run before it has its slot, so a run submitted later never
// overtakes one still waiting. Before, every run's goroutine raced for the
// slot and a run could start before one queued ahead of it.
func (d *daemon) takeSlot(ru *run) error {
	select {
	case <-ru.prev:
	case <-ru.ctx.Done():
		// Canceled while runs ahead still wait: the turn passes on only
		// once theirs has, or the run behind would overtake them.
		go func() { <-ru.prev; close(ru.turn) }()
		return ru.ctx.Err()
	}
	defer close(ru.turn)
	return d.sem.Acquire(ru.ctx, 1)
}

// queuedLocked counts runs not finished (queued or running).
func (d *daemon) queuedLocked() int {
	n := 0
	for _, ru := range d.runs {
		if ru.Status == statusQueued || ru.Status == statusRunning {
			n++
		}
	}
	return n
}

// evictLocked drops the oldest finished runs beyond cfg.Keep.
func (d *daemon) evictLocked() {
	excess := len(d.order) - d.cfg.Keep
	if excess <= 0 {
		return
	}
	kept := d.order[:0]
	for _, id := range d.order {
		ru := d.runs[id]
		if excess > 0 && ru.Status != statusQueued && ru.Status != statusRunning {
			d.dropLocked(ru)
			excess--
			continue
		}
		kept = append(kept, id)
	}
	d.order = kept
}

// execute waits for a slot, runs, and files the report. Nothing a run
// does can stop the daemon: runOnce turns panics into error reports.
func (d *daemon) execute(ru *run) {
	defer d.wg.Done()
	defer ru.cancel()
	if beforeSlot != nil {
		beforeSlot(ru.ID)
	}
	err := d.takeSlot(ru)
	d.waiting.Dec()
	if err != nil {
		d.finish(ru, nil, nil, statusCanceled)
		return
	}
	defer d.sem.Release(1)
	var need int64
	if d.memBudget > 0 {
		// Runs that fit the budget alone may still not fit it together:
		// a run waits for the memory it is estimated to need. Submission
		// refused any run larger than the whole budget.
		need = int64(scenario.Footprint(ru.sc, ru.o).Bytes())
		if err := d.acquireMem(ru.ctx, need); err != nil {
			d.finish(ru, nil, nil, statusCanceled)
			return
		}
	}
	// The run's memory goes back before its record takes its own share.
	release := func() {
		d.mu.Lock()
		d.releaseMemLocked(need)
		need = 0
		d.mu.Unlock()
	}
	defer release()
	now := time.Now().UTC()
	d.mu.Lock()
	if ru.canceled {
		d.mu.Unlock()
		d.finish(ru, nil, nil, statusCanceled)
		return
	}
	ru.Status, ru.Started = statusRunning, &now
	d.mu.Unlock()
	d.flying.Inc()
	defer d.flying.Dec()

	rep, tr := d.runOne(ru)
	d.duration.WithLabelValues(ru.sc.Name).Observe(time.Since(now).Seconds())
	status := rep.Status
	if errors.Is(rep.Err, errCanceled) {
		status = statusCanceled
	}
	release()
	d.finish(ru, rep, tr, status)
	if scenario.Footprint(ru.sc, ru.o).Bytes() >= returnToOSAfter {
		// The run's memory is garbage now. Left to the runtime, the freed
		// heap stays resident (reused spans are zeroed, so their pages
		// are touched) and the scavenger returns it only slowly: a daemon
		// that ran a big run would keep its footprint. A forced collection
		// costs little next to such a run.
		debug.FreeOSMemory()
	}
}

// returnToOSAfter is the estimated footprint from which a finished run's
// memory is handed back to the operating system at once.
const returnToOSAfter = 64 << 20

// runOne runs ru and returns its report and serialized trace (nil unless
// asked for). The run's registry is folded into the daemon's totals here;
// nothing else of the run outlives this call.
func (d *daemon) runOne(ru *run) (*scenario.Report, []byte) {
	o := ru.o
	o.Registry = prometheus.NewRegistry()
	o.Stop = ru.stop
	var writeTrace func(io.Writer) error
	if ru.Request.Trace {
		writeTrace = scenario.TraceInto(&o)
	}
	rep := scenario.RunOnce(ru.sc, o)
	var tr []byte
	if writeTrace != nil {
		var buf bytes.Buffer
		if err := writeTrace(&buf); errors.Is(err, scenario.ErrNoNode) {
			// a run that failed before its node was built has no trace
		} else if err != nil {
			d.logf("run %s: trace: %v", ru.ID, err)
		} else {
			tr = buf.Bytes()
		}
	}
	if err := d.engine.add(o.Registry); err != nil {
		d.logf("run %s: engine metrics: %v", ru.ID, err)
	}
	return rep, tr
}

// errCanceled ends a run DELETE /runs/{id} interrupted.
var errCanceled = errors.New("canceled by DELETE /runs/{id}")

// cancelRun is DELETE /runs/{id}: a queued run is canceled at once, a
// running one is stopped at its next event (its report says canceled
// once it stops); a finished run is left as it is.
func (d *daemon) cancelRun(w http.ResponseWriter, r *http.Request) {
	ru := d.lookup(w, r)
	if ru == nil {
		return
	}
	d.mu.Lock()
	status := ru.Status
	switch {
	case status != statusQueued && status != statusRunning:
		d.mu.Unlock()
		writeError(w, &requestError{http.StatusConflict, "", fmt.Sprintf("run %s has finished (%s): nothing to cancel", ru.ID, status)})
		return
	}
	ru.canceled = true
	ru.cancel()               // a queued run stops waiting for its slot or memory
	ru.stop.Stop(errCanceled) // a running one at its next event
	d.mu.Unlock()
	d.logf("run %s: cancel asked (%s)", ru.ID, status)
	writeJSONResponse(w, http.StatusAccepted, map[string]string{"id": ru.ID, "status": "canceling", "url": "/runs/" + ru.ID})
}

// finish files a run's outcome: the report as JSON, the trace within the
// budget.
func (d *daemon) finish(ru *run, rep *scenario.Report, tr []byte, status string) {
	now := time.Now().UTC()
	var body json.RawMessage
	digest := ""
	if rep != nil {
		b, err := json.Marshal(rep)
		if err != nil {
			b, _ = json.Marshal(map[string]string{"status": scenario.StatusError, "error": "report: " + err.Error()})
			status = scenario.StatusError
		}
		body, digest = b, rep.Digest()
	}
	d.mu.Lock()
	ru.Status, ru.Report, ru.digest, ru.Finished = status, body, digest, &now
	ru.o.Faults = engine.InjectSpec{} // parsed, it took several times its text
	if d.memBudget > 0 {
		cost := storedCost(ru)
		for d.memCur+cost > d.memBudget && d.evictOldestLocked(ru) {
		}
		if d.memCur+cost > d.memBudget {
			shrinkLocked(ru, d.memBudget)
			cost = storedCost(ru) // counted even over the budget: a few KiB, given back as runs end
		}
		ru.stored = cost
		d.memCur += cost
		d.recBytes += cost
	}
	switch {
	case tr == nil:
	case int64(len(tr)) > d.cfg.TraceBudget:
		ru.TraceDropped = fmt.Sprintf("the trace (%s) is larger than --trace-budget %s", scenario.FormatBytes(uint64(len(tr))), scenario.FormatBytes(uint64(d.cfg.TraceBudget)))
	default:
		ru.trace = tr
		d.traceBytes += int64(len(tr))
		d.trimTracesLocked()
	}
	d.evictLocked()
	d.mu.Unlock()
	d.total.WithLabelValues(ru.sc.Name, status).Inc()
	d.logf("run %s: %s seed %d: %s", ru.ID, ru.sc.Name, ru.o.Seed, status)
}
