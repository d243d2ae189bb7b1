package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/scenario"
	"github.com/emud-dev/emud/sim"
)

// raw sends a request with exactly the headers given (no token, no
// Content-Type unless listed) and returns the status and body.
func (d *daemonUnderTest) raw(method, path, body string, headers map[string]string) (int, string) {
	d.t.Helper()
	req, err := http.NewRequest(method, d.url+path, strings.NewReader(body))
	require.NoError(d.t, err)
	for k, v := range headers {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(d.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(d.t, err)
	return resp.StatusCode, string(b)
}

// A web page cannot start runs: a browser sends a cross-site POST without
// asking only as text/plain or a form, and a name rebound to 127.0.0.1
// arrives with that name in Host. Before, both started runs.
func TestServeRefusesBrowserRequests(t *testing.T) {
	d := startDaemon(t, nil)
	const body = `{"ranks": 2, "bytes": 64}`
	for _, tc := range []struct {
		name    string
		headers map[string]string
		status  int
		msg     string
	}{
		{"text/plain POST", map[string]string{"Content-Type": "text/plain"}, http.StatusUnsupportedMediaType, "send the request as application/json"},
		{"form POST", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, http.StatusUnsupportedMediaType, "application/json"},
		{"no Content-Type", nil, http.StatusUnsupportedMediaType, "application/json"},
		{"rebound name", map[string]string{"Content-Type": "application/json", "Host": "attacker.example:8080"}, http.StatusForbidden, `Host \"attacker.example:8080\" is not this daemon's`},
		{"rebound name, GET", map[string]string{"Host": "attacker.example"}, http.StatusForbidden, "is not this daemon's"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			method, path := "POST", "/runs"
			if strings.HasSuffix(tc.name, "GET") {
				method = "GET"
			}
			status, resp := d.raw(method, path, body, tc.headers)
			assert.Equal(t, tc.status, status, resp)
			assert.Contains(t, resp, tc.msg)
		})
	}
	for _, host := range []string{"localhost:1", "127.0.0.1:1", "[::1]:1"} {
		status, resp := d.raw("POST", "/runs", body, map[string]string{"Content-Type": "application/json; charset=utf-8", "Host": host})
		assert.Equal(t, http.StatusAccepted, status, "Host %s: %s", host, resp)
	}
	status, resp := d.raw("GET", "/runs", "", nil)
	require.Equal(t, http.StatusOK, status)
	var list struct{ Runs []runListing }
	require.NoError(t, json.Unmarshal([]byte(resp), &list))
	assert.Len(t, list.Runs, 3, "only the three proper requests made runs")
	assert.Contains(t, d.log.String(), "(loopback only, no token", "the start-up line says who may submit")
}

// With --token-file every request but /healthz needs the token.
func TestServeToken(t *testing.T) {
	d := startDaemon(t, func(c *Config) { c.Token = "s3cret"; c.AllowHosts = []string{"emud.example.org"} })
	for _, tc := range []struct {
		name, auth string
		status     int
	}{
		{"none", "", http.StatusUnauthorized},
		{"wrong", "Bearer nope", http.StatusUnauthorized},
		{"basic", "Basic czNjcmV0", http.StatusUnauthorized},
		{"prefix of the token", "Bearer s3c", http.StatusUnauthorized},
		{"right", "Bearer s3cret", http.StatusAccepted},
		{"scheme in lower case", "bearer s3cret", http.StatusAccepted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := map[string]string{"Content-Type": "application/json"}
			if tc.auth != "" {
				h["Authorization"] = tc.auth
			}
			status, body := d.raw("POST", "/runs", `{"ranks": 2, "bytes": 64}`, h)
			assert.Equal(t, tc.status, status, body)
			if status == http.StatusUnauthorized {
				assert.Contains(t, body, "--token-file")
			}
		})
	}
	status, _ := d.raw("GET", "/metrics", "", nil)
	assert.Equal(t, http.StatusUnauthorized, status, "metrics need the token too")
	status, _ = d.raw("GET", "/healthz", "", nil)
	assert.Equal(t, http.StatusOK, status, "health checks need none")
	status, body := d.raw("GET", "/runs", "", map[string]string{"Authorization": "Bearer s3cret", "Host": "emud.example.org:8080"})
	assert.Equal(t, http.StatusOK, status, "an --allow-host name: %s", body)
	assert.Contains(t, d.log.String(), "needs \"Authorization: Bearer\"")
}

