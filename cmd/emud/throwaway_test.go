package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/daemon"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/scenario"
)

// throwaway is a scenario written as a user would add one: rank 0 puts a
// block to rank 1 with a remote signal; rank 1 waits for want signals (the
// planted bug waits for 2: it hangs on every seed).
func throwaway(want uint64) func(scenario.Options) (*scenario.Outcome, error) {
	return func(o scenario.Options) (*scenario.Outcome, error) {
		e, err := scenario.NewEnv(o)
		if err != nil {
			return nil, err
		}
		send, recv, err := e.SendRecv(o.Bytes)
		if err != nil {
			return nil, err
		}
		err = e.LaunchAll(1, 1, func(r int, t *kernel.Thread, sdma *cco.Sdma) {
			if r == 0 {
				sdma.Put(1, recv[0], 0, send[0], o.Bytes, o.Bytes, 0, cco.RemoteSignal)
				sdma.Quiet(1)
			} else if r == 1 {
				sdma.WaitSignal(0, 0, want)
			}
			e.Done(r, t)
		})
		if err != nil {
			return nil, err
		}
		if err := e.Sim.Run(); err != nil {
			return nil, err
		}
		var c scenario.Checker
		from0 := func(r, p int) (int, int, bool) { return 0, 1, r == 1 && p == 0 }
		if err := e.CheckBlocks(&c, recv, 1, o.Bytes, from0, func(int, int) string { return "rank 1's block" }); err != nil {
			return nil, err
		}
		if err := c.Err("test-throwaway", o.Seed); err != nil {
			return nil, err
		}
		none := func(int) uint64 { return 0 }
		return e.Outcome(none, none), nil
	}
}

// A scenario registered by a test is seen by run (and its help), explore,
// hunt and the daemon: one registry behind every front end.
func TestThrowawayScenarioIsSeenEverywhere(t *testing.T) {
	withScenario(t, &scenario.Scenario{Name: "test-throwaway", Summary: "PLANTED BUG: waits for one signal too many",
		Planted: &scenario.Planted{Fixed: "test-throwaway-fixed", Class: "expected one too high", Source: "this test", Ranks: 2, Bytes: 64},
		Run:     throwaway(2)})
	withScenario(t, &scenario.Scenario{Name: "test-throwaway-fixed", Summary: "the throwaway's twin", Run: throwaway(1)})

	help, _, _ := execute(t, "run", "--help")
	assert.Contains(t, help, "test-throwaway")
	out, errOut, status := execute(t, "run", "test-throwaway-fixed", "--ranks", "2", "--bytes", "64")
	require.Equal(t, scenario.ExitOK, status, errOut)
	assert.True(t, strings.HasPrefix(out, "test-throwaway-fixed: 2 ranks"), out)

	_, errOut, status = execute(t, "explore", "test-throwaway", "--ranks", "2", "--bytes", "64", "--seeds", "2")
	assert.Equal(t, scenario.ExitHang, status, errOut)

	out, errOut, status = execute(t, "hunt", "test-throwaway", "--seeds", "2", "--strategies", "ties,pct")
	require.Equal(t, scenario.ExitOK, status, errOut)
	assert.Contains(t, out, "found 1 of 1 planted bugs within 2 seeds each")
	_, errOut, status = execute(t, "hunt", "test-throwaway", "--seeds", "2", "--fixed")
	assert.Equal(t, scenario.ExitOK, status, "the twin passes: %s", errOut)

	assert.Equal(t, "ok", daemonRun(t, `{"scenario": "test-throwaway-fixed", "ranks": 2, "bytes": 64}`))
	assert.Equal(t, "hang", daemonRun(t, `{"scenario": "test-throwaway", "ranks": 2, "bytes": 64}`))
}

// daemonRun submits body to a fresh daemon and returns the run's status.
func daemonRun(t *testing.T, body string) string {
	t.Helper()
	cfg := daemon.DefaultConfig()
	cfg.Addr = "127.0.0.1:0"
	ln, err := net.Listen("tcp", cfg.Addr)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- daemon.Serve(ctx, cfg, ln, io.Discard) }()
	defer func() { cancel(); require.NoError(t, <-done); http.DefaultClient.CloseIdleConnections() }()
	url := "http://" + ln.Addr().String()
	resp, err := http.Post(url+"/runs", "application/json", strings.NewReader(body))
	require.NoError(t, err)
	var sub struct{ URL string }
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&sub))
	resp.Body.Close()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		resp, err := http.Get(url + sub.URL)
		require.NoError(t, err)
		var r struct{ Status string }
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&r))
		resp.Body.Close()
		if r.Status != "queued" && r.Status != "running" {
			return r.Status
		}
	}
	t.Fatal("the daemon's run did not finish")
	return ""
}
