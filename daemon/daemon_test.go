package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/scenario"
	"github.com/emud-dev/emud/sim"
)

// daemonUnderTest is emud serve on a loopback port, in process.
type daemonUnderTest struct {
	t      *testing.T
	url    string
	cancel context.CancelFunc
	done   chan error
	log    *syncBuffer
	token  string // sent as a Bearer token when set
}

// syncBuffer is a log the daemon writes while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func startDaemon(t *testing.T, edit func(*Config)) *daemonUnderTest {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Addr, cfg.MaxRuns, cfg.MaxBody = "127.0.0.1:0", 2, 4096
	if edit != nil {
		edit(&cfg)
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	d := &daemonUnderTest{t: t, url: "http://" + ln.Addr().String(), cancel: cancel, done: make(chan error, 1), log: &syncBuffer{}, token: cfg.Token}
	go func() { d.done <- Serve(ctx, cfg, ln, d.log) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-d.done:
			assert.NoError(t, err)
		case <-time.After(30 * time.Second):
			t.Error("the daemon did not stop")
		}
		http.DefaultClient.CloseIdleConnections()
	})
	return d
}

// do sends a request and returns the status and body.
func (d *daemonUnderTest) do(method, path, body string) (int, string) {
	d.t.Helper()
	req, err := http.NewRequest(method, d.url+path, strings.NewReader(body))
	require.NoError(d.t, err)
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/json")
	}
	if d.token != "" {
		req.Header.Set("Authorization", "Bearer "+d.token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(d.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(d.t, err)
	return resp.StatusCode, string(b)
}

// submit posts a run and returns its id.
func (d *daemonUnderTest) submit(body string) string {
	d.t.Helper()
	status, resp := d.do("POST", "/runs", body)
	require.Equal(d.t, http.StatusAccepted, status, resp)
	var r struct{ ID, Status, URL string }
	require.NoError(d.t, json.Unmarshal([]byte(resp), &r))
	assert.Equal(d.t, statusQueued, r.Status)
	assert.Equal(d.t, "/runs/"+r.ID, r.URL)
	return r.ID
}

// apiRun is GET /runs/{id}, as a client reads it.
type apiRun struct {
	ID      string     `json:"id"`
	Status  string     `json:"status"`
	Request runRequest `json:"request"`
	Started *time.Time `json:"started"`
	Report  *struct {
		Status  string            `json:"status"`
		Summary *scenario.Summary `json:"summary"`
		Hang    *struct {
			Causes []sim.Cause `json:"causes"`
			Digest string      `json:"digest"`
		} `json:"hang"`
		Error string `json:"error"`
	} `json:"report"`
}

// wait polls a run until it is finished.
func (d *daemonUnderTest) wait(id string) apiRun {
	d.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		status, body := d.do("GET", "/runs/"+id, "")
		require.Equal(d.t, http.StatusOK, status, body)
		var r apiRun
		require.NoError(d.t, json.Unmarshal([]byte(body), &r), body)
		if r.Status != statusQueued && r.Status != statusRunning {
			return r
		}
		require.True(d.t, time.Now().Before(deadline), "run %s still %s", id, r.Status)
		time.Sleep(20 * time.Millisecond)
	}
}

func TestServeRunsReportsAndMetrics(t *testing.T) {
	d := startDaemon(t, nil)
	status, body := d.do("GET", "/healthz", "")
	assert.Equal(t, http.StatusOK, status)
	assert.Equal(t, "ok\n", body)

	// A passing run: its digest is the CLI's for the same flags.
	ok := d.submit(`{"scenario": "alltoall", "ranks": 3, "bytes": "4K", "seed": 7}`)
	// A hanging one (the planted bug), with its trace kept.
	hang := d.submit(fmt.Sprintf(`{"scenario": "alltoall-shared-expected", "ranks": 4, "bytes": 4096, "seed": %d, "trace": true}`, hangingSeed(t)))

	r := d.wait(ok)
	require.Equal(t, scenario.StatusOK, r.Status, "%+v", r.Report)
	require.NotNil(t, r.Report.Summary)
	assert.Len(t, r.Report.Summary.Results, 3)
	assert.Equal(t, runDigest(t, "alltoall", scenario.Options{Ranks: 3, Bytes: 4 << 10, Queues: 2, Seed: 7}), r.Report.Summary.Digest, "the daemon's run is the CLI's run")
	assert.Equal(t, uint64(4096), uint64(r.Request.Bytes))

	h := d.wait(hang)
	require.Equal(t, scenario.StatusHang, h.Status)
	require.NotNil(t, h.Report.Hang)
	require.NotEmpty(t, h.Report.Hang.Causes)
	assert.Equal(t, cco.CauseSignalShort, h.Report.Hang.Causes[0].Kind)
	assert.Contains(t, h.Report.Hang.Causes[0].Text, "expected looks shared across queues")
	status, body = d.do("GET", "/healthz", "")
	assert.Equal(t, http.StatusOK, status, "a hung run does not hurt the daemon: %s", body)

	status, body = d.do("GET", "/runs/"+hang+"/trace", "")
	require.Equal(t, http.StatusOK, status, body)
	var tr map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &tr))
	assert.Contains(t, tr, "traceEvents")
	status, body = d.do("GET", "/runs/"+ok+"/trace", "")
	assert.Equal(t, http.StatusNotFound, status)
	assert.Contains(t, body, `submitted without \"trace\": true`)

	status, body = d.do("GET", "/runs", "")
	require.Equal(t, http.StatusOK, status)
	var list struct{ Runs []runListing }
	require.NoError(t, json.Unmarshal([]byte(body), &list))
	require.Len(t, list.Runs, 2)
	assert.Equal(t, hang, list.Runs[0].ID, "newest first")
	assert.Equal(t, scenario.StatusHang, list.Runs[0].Status)
	assert.Equal(t, r.Report.Summary.Digest, list.Runs[1].Digest)

	status, body = d.do("GET", "/runs/999", "")
	assert.Equal(t, http.StatusNotFound, status)
	assert.Contains(t, body, `no run \"999\"`)

	// The scrape parses as Prometheus text and counts what happened.
	status, body = d.do("GET", "/metrics", "")
	require.Equal(t, http.StatusOK, status)
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(strings.NewReader(body))
	require.NoError(t, err, body)
	runs := map[string]float64{}
	for _, m := range mfs["emud_runs_total"].GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		runs[labels["scenario"]+"/"+labels["status"]] = m.GetCounter().GetValue()
	}
	assert.Equal(t, map[string]float64{"alltoall/ok": 1, "alltoall-shared-expected/hang": 1}, runs)
	var copies float64
	for _, m := range mfs["emud_sdma_packets_total"].GetMetric() {
		for _, l := range m.GetLabel() {
			if l.GetName() == "op" && l.GetValue() == "COPY_LINEAR" {
				copies += m.GetCounter().GetValue()
			}
		}
	}
	// alltoall on 3 ranks: 9 puts of 4 KiB, one COPY each; the hung run adds its own.
	assert.GreaterOrEqual(t, copies, 9.0, "engine counters of the runs are summed")
	hist := mfs["emud_run_duration_seconds"].GetMetric()
	require.Len(t, hist, 2)
	for _, m := range hist {
		assert.Equal(t, uint64(1), m.GetHistogram().GetSampleCount())
	}
	assert.Contains(t, mfs, "emud_runs_in_flight")
}