// The daemon listens on loopback unless given a token: on any other
// address, anyone who reaches it could start runs.
func TestServeConfigRefusesOpenAddressWithoutToken(t *testing.T) {
	for _, tc := range []struct {
		addr, token, err string
	}{
		{"0.0.0.0:8080", "", "not a loopback address, and no --token-file"},
		{":8080", "", "not a loopback address"},
		{"10.1.2.3:8080", "", "not a loopback address"},
		{"0.0.0.0:8080", "t", ""},
		{"127.0.0.1:8080", "", ""},
		{"[::1]:8080", "", ""},
		{"localhost:8080", "", ""},
	} {
		t.Run(tc.addr+"/"+tc.token, func(t *testing.T) {
			c := DefaultConfig()
			c.Addr, c.Token = tc.addr, tc.token
			err := c.Validate()
			if tc.err == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.err)
		})
	}
	c := DefaultConfig()
	c.AllowHosts = []string{"x.org:80"}
	assert.ErrorContains(t, c.Validate(), "invalid --allow-host")
}

// A --mem-budget over the machine's memory is refused: it admitted a
// 2 TiB request, and the daemon died running it.
func TestServeConfigRefusesBudgetOverTheMachine(t *testing.T) {
	lim := scenario.MachineMemory()
	if lim.Bytes == 0 {
		t.Skip("the machine's memory cannot be read")
	}
	c := DefaultConfig()
	c.MemBudget = lim.Bytes + 1<<30
	err := c.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "invalid --mem-budget")
	c.MemBudget = lim.Bytes / 2
	assert.NoError(t, c.Validate())
	assert.LessOrEqual(t, DefaultConfig().MemBudget, lim.Bytes/4, "the default is a quarter of what the process may use")
}

// forever registers an SDMA scenario whose run never ends on its own (a
// lane sleeping in a loop: each sleep is progress, so no watchdog) and
// returns a channel closed when a run has started.
func forever(t *testing.T) <-chan struct{} {
	started := make(chan struct{})
	var once sync.Once
	withScenario(t, &scenario.Scenario{Name: "test-forever", Run: func(o scenario.Options) (*scenario.Outcome, error) {
		env, err := scenario.NewEnv(o)
		if err != nil {
			return nil, err
		}
		defer env.Job.Close()
		env.Job.Sim.Spawn("sleeper", func(a *sim.Actor) {
			once.Do(func() { close(started) })
			for {
				a.Sleep(1)
			}
		})
		return nil, env.Job.Run()
	}})
	return started
}

// DELETE /runs/{id} cancels a queued run at once and interrupts a running
// one; before, there was no way to stop a run but to stop the daemon.
func TestServeCancel(t *testing.T) {
	started := forever(t)
	d := startDaemon(t, func(c *Config) { c.MaxRuns = 1 })
	running := d.submit(`{"scenario": "test-forever", "ranks": 2, "bytes": 64}`)
	queued := d.submit(`{"ranks": 2, "bytes": 64}`)
	<-started

	status, body := d.do("DELETE", "/runs/"+queued, "")
	assert.Equal(t, http.StatusAccepted, status, body)
	assert.Equal(t, statusCanceled, d.wait(queued).Status)

	status, body = d.do("DELETE", "/runs/"+running, "")
	assert.Equal(t, http.StatusAccepted, status, body)
	r := d.wait(running)
	assert.Equal(t, statusCanceled, r.Status)
	require.NotNil(t, r.Report)
	assert.Contains(t, r.Report.Error, "canceled by DELETE")

	status, body = d.do("DELETE", "/runs/"+running, "")
	assert.Equal(t, http.StatusConflict, status)
	assert.Contains(t, body, "has finished (canceled)")
	ok := d.submit(`{"ranks": 2, "bytes": 64}`)
	assert.Equal(t, scenario.StatusOK, d.wait(ok).Status, "the slot is free again")
}

