package cco_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/race"
)

// raceReports runs the rig and returns the race reports its run ended with
// (none if it ended without a *race.Error).
func raceReports(t *testing.T, r *rig) []race.Report {
	t.Helper()
	err := r.s.Run()
	if err == nil {
		return nil
	}
	var re *race.Error
	require.ErrorAs(t, err, &re)
	return re.Reports
}

// find returns the first report with one side by kind k1 doing op1 and the
// other by k2 doing op2 (op matched as a substring), in either order.
func find(rs []race.Report, k1, op1, k2, op2 string) *race.Report {
	match := func(s race.Side, k, op string) bool {
		return s.Kind == k && bytes.Contains([]byte(s.Op), []byte(op))
	}
	for i := range rs {
		a, b := rs[i].First, rs[i].Second
		if match(a, k1, op1) && match(b, k2, op2) || match(a, k2, op2) && match(b, k1, op1) {
			return &rs[i]
		}
	}
	return nil
}

func TestRaceSourceReuseBeforeQuiet(t *testing.T) {
	const n = 64 << 10
	for _, tc := range []struct {
		name  string
		quiet bool // quiet before the overwrite: correct
	}{{"overwrite before quiet", false}, {"quiet then overwrite", true}} {
		t.Run(tc.name, func(t *testing.T) {
			for seed := uint64(1); seed <= 5; seed++ {
				r := newRig(t, seed, rigOpts{ranks: 2, race: true})
				r.fillBytes(r.send[0], 0, patterned(1, n))
				r.launch(0, 1, 1, func(th *kernel.Thread, sdma *cco.Sdma) {
					m := cco.NewMem(th, sdma.DevComm())
					sdma.Put(1, r.recv[0], 0, r.send[0], 0, n, 0, cco.RemoteSignal)
					if tc.quiet {
						sdma.Quiet(1)
					}
					m.Fill(r.send[0].LocalPtr(0), n, 0xff) // reuse the send buffer
					sdma.Quiet(1)
				})
				r.launch(1, 1, 1, func(th *kernel.Thread, sdma *cco.Sdma) {
					sdma.WaitSignal(0, 0, 1)
					cco.NewMem(th, sdma.DevComm()).Read(r.recv[1].LocalPtr(0), make([]byte, n))
				})
				rs := raceReports(t, r)
				if tc.quiet {
					assert.Empty(t, rs, "seed %d", seed)
					continue
				}
				rep := find(rs, "sdma", "COPY source read", "lane", "fill")
				require.NotNil(t, rep, "seed %d: %v", seed, rs)
				assert.Contains(t, rep.String(), "sdma gpu0→gpu1 q0")
				assert.Contains(t, rep.String(), "kernel \"rank0\" GPU 0 block 0 wave 0 lane 0")
				assert.Contains(t, rep.String(), "cco/race_test.go:")
				if rep.First.Kind == "sdma" {
					assert.Contains(t, rep.Missing, "did not quiet or quietQueue sdma gpu0→gpu1 q0")
				}
			}
		})
	}
}

func TestRaceReadBeforeWaitSignal(t *testing.T) {
	const n = 4 << 10
	for _, early := range []bool{true, false} {
		t.Run(fmt.Sprintf("early=%v", early), func(t *testing.T) {
			for seed := uint64(1); seed <= 5; seed++ {
				r := newRig(t, seed, rigOpts{ranks: 2, race: true})
				r.launch(0, 1, 1, func(_ *kernel.Thread, sdma *cco.Sdma) {
					sdma.Put(1, r.recv[0], 0, r.send[0], 0, n, 0, cco.RemoteSignal)
					sdma.Quiet(1)
				})
				r.launch(1, 1, 1, func(th *kernel.Thread, sdma *cco.Sdma) {
					m := cco.NewMem(th, sdma.DevComm())
					if early {
						m.Read(r.recv[1].LocalPtr(0), make([]byte, n))
					}
					sdma.WaitSignal(0, 0, 1)
					m.Read(r.recv[1].LocalPtr(0), make([]byte, n))
				})
				rs := raceReports(t, r)
				if !early {
					assert.Empty(t, rs, "seed %d", seed)
					continue
				}
				assert.NotNil(t, find(rs, "sdma", "COPY destination write", "lane", "load"), "seed %d: %v", seed, rs)
			}
		})
	}
}

// The payload goes on queue 0, the signal on queue 1: the detector proves
// the missing order at every size and seed, whether or not the data was
// stale in that run. With the signal on the payload's queue it finds
// nothing.
func TestRaceSignalOnOtherQueueEverySize(t *testing.T) {
	sizes := []uint64{64, 256, 1 << 10, 4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20}
	seedsN := uint64(seeds)
	if testing.Short() {
		seedsN = 3
	}
	for _, wrong := range []bool{true, false} {
		for _, n := range sizes {
			t.Run(fmt.Sprintf("wrong=%v/%d", wrong, n), func(t *testing.T) {
				for seed := uint64(1); seed <= seedsN; seed++ {
					r := newRig(t, seed, rigOpts{ranks: 2, queues: 2, winBytes: 4<<20 + 4096, race: true})
					sigQ := 0
					if wrong {
						sigQ = 1
					}
					r.launch(0, 1, 1, func(_ *kernel.Thread, sdma *cco.Sdma) {
						sdma.Put(1, r.recv[0], 0, r.send[0], 0, n, 0)
						sdma.Put(1, r.recv[0], n, r.send[0], n, 8, sigQ, cco.RemoteSignal)
						sdma.Quiet(1)
					})
					r.launch(1, 1, 1, func(th *kernel.Thread, sdma *cco.Sdma) {
						sdma.WaitSignal(0, sigQ, 1)
						cco.NewMem(th, sdma.DevComm()).Read(r.recv[1].LocalPtr(0), make([]byte, n+8))
					})
					rs := raceReports(t, r)
					if !wrong {
						require.Empty(t, rs, "seed %d", seed)
						continue
					}
					rep := find(rs, "sdma", "COPY destination write", "lane", "load")
					require.NotNil(t, rep, "size %d seed %d: %v", n, seed, rs)
					assert.Contains(t, rep.String(), "sdma gpu0→gpu1 q0")
				}
			})
		}
	}
}