// The daemon takes the perturbation level, strategy and fault spec, and
// runs what the CLI runs for the same flags.
func TestServePerturbedRunIsTheCLIs(t *testing.T) {
	d := startDaemon(t, nil)
	// A perturbed run with faults from the seed: the CLI's run too.
	pert := d.submit(`{"scenario": "relay", "ranks": 3, "bytes": "4K", "seed": 5, "perturb": 1, "strategy": "pct", "faults": "seed=1"}`)
	pr := d.wait(pert)
	faults, err := engine.ParseInject("seed=1")
	require.NoError(t, err)
	want := runDigest(t, "relay", scenario.Options{Ranks: 3, Bytes: 4 << 10, Queues: 2, Seed: 5, Perturb: 1, Strategy: sim.StrategyPCT, Faults: faults})
	if pr.Report.Summary != nil {
		assert.Equal(t, want, pr.Report.Summary.Digest, "perturbed: the daemon's run is the CLI's run")
		assert.Equal(t, 1, pr.Report.Summary.Perturb)
		assert.Equal(t, "pct", pr.Report.Summary.Strategy)
		assert.Equal(t, "seed=1", pr.Report.Summary.Faults)
	} else {
		require.NotNil(t, pr.Report.Hang, "%+v", pr.Report)
		assert.Equal(t, want, pr.Report.Hang.Digest)
	}

}