// Runs take their slots in the order they were submitted. Before, each
// run's goroutine raced for the slot: a run could start before one queued
// ahead of it (and TestServeCancel's queued run sometimes ran before the
// one it was queued behind).
func TestServeRunsInSubmissionOrder(t *testing.T) {
	started := forever(t)
	d := startDaemon(t, func(c *Config) { c.MaxRuns = 1 })
	blocker := d.submit(`{"scenario": "test-forever", "ranks": 2, "bytes": 64}`)
	<-started
	// The goroutines of runs submitted later reach the slot sooner.
	var n atomic.Int32
	beforeSlot = func(string) { time.Sleep(time.Duration(8-n.Add(1)) * 15 * time.Millisecond) }
	t.Cleanup(func() { beforeSlot = nil })
	var ids []string
	for range 8 {
		ids = append(ids, d.submit(`{"ranks": 2, "bytes": 64}`))
	}
	// Every run is waiting for the slot before the blocker lets go.
	require.Eventually(t, func() bool {
		_, body := d.do("GET", "/metrics", "")
		return strings.Contains(body, "emud_runs_queued 8")
	}, 10*time.Second, 10*time.Millisecond)
	status, body := d.do("DELETE", "/runs/"+blocker, "")
	require.Equal(t, http.StatusAccepted, status, body)
	var last time.Time
	for i, id := range ids {
		r := d.wait(id)
		require.Equal(t, scenario.StatusOK, r.Status, id)
		require.NotNil(t, r.Started, id)
		assert.False(t, r.Started.Before(last), "run %d (%s) started at %v, before the run submitted ahead of it (%v)", i, id, *r.Started, last)
		last = *r.Started
	}
}

// A run canceled while runs ahead of it wait keeps its place in the order:
// the run behind it does not overtake them. The first queued run's
// goroutine reaches its turn late (beforeSlot), after the run behind it is
// canceled and the slot frees: a canceled run that passed its turn on at
// once let the last run take the slot first.
func TestServeCancelKeepsTheOrder(t *testing.T) {
	started := forever(t)
	d := startDaemon(t, func(c *Config) { c.MaxRuns = 1 })
	blocker := d.submit(`{"scenario": "test-forever", "ranks": 2, "bytes": 64}`)
	<-started
	var slow atomic.Value // the first queued run's id
	slow.Store("")
	beforeSlot = func(id string) {
		if id == slow.Load().(string) {
			time.Sleep(300 * time.Millisecond)
		}
	}
	t.Cleanup(func() { beforeSlot = nil })
	i := strings.LastIndex(blocker, "-")
	n, err := strconv.Atoi(blocker[i+1:])
	require.NoError(t, err, blocker)
	first := blocker[:i+1] + strconv.Itoa(n+1) // ids are BOOT-N
	slow.Store(first)
	require.Equal(t, first, d.submit(`{"ranks": 2, "bytes": 64}`))
	gone := d.submit(`{"ranks": 2, "bytes": 64}`)
	last := d.submit(`{"ranks": 2, "bytes": 64}`)
	status, body := d.do("DELETE", "/runs/"+gone, "")
	require.Equal(t, http.StatusAccepted, status, body)
	assert.Equal(t, statusCanceled, d.wait(gone).Status)
	status, body = d.do("DELETE", "/runs/"+blocker, "")
	require.Equal(t, http.StatusAccepted, status, body)
	a, b := d.wait(first), d.wait(last)
	require.Equal(t, scenario.StatusOK, a.Status)
	require.Equal(t, scenario.StatusOK, b.Status)
	assert.False(t, b.Started.Before(*a.Started), "the run behind a canceled one started first")
}

// A restarted daemon never hands out an id it gave before, and says why
// an old one is gone; before, ids restarted at 1 and an old id named
// another run, with a 404 that blamed --keep.
func TestServeIDsSurviveARestart(t *testing.T) {
	first := startDaemon(t, nil)
	old := first.submit(`{"ranks": 2, "bytes": 64}`)
	first.wait(old)
	second := startDaemon(t, nil)
	id := second.submit(`{"ranks": 2, "bytes": 64}`)
	assert.NotEqual(t, old, id)
	status, body := second.do("GET", "/runs/"+old, "")
	assert.Equal(t, http.StatusNotFound, status)
	assert.Contains(t, body, "made before this daemon started")
	assert.Contains(t, body, "do not survive a restart")
	status, body = second.do("GET", "/runs/1", "")
	assert.Equal(t, http.StatusNotFound, status)
	assert.Contains(t, body, "run ids look like")
}

