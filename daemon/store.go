package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/emud-dev/emud/scenario"
)

// The stored runs: the memory budget they and running runs count
// against, eviction of the oldest records, and the read side of the API
// (list, get, trace).

// memBudgetOf is --mem-budget as the daemon counts it: 0 for none (or one
// beyond what an int64 counts, which no machine has).
func memBudgetOf(budget uint64) int64 {
	if budget > math.MaxInt64 {
		return 0
	}
	return int64(budget)
}

// acquireMem holds need bytes of the budget for a run, evicting the oldest
// finished records to make room (a run matters more than an old report),
// else waiting until runs give some back or ctx is done.
func (d *daemon) acquireMem(ctx context.Context, need int64) error {
	for {
		d.mu.Lock()
		if d.memCur+need <= d.memBudget {
			d.memCur += need
			d.mu.Unlock()
			return nil
		}
		// Records give way only where that makes room: a run waiting
		// for the runs executing leaves them be.
		if d.memCur-d.recBytes+need <= d.memBudget && d.evictOldestLocked(nil) {
			d.mu.Unlock()
			continue
		}
		free := d.memFree
		d.mu.Unlock()
		select {
		case <-free:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// releaseMemLocked gives n bytes back to the budget and wakes the runs
// waiting for memory.
func (d *daemon) releaseMemLocked(n int64) {
	if n == 0 {
		return
	}
	d.memCur -= n
	close(d.memFree)
	d.memFree = make(chan struct{})
}

// evictOldestLocked drops the oldest finished run other than keep and
// gives back what its record held; false when there is none.
func (d *daemon) evictOldestLocked(keep *run) bool {
	for i, id := range d.order {
		ru := d.runs[id]
		if ru == keep || ru.Status == statusQueued || ru.Status == statusRunning {
			continue
		}
		d.dropLocked(ru)
		d.order = slices.Delete(d.order, i, i+1)
		return true
	}
	return false
}

// dropLocked forgets a finished run: its trace, its record's share of the
// budget, the run itself (the caller takes it out of d.order).
func (d *daemon) dropLocked(ru *run) {
	if ru.trace != nil {
		d.dropTraceLocked(ru, "")
	}
	d.releaseMemLocked(ru.stored)
	d.recBytes -= ru.stored
	ru.stored = 0
	delete(d.runs, ru.ID)
}

// storedCost is what a finished record holds on the heap, by its parts:
// the report's JSON and the request's strings, twice over for what the
// runtime keeps around them (a faults list of 949 KB made records of
// about 6 MB before runs dropped their parsed fault spec), plus the
// fixed part of a record.
func storedCost(ru *run) int64 {
	q := ru.Request
	n := len(ru.Report) + len(q.Scenario) + len(q.Model) + len(q.Strategy) + len(q.Faults) + len(ru.digest) + len(ru.TraceDropped)
	return 2*int64(n) + recordOverhead
}

// recordOverhead is a record's fixed size: the run, its times, the map
// entry and its id.
const recordOverhead = 2 << 10

// shrinkLocked cuts a finished record that does not fit the budget down to
// its status: its report and its faults list go, and the record says so.
func shrinkLocked(ru *run, budget int64) {
	why := fmt.Sprintf("the report (%s) is dropped: the runs executing and the newer records hold the daemon's --mem-budget %s", scenario.FormatBytes(uint64(len(ru.Report))), scenario.FormatBytes(uint64(budget)))
	ru.Report, _ = json.Marshal(map[string]string{"status": ru.Status, "error": why})
	if len(ru.Request.Faults) > 64 {
		ru.Request.Faults = fmt.Sprintf("(%d bytes, dropped with the report)", len(ru.Request.Faults))
	}
}

// trimTracesLocked drops the oldest kept traces until the rest fit
// --trace-budget.
func (d *daemon) trimTracesLocked() {
	for _, id := range d.order {
		if d.traceBytes <= d.cfg.TraceBudget {
			return
		}
		if ru := d.runs[id]; ru.trace != nil {
			d.dropTraceLocked(ru, fmt.Sprintf("dropped to keep the traces of newer runs within --trace-budget %s", scenario.FormatBytes(uint64(d.cfg.TraceBudget))))
		}
	}
}

func (d *daemon) dropTraceLocked(ru *run, why string) {
	d.traceBytes -= int64(len(ru.trace))
	ru.trace, ru.TraceDropped = nil, why
}

// runListing is one row of GET /runs.
type runListing struct {
	ID       string `json:"id"`
	Scenario string `json:"scenario"`
	Seed     uint64 `json:"seed"`
	Status   string `json:"status"`
	Digest   string `json:"digest,omitempty"`
}

func (d *daemon) list(w http.ResponseWriter, _ *http.Request) {
	d.mu.Lock()
	rows := make([]runListing, 0, len(d.order))
	for _, id := range slices.Backward(d.order) {
		ru := d.runs[id]
		row := runListing{ID: ru.ID, Scenario: ru.sc.Name, Seed: ru.o.Seed, Status: ru.Status, Digest: ru.digest}
		rows = append(rows, row)
	}
	d.mu.Unlock()
	writeJSONResponse(w, http.StatusOK, map[string]any{"runs": rows})
}

func (d *daemon) lookup(w http.ResponseWriter, r *http.Request) *run {
	id := r.PathValue("id")
	d.mu.Lock()
	ru := d.runs[id]
	d.mu.Unlock()
	if ru == nil {
		writeError(w, &requestError{http.StatusNotFound, "id", d.missing(id)})
	}
	return ru
}

// missing says why there is no run id: made by an earlier daemon (records
// do not survive a restart), dropped, or never made.
func (d *daemon) missing(id string) string {
	boot, n, ok := strings.Cut(id, "-")
	seq, err := strconv.Atoi(n)
	switch {
	case !ok || err != nil || seq < 1:
		return fmt.Sprintf("no run %q: run ids look like %s-1", id, d.boot)
	case boot != d.boot:
		return fmt.Sprintf("no run %q: it was made before this daemon started (%s); records are kept in memory only and do not survive a restart", id, d.started.Format(time.RFC3339))
	}
	d.mu.Lock()
	made := seq <= d.nextID
	d.mu.Unlock()
	if made {
		return fmt.Sprintf("no run %q: dropped to keep the last --keep %d runs within --mem-budget", id, d.cfg.Keep)
	}
	return fmt.Sprintf("no run %q: not made yet", id)
}

func (d *daemon) get(w http.ResponseWriter, r *http.Request) {
	ru := d.lookup(w, r)
	if ru == nil {
		return
	}
	d.mu.Lock()
	body, err := json.MarshalIndent(ru, "", "  ")
	d.mu.Unlock()
	if err != nil {
		writeError(w, &requestError{http.StatusInternalServerError, "", err.Error()})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(append(body, '\n'))
}

func (d *daemon) getTrace(w http.ResponseWriter, r *http.Request) {
	ru := d.lookup(w, r)
	if ru == nil {
		return
	}
	d.mu.Lock()
	status, tr, asked, dropped := ru.Status, ru.trace, ru.Request.Trace, ru.TraceDropped
	d.mu.Unlock()
	switch {
	case !asked:
		writeError(w, &requestError{http.StatusNotFound, "trace", fmt.Sprintf("run %s was submitted without \"trace\": true", ru.ID)})
	case status == statusQueued || status == statusRunning:
		writeError(w, &requestError{http.StatusConflict, "", fmt.Sprintf("run %s is %s: its trace is written when it ends", ru.ID, status)})
	case tr == nil && dropped != "":
		writeError(w, &requestError{http.StatusGone, "", fmt.Sprintf("run %s's trace is not kept: %s", ru.ID, dropped)})
	case tr == nil:
		writeError(w, &requestError{http.StatusNotFound, "", fmt.Sprintf("run %s (%s) left no trace", ru.ID, status)})
	default:
		w.Header().Set("Content-Type", "application/json")
		w.Write(tr)
	}
}