func TestServeBadRequests(t *testing.T) {
	d := startDaemon(t, nil)
	for _, tc := range []struct {
		name, body string
		status     int
		field, msg string
	}{
		{"bad JSON", `{"ranks": 4`, 400, "", "not valid JSON"},
		{"not an object", `[1, 2]`, 400, "", "request body is a JSON array: want a JSON object"},
		{"empty body", ``, 400, "", "empty request body"},
		{"trailing data", `{"ranks": 4} {"ranks": 5}`, 400, "", "extra data"},
		{"trailing junk", `{"ranks": 4}x`, 400, "", "extra data"},
		{"null body", `null`, 400, "", "request body is null: want a JSON object"},
		{"a string", `"alltoall"`, 400, "", "request body is a JSON string: want a JSON object"},
		{"field in another case", `{"Ranks": 4}`, 400, "Ranks", `unknown field "Ranks": field names are case-sensitive`},
		{"field in capitals", `{"SCENARIO": "relay"}`, 400, "SCENARIO", `case-sensitive`},
		{"field twice", `{"ranks": 4, "ranks": 5}`, 400, "ranks", `given twice`},
		{"unknown field", `{"rank": 4}`, 400, "rank", `unknown field "rank"`},
		{"wrong type", `{"ranks": "four"}`, 400, "ranks", `field "ranks": want int`},
		{"negative seed", `{"seed": -1}`, 400, "seed", `field "seed"`},
		{"bad size", `{"bytes": "64X"}`, 400, "bytes", `unknown suffix`},
		{"fractional bytes", `{"bytes": 1.5}`, 400, "bytes", `not a whole number`},
		{"unknown scenario", `{"scenario": "nope"}`, 400, "scenario", `unknown scenario "nope": known scenarios: `},
		{"ranks out of range", `{"ranks": 1}`, 400, "ranks", "invalid ranks 1: need 2..64"},
		{"queues out of range", `{"queues": 9}`, 400, "queues", "invalid queues 9"},
		{"scenario check", `{"scenario": "alltoall-split", "queues": 1}`, 400, "queues", "invalid queues 1"},
		{"unknown model", `{"model": "nope"}`, 400, "model", `"nope" is not a preset; the daemon takes preset names only: gfx1250, gfx950, mi355x, placeholder`},
		{"model file", `{"model": "/etc/passwd.json"}`, 400, "model", `the daemon takes preset names only`},
		{"cft trace", `{"scenario": "cft-allreduce", "bytes": 64, "trace": true}`, 400, "trace", `no SDMA queues`},
		{"perturb out of range", `{"perturb": 3}`, 400, "perturb", `field "perturb": 3: need 0..2`},
		{"unknown strategy", `{"strategy": "dfs"}`, 400, "strategy", `want random or pct`},
		{"bad faults", `{"faults": "melt"}`, 400, "faults", `unknown fault "melt"`},
		{"cft faults", `{"scenario": "cft-allreduce", "bytes": 64, "faults": "seed"}`, 400, "faults", `SDMA faults`},
		{"oversized", `{"scenario": "` + strings.Repeat("x", 5000) + `"}`, 413, "", "over the limit of 4KiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := d.do("POST", "/runs", tc.body)
			assert.Equal(t, tc.status, status, body)
			var e struct{ Error, Field string }
			require.NoError(t, json.Unmarshal([]byte(body), &e), body)
			assert.Contains(t, e.Error, tc.msg)
			assert.Equal(t, tc.field, e.Field)
		})
	}
	status, body := d.do("GET", "/runs", "")
	assert.Equal(t, http.StatusOK, status)
	assert.JSONEq(t, `{"runs": []}`, body, "no bad request made a run")
	status, _ = d.do("DELETE", "/runs", "")
	assert.Equal(t, http.StatusMethodNotAllowed, status)
}