// Finished records count against --mem-budget: the oldest go when new
// ones would not fit. Before, 200 requests carrying a 949 KB fault list
// held 1.15 GB whatever the budget.
func TestServeRecordsCountAgainstTheBudget(t *testing.T) {
	var items []string
	for i := range 12000 {
		items = append(items, fmt.Sprintf("drop-signal=0:1:0#%d", i+1000))
	}
	faults := strings.Join(items, ",") // about 250 KB
	const budget = 16 << 20
	d := startDaemon(t, func(c *Config) { c.MaxBody, c.MemBudget, c.MaxRuns = 1<<20, budget, 1 })
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	body := fmt.Sprintf(`{"ranks": 2, "bytes": 64, "faults": %q}`, faults)
	d.wait(d.submit(body))
	before := heap()
	const n = 60 // 60 × 250 KB of faults text alone is 15 MB, twice more in the reports
	var ids []string
	for range n {
		id := d.submit(body)
		d.wait(id)
		ids = append(ids, id)
	}
	grew := int64(heap()) - int64(before)
	assert.Less(t, grew, int64(budget), "the records hold %d MiB over a %d MiB budget", grew>>20, budget>>20)
	status, resp := d.do("GET", "/runs/"+ids[0], "")
	assert.Equal(t, http.StatusNotFound, status, "the oldest record made room")
	assert.Contains(t, resp, "within --mem-budget")
	last := d.wait(ids[n-1])
	assert.Equal(t, scenario.StatusOK, last.Status, "the newest record is whole")
}

// /metrics stays small however many runs of however many queues: the
// engine counters are summed over the runs' GPUs and queues.
func TestServeMetricsStayBounded(t *testing.T) {
	d := startDaemon(t, nil)
	for seed := range 2 {
		d.wait(d.submit(fmt.Sprintf(`{"ranks": 16, "bytes": 64, "queues": 8, "seed": %d}`, seed+1)))
	}
	status, body := d.do("GET", "/metrics", "")
	require.Equal(t, http.StatusOK, status)
	lines := strings.Count(body, "\n")
	assert.Less(t, lines, 400, "a scrape of %d lines, %d bytes", lines, len(body))
	assert.NotContains(t, body, `gpu="`)
	assert.Contains(t, body, `emud_sdma_packets_total{op="COPY_LINEAR"}`)
}

// SIGTERM while a client is still uploading: the drain ends cleanly, the
// upload cut off. Before, Serve waited 5 s for the connection and failed
// (exit status 1).
func TestServeDrainsWithAPendingUpload(t *testing.T) {
	d := startDaemon(t, nil)
	conn, err := net.Dial("tcp", strings.TrimPrefix(d.url, "http://"))
	require.NoError(t, err)
	defer conn.Close()
	_, err = io.WriteString(conn, "POST /runs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"ranks\": ")
	require.NoError(t, err)
	time.Sleep(50 * time.Millisecond) // the daemon is reading the body
	start := time.Now()
	d.cancel()
	select {
	case err := <-d.done:
		assert.NoError(t, err)
		d.done <- nil // for the cleanup
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not return")
	}
	assert.Less(t, time.Since(start), shutdownGrace+3*time.Second)
}

// A phantom run has no bytes for the race detector: the request is
// refused, naming the field, instead of running with the detector off
// and reporting ok.
func TestServeRefusesRaceOnPhantom(t *testing.T) {
	d := startDaemon(t, func(c *Config) { c.Phantom = true })
	status, body := d.do("POST", "/runs", `{"ranks": 2, "bytes": 64, "race": true}`)
	assert.Equal(t, http.StatusBadRequest, status, body)
	assert.Contains(t, body, `"field": "race"`)
	assert.Contains(t, body, "--phantom default")
	status, body = d.do("POST", "/runs", `{"ranks": 2, "bytes": 64, "race": true, "phantom": true}`)
	assert.Equal(t, http.StatusBadRequest, status, body)
	assert.Contains(t, body, `request's \"phantom\": true`)
	r := d.wait(d.submit(`{"ranks": 2, "bytes": 64, "race": true, "phantom": false}`))
	assert.Equal(t, scenario.StatusOK, r.Status)
}