// Rank 1 stores through an LSA peer pointer into rank 0's send buffer
// while rank 0's COPY reads it.
func TestRaceStoreIntoInFlightSource(t *testing.T) {
	const n = 1 << 20
	r := newRig(t, 3, rigOpts{ranks: 2, winBytes: n, race: true})
	r.launch(0, 1, 1, func(_ *kernel.Thread, sdma *cco.Sdma) {
		sdma.Put(1, r.recv[0], 0, r.send[0], 0, n, 0)
		sdma.Quiet(1)
	})
	r.launch(1, 1, 1, func(th *kernel.Thread, sdma *cco.Sdma) {
		cco.NewMem(th, sdma.DevComm()).Store64(r.send[0].LsaPtr(0, n-64), 42)
	})
	rs := raceReports(t, r)
	rep := find(rs, "sdma", "COPY source read", "lane", "store64")
	require.NotNil(t, rep, "%v", rs)
	assert.Contains(t, rep.String(), "GPU 1 block 0")
}

// A load made mid-copy sees torn data: the first chunks of the 1 MiB copy
// have landed, the rest is old. The detector reports that load.
func TestRaceTornLoadMidCopy(t *testing.T) {
	const n = 1 << 20
	r := newRig(t, 1, rigOpts{ranks: 2, queues: 2, winBytes: n + 4096, race: true})
	r.fillBytes(r.send[0], 0, bytes.Repeat([]byte{0x5a}, n))
	seen := make([]byte, n)
	r.launch(0, 1, 1, func(_ *kernel.Thread, sdma *cco.Sdma) {
		sdma.Put(1, r.recv[0], 0, r.send[0], 0, n, 0)
		sdma.Put(1, r.recv[0], n, r.send[0], n, 8, 1, cco.RemoteSignal)
		sdma.Quiet(1)
	})
	r.launch(1, 1, 1, func(th *kernel.Thread, sdma *cco.Sdma) {
		sdma.WaitSignal(0, 1, 1)
		cco.NewMem(th, sdma.DevComm()).Read(r.recv[1].LocalPtr(0), seen)
	})
	rs := raceReports(t, r)
	landed := bytes.Count(seen, []byte{0x5a})
	assert.Greater(t, landed, 0, "some chunks had landed")
	assert.Less(t, landed, n, "some had not: torn")
	assert.Equal(t, bytes.Repeat([]byte{0x5a}, landed), seen[:landed], "in address order")
	require.NotNil(t, find(rs, "sdma", "COPY destination write", "lane", "load"), "%v", rs)
}

// A flag written by a COPY after the data, on the data's queue, polled
// with an acquire load: the queue's in-order execution is not a memory
// ordering for COPY writes, so the poll races the flag's COPY and the
// report says why (issue 37's "debatable" case, decided from AMD's
// drivers); the same program with the ccoSdma contract's signal (an ATOMIC
// after the data, waited for) is quiet.
func TestRaceCopyFlagIsNotASignal(t *testing.T) {
	const n = 4 << 10
	for _, signal := range []bool{false, true} {
		t.Run(fmt.Sprintf("signal=%v", signal), func(t *testing.T) {
			for seed := uint64(1); seed <= 5; seed++ {
				r := newRig(t, seed, rigOpts{ranks: 2, race: true})
				r.fillBytes(r.send[0], n, []byte{1, 0, 0, 0, 0, 0, 0, 0})
				r.launch(0, 1, 1, func(_ *kernel.Thread, sdma *cco.Sdma) {
					if signal {
						sdma.Put(1, r.recv[0], 0, r.send[0], 0, n, 0, cco.RemoteSignal)
					} else {
						sdma.Put(1, r.recv[0], 0, r.send[0], 0, n, 0)
						sdma.Put(1, r.recv[0], n, r.send[0], n, 8, 0) // the flag, after the data, same queue
					}
					sdma.Quiet(1)
				})
				r.launch(1, 1, 1, func(th *kernel.Thread, sdma *cco.Sdma) {
					m := cco.NewMem(th, sdma.DevComm())
					if signal {
						sdma.WaitSignal(0, 0, 1)
					} else {
						for m.LoadAcquire32(r.recv[1].LocalPtr(n)) == 0 {
							kernel.Converge(th, &kernel.Call[kernel.None]{Name: "backoff", Run: func(g *kernel.Active, _ []kernel.None) error { g.Actor().Sleep(100); return nil }}, kernel.None{})
						}
					}
					m.Read(r.recv[1].LocalPtr(0), make([]byte, n))
				})
				rs := raceReports(t, r)
				if signal {
					assert.Empty(t, rs, "seed %d", seed)
					continue
				}
				rep := find(rs, "sdma", "COPY destination write", "lane", "loadAcquire32")
				require.NotNil(t, rep, "seed %d: %v", seed, rs)
				assert.Contains(t, rep.Missing, "a COPY is not a signal")
				assert.Contains(t, rep.Missing, "may overlap serial COPY and WRITE packets")
			}
		})
	}
}