// SIGINT/SIGTERM while a run executes: no new runs are taken, the run in
// flight finishes and is reported, then the daemon exits cleanly.
func TestServeShutdownWaitsForRunInFlight(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	withScenario(t, &scenario.Scenario{Name: "test-blocks", Run: func(o scenario.Options) (*scenario.Outcome, error) {
		close(started)
		<-release
		return &scenario.Outcome{Model: "placeholder", Seed: o.Seed, Digest: "d"}, nil
	}})
	d := startDaemon(t, func(c *Config) { c.MaxRuns = 1 })
	id := d.submit(`{"scenario": "test-blocks"}`)
	queued := d.submit(`{"scenario": "alltoall", "ranks": 2, "bytes": 8}`)
	<-started
	d.cancel() // what SIGINT does through signal.NotifyContext

	// Draining: the API still answers, but takes no runs.
	require.Eventually(t, func() bool {
		status, _ := d.do("POST", "/runs", `{}`)
		return status == http.StatusServiceUnavailable
	}, 10*time.Second, 10*time.Millisecond)
	r := d.wait(queued)
	assert.Equal(t, statusCanceled, r.Status, "queued runs are canceled")
	status, body := d.do("GET", "/runs/"+id, "")
	require.Equal(t, http.StatusOK, status)
	assert.Contains(t, body, `"status": "running"`)
	select {
	case err := <-d.done:
		t.Fatalf("the daemon stopped with a run in flight: %v", err)
	case <-time.After(100 * time.Millisecond):
	}

	close(release)
	select {
	case err := <-d.done:
		require.NoError(t, err)
		d.done <- nil // for the cleanup
	case <-time.After(30 * time.Second):
		t.Fatal("the daemon did not stop after its run finished")
	}
	log := d.log.String()
	assert.Contains(t, log, fmt.Sprintf("run %s: test-blocks seed 1: ok", id))
	assert.Contains(t, log, "shutting down: 1 runs in flight")
	assert.Contains(t, log, "emud serve: stopped")
}

// Old finished runs make room for new ones beyond --keep.
func TestServeKeepsTheNewestRuns(t *testing.T) {
	d := startDaemon(t, func(c *Config) { c.Keep = 2 })
	var ids []string
	for seed := range 3 {
		id := d.submit(fmt.Sprintf(`{"ranks": 2, "bytes": 8, "seed": %d}`, seed+1))
		d.wait(id)
		ids = append(ids, id)
	}
	status, _ := d.do("GET", "/runs/"+ids[0], "")
	assert.Equal(t, http.StatusNotFound, status)
	for _, id := range ids[1:] {
		status, _ := d.do("GET", "/runs/"+id, "")
		assert.Equal(t, http.StatusOK, status)
	}
}