// Any headers get through the guard only as its rules say, never a panic:
// the token when there is one, a Host naming the daemon, JSON for a POST.
func FuzzGuard(f *testing.F) {
	for _, s := range [][4]string{
		{"POST", "127.0.0.1:8080", "application/json", "Bearer t"},
		{"POST", "evil.example", "text/plain", ""},
		{"GET", "[::1]:80", "", "Bearer x"},
		{"DELETE", "localhost", "application/json; charset=utf-8", "Bearer t "},
		{"POST", "[", "application/json;;", "Bearer"},
		{"POST", "emud.example.org:1", "APPLICATION/JSON", "bearer t"},
	} {
		f.Add(s[0], s[1], s[2], s[3], true)
	}
	f.Fuzz(func(t *testing.T, method, host, ctype, auth string, withToken bool) {
		cfg := DefaultConfig()
		cfg.AllowHosts = []string{"emud.example.org"}
		if withToken {
			cfg.Token = "t"
		}
		d := newDaemon(cfg, io.Discard)
		passed := false
		h := d.guard(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { passed = true }))
		req, err := http.NewRequest(http.MethodGet, "http://127.0.0.1/runs", nil)
		require.NoError(t, err)
		req.Method, req.Host = method, host
		req.Header.Set("Content-Type", ctype)
		req.Header.Set("Authorization", auth)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if !passed {
			assert.Contains(t, []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusUnsupportedMediaType}, rec.Code)
			return
		}
		if withToken {
			scheme, tok, _ := strings.Cut(strings.TrimSpace(auth), " ")
			assert.True(t, strings.EqualFold(scheme, "bearer") && strings.TrimSpace(tok) == "t", "passed with Authorization %q", auth)
		}
		assert.True(t, d.hostAllowed(host))
		if method == http.MethodPost {
			assert.True(t, strings.HasPrefix(strings.ToLower(strings.TrimSpace(ctype)), "application/json"), "a POST passed as %q", ctype)
		}
	})
}

// A run waiting for the memory of the runs executing does not evict the
// records: only records in its way go.
func TestServeRecordsStayWhileRunsWaitForRuns(t *testing.T) {
	d := newDaemon(DefaultConfig(), io.Discard)
	d.memBudget = 100
	old := &run{ID: "r", Status: scenario.StatusOK, stored: 10}
	d.runs[old.ID], d.order = old, []string{old.ID}
	d.memCur, d.recBytes = 10+80, 10 // a record and a run of 80
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	assert.Error(t, d.acquireMem(ctx, 30), "30 more needs the running run's memory: it waits")
	assert.Contains(t, d.runs, "r", "and the record stays")
	d.mu.Lock()
	d.releaseMemLocked(80) // the run ends
	d.mu.Unlock()
	require.NoError(t, d.acquireMem(context.Background(), 95))
	assert.NotContains(t, d.runs, "r", "now the record is in the way: it goes")
	assert.Equal(t, int64(95), d.memCur)
	assert.Zero(t, d.recBytes)
}

// Every registered scenario, SDMA or fabric, takes Options.Stop: stopped
// before it starts, a run ends at its first event with the stop's error.
// This is what lets DELETE stop a running CFT or GIN run too.
func TestEveryScenarioTakesStop(t *testing.T) {
	for _, sc := range scenario.All() {
		if strings.HasPrefix(sc.Name, "test-") {
			continue
		}
		t.Run(sc.Name, func(t *testing.T) {
			o := scenario.Defaults(sc)
			if sc.Shape == nil {
				o.Ranks, o.Bytes = 2, 64
				if sc.Fabric {
					o.Ranks = 8
				}
			}
			if err := scenario.Admit(sc, o, 0); err != nil {
				o = scenario.Defaults(sc)
			}
			o.Stop = &sim.Stopper{}
			o.Stop.Stop(errCanceled)
			rep := scenario.RunOnce(sc, o)
			require.Error(t, rep.Err, "%s ran to the end (%s) with its Stop set", sc.Name, rep.Status)
			assert.ErrorIs(t, rep.Err, errCanceled)
		})
	}
}