// A finished run keeps its report, not its node: the retained heap per run
// stays in kilobytes where the run itself takes megabytes (its metrics
// registry alone: 16 ranks × 8 queue ids is 2048 queues).
func TestServeFinishedRunsKeepOnlyTheirReports(t *testing.T) {
	d := startDaemon(t, nil)
	heap := func() uint64 {
		runtime.GC()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	warm := d.submit(`{"ranks": 16, "bytes": 64, "queues": 8}`)
	require.Equal(t, scenario.StatusOK, d.wait(warm).Status)
	before := heap()
	const n = 8
	for range n {
		require.Equal(t, scenario.StatusOK, d.wait(d.submit(`{"ranks": 16, "bytes": 64, "queues": 8}`)).Status)
	}
	after := heap()
	per := (int64(after) - int64(before)) / n
	assert.Less(t, per, int64(256<<10), "each finished run retains %d B of heap", per)
}

// After a big run the daemon hands the freed heap back to the system at
// once: left to the scavenger, a 64-rank run's rings (1 GiB of heap) stay
// resident for minutes (the 64-rank run POSTed 100 times reached 3 GB RSS;
// now about 50 MB).
func TestServeReturnsMemoryAfterABigRun(t *testing.T) {
	d := startDaemon(t, nil)
	body := `{"ranks": 32, "bytes": 64, "queues": 8}`
	require.GreaterOrEqual(t, scenario.Footprint(mustScenario(t, "alltoall"), scenario.Options{Ranks: 32, Bytes: 64, Queues: 8}).Bytes(), uint64(returnToOSAfter))
	require.Equal(t, scenario.StatusOK, d.wait(d.submit(body)).Status)
	runtime.GC() // the run's heap is free now, whoever freed it
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	kept := ms.HeapIdle - ms.HeapReleased // free heap still resident
	assert.Less(t, kept, uint64(64<<20), "%d MiB of freed heap kept resident", kept>>20)
}

// Traces are kept within --trace-budget, the oldest dropped first, and a
// dropped trace says why.
func TestServeTraceBudget(t *testing.T) {
	body := `{"ranks": 2, "bytes": 64, "trace": true, "seed": %d}`
	// One trace's size, to size the budget at about three of them.
	probe := startDaemon(t, nil)
	id := probe.submit(fmt.Sprintf(body, 1))
	probe.wait(id)
	_, tr := probe.do("GET", "/runs/"+id+"/trace", "")
	one := int64(len(tr))
	require.Greater(t, one, int64(1000))

	budget := 3*one + one/2
	d := startDaemon(t, func(c *Config) { c.TraceBudget = budget; c.MaxRuns = 1 })
	var ids []string
	for seed := range 8 {
		ids = append(ids, d.submit(fmt.Sprintf(body, seed+1)))
	}
	for _, id := range ids {
		require.Equal(t, scenario.StatusOK, d.wait(id).Status)
	}
	kept := int64(0)
	for i, id := range ids {
		status, b := d.do("GET", "/runs/"+id+"/trace", "")
		if i >= len(ids)-3 {
			require.Equal(t, http.StatusOK, status, "the newest traces are kept: %s", b)
			kept += int64(len(b))
			continue
		}
		require.Equal(t, http.StatusGone, status, b)
		assert.Contains(t, b, "within --trace-budget")
	}
	assert.LessOrEqual(t, kept, budget)

	small := startDaemon(t, func(c *Config) { c.TraceBudget = 100 })
	id = small.submit(fmt.Sprintf(body, 1))
	r := small.wait(id)
	require.Equal(t, scenario.StatusOK, r.Status)
	status, b := small.do("GET", "/runs/"+id+"/trace", "")
	assert.Equal(t, http.StatusGone, status)
	assert.Contains(t, b, "larger than --trace-budget 100")
}

// A client that stalls in the middle of its upload is cut off after
// --read-timeout instead of holding the connection forever.
func TestServeCutsOffStalledUploads(t *testing.T) {
	d := startDaemon(t, func(c *Config) { c.ReadTimeout = 200 * time.Millisecond })
	conn, err := net.Dial("tcp", strings.TrimPrefix(d.url, "http://"))
	require.NoError(t, err)
	defer conn.Close()
	_, err = io.WriteString(conn, "POST /runs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"ranks\": ")
	require.NoError(t, err)
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	start := time.Now()
	resp, err := io.ReadAll(conn) // returns when the daemon closes the connection
	require.NoError(t, err, "the daemon did not close the stalled connection")
	assert.Less(t, time.Since(start), 5*time.Second)
	// The client is told why, in a 408 naming the flag, not a 400 with
	// a socket error.
	assert.Contains(t, string(resp), "HTTP/1.1 408 ")
	assert.Contains(t, string(resp), "did not arrive within the daemon's --read-timeout 200ms")
	assert.NotContains(t, string(resp), "i/o timeout")
}

// With --mem-budget 0 (no budget) a request the machine's memory cannot
// hold is refused naming that memory, and the daemon keeps serving.
func TestServeNoBudgetStillFitsTheMachine(t *testing.T) {
	d := startDaemon(t, func(c *Config) { c.MemBudget = 0 })
	status, body := d.do("POST", "/runs", `{"scenario": "alltoall", "ranks": 64, "bytes": "256M"}`) // 2 TiB of windows
	assert.Equal(t, http.StatusUnprocessableEntity, status, body)
	assert.Contains(t, body, "of physical memory (--mem-budget 0 sets no budget")
	assert.Contains(t, body, `"field": "bytes"`)
	r := d.wait(d.submit(`{"ranks": 2, "bytes": 64}`))
	assert.Equal(t, scenario.StatusOK, r.Status, "the daemon still serves")
}

// Budget refusals name the field at fault and only advice that applies.
func TestServeBudgetAdvice(t *testing.T) {
	d := startDaemon(t, func(c *Config) { c.MemBudget = 64 << 20 })
	status, body := d.do("POST", "/runs", `{"scenario": "cft-allreduce", "ranks": 4096, "bytes": 16, "phantom": true}`)
	assert.Equal(t, http.StatusUnprocessableEntity, status, body)
	assert.Contains(t, body, `"field": "ranks"`, "the rank count is the cause, not bytes")
	assert.NotContains(t, body, `phantom\": true`, "an already-phantom request is not told to send phantom")
	status, body = d.do("POST", "/runs", `{"scenario": "cft-allreduce", "ranks": 8, "mc_size": 3}`)
	assert.Equal(t, http.StatusBadRequest, status, body)
	assert.Contains(t, body, `"field": "mc_size"`)
}

// Runs still in flight when --shutdown-timeout expires make serve fail:
// the exit status must not say all went well.
func TestServeShutdownTimeoutIsAnError(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	withScenario(t, &scenario.Scenario{Name: "test-stuck", Run: func(o scenario.Options) (*scenario.Outcome, error) {
		close(started)
		<-release
		return &scenario.Outcome{Model: "placeholder", Seed: o.Seed, Digest: "d"}, nil
	}})
	defer close(release)
	cfg := DefaultConfig()
	cfg.Addr, cfg.ShutdownTimeout = "127.0.0.1:0", 50*time.Millisecond
	ln, err := net.Listen("tcp", cfg.Addr)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	log := &syncBuffer{}
	go func() { done <- Serve(ctx, cfg, ln, log) }()
	status, body := (&daemonUnderTest{t: t, url: "http://" + ln.Addr().String()}).do("POST", "/runs", `{"scenario": "test-stuck"}`)
	require.Equal(t, http.StatusAccepted, status, body)
	<-started
	cancel()
	select {
	case err := <-done:
		require.Error(t, err)
		assert.Contains(t, err.Error(), "gave up waiting for 1 runs in flight after --shutdown-timeout 50ms")
		var ee *scenario.ExitError
		assert.False(t, errors.As(err, &ee), "a plain error: exit status 1")
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not return")
	}
	http.DefaultClient.CloseIdleConnections()
}

// Any body gets an answer: a run, or a 4xx naming what is wrong; never a
// panic.
func FuzzDecodeRequest(f *testing.F) {
	for _, s := range []string{`{}`, `{"scenario":"relay","bytes":"4K"}`, `{"ranks":-1}`, `{"bytes":"1.5M"}`, `[`, `{"seed":1e3}`, `{"trace":true,"model":""}`,
		`null`, `{"Ranks":4}`, `{"ranks":4,"ranks":5}`, `{"scenario":"cft-allreduce","ranks":1024,"bytes":"64M","phantom":true,"mc_size":8}`,
		`{"scenario":"cft-alltoall","lsa_size":3}`, `{"bytes":"64M","ranks":64}`} {
		f.Add(s)
	}
	d := newDaemon(DefaultConfig(), io.Discard)
	d.cfg.MaxBody = 512
	f.Fuzz(func(t *testing.T, body string) {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("POST", "/runs", strings.NewReader(body))
		_, sc, o, rerr := d.decodeRequest(rec, req)
		if rerr != nil {
			assert.Contains(t, []int{http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity}, rerr.status)
			assert.NotEmpty(t, rerr.msg)
			return
		}
		require.NotNil(t, sc)
		assert.NoError(t, o.Validate(sc))
	})
}

// The daemon refuses a run over its budget with 422 naming the estimate
// and the budget, and runs the same request in phantom mode.
func TestServeMemBudget(t *testing.T) {
	d := startDaemon(t, func(c *Config) { c.MaxBody, c.MemBudget = 4096, 64<<20 })
	status, body := d.do("POST", "/runs", `{"ranks": 8, "bytes": "1M"}`)
	assert.Equal(t, http.StatusUnprocessableEntity, status, body)
	assert.Contains(t, body, "alltoall with ranks 8 and bytes 1MiB needs an estimated")
	assert.Contains(t, body, "over the daemon's --mem-budget 64.0MiB")
	assert.Contains(t, body, `\"phantom\": true`)
	r := d.wait(d.submit(`{"ranks": 8, "bytes": "1M", "phantom": true}`))
	require.Equal(t, scenario.StatusOK, r.Status)
	assert.True(t, r.Report.Summary.Phantom, "the report says the run was phantom")
}

// serve --phantom makes runs phantom unless a request says otherwise.
func TestServePhantomDefault(t *testing.T) {
	d := startDaemon(t, func(c *Config) { c.Phantom = true })
	r := d.wait(d.submit(`{"ranks": 2, "bytes": 64}`))
	require.Equal(t, scenario.StatusOK, r.Status)
	assert.True(t, r.Report.Summary.Phantom)
	r = d.wait(d.submit(`{"ranks": 2, "bytes": 64, "phantom": false}`))
	require.Equal(t, scenario.StatusOK, r.Status)
	assert.False(t, r.Report.Summary.Phantom)
}
