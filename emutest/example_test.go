package emutest_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/emutest"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/sim"
)

// exchange is a user's kernel under test: every rank sends 8 bytes to the
// next rank with a remote signal; the receiver waits for it. With sharedQ
// it has a bug: it sends in two puts on queue ids 0 and 1 but waits for
// both signals on queue id 0.
func exchange(seed uint64, sharedQ bool) error {
	const ranks = 4
	j, err := emutest.NewJob(seed, ranks)
	if err != nil {
		return err
	}
	buf, err := j.Window(64)
	if err != nil {
		return err
	}
	if err := j.CreateDevComms(2, false); err != nil {
		return err
	}
	for r := range ranks {
		if err := j.Write(buf[r], 0, []byte(fmt.Sprintf("rank %d!!", r))); err != nil {
			return err
		}
		next, prev := (r+1)%ranks, (r+ranks-1)%ranks
		if _, err := j.Launch(r, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
			if sharedQ {
				sdma.Put(next, buf[r], 32, buf[r], 0, 4, 0, cco.RemoteSignal)
				sdma.Put(next, buf[r], 36, buf[r], 4, 4, 1, cco.RemoteSignal)
				sdma.WaitSignal(prev, 0, 2) // bug: one count for two queues
				return
			}
			sdma.Put(next, buf[r], 32, buf[r], 0, 8, 0, cco.RemoteSignal)
			sdma.WaitSignal(prev, 0, 1)
		}); err != nil {
			return err
		}
	}
	if err := j.Run(); err != nil {
		return err
	}
	for r := range ranks {
		got, err := j.Read(buf[r], 32, 8)
		if err != nil {
			return err
		}
		if want := fmt.Sprintf("rank %d!!", (r+ranks-1)%ranks); !bytes.Equal(got, []byte(want)) {
			return fmt.Errorf("rank %d received %q, want %q", r, got, want)
		}
	}
	return nil
}

// In a test, Seeds runs the body under k seeds; a failing seed fails the
// test with its report and the command that reruns it.
func ExampleSeeds() {
	var t *testing.T // the test's own
	emutest.Seeds(t, 20, func(seed uint64) error { return exchange(seed, false) })
}

// Find is the search itself: the first failing seed and its report.
func ExampleFind() {
	fmt.Println("correct:", emutest.Find(10, func(seed uint64) error { return exchange(seed, false) }))
	f := emutest.Find(10, func(seed uint64) error { return exchange(seed, true) })
	fmt.Println("buggy: seed", f.Seed, "hangs:", f.Hang() != nil)
	fmt.Println(strings.Contains(f.Report(), "expected looks shared across queues"))
	// Output:
	// correct: <nil>
	// buggy: seed 1 hangs: true
	// true
}

// RateOf (Rate in a test) runs every seed and counts the failures by
// kind, with the first seed of each: how often a bug shows, not only
// whether.
func ExampleRateOf() {
	r := emutest.RateOf(10, func(seed uint64) error { return exchange(seed, true) })
	fmt.Println(r)
	fmt.Println("first hang: seed", r.Of(emutest.KindHang).First)
	// Output:
	// detected 10 of 10 seeds (100%): hang 10 (first seed 1)
	// first hang: seed 1
}

// QuietAll drains the queues toward every peer: after it, the kernel may
// reuse the buffers its puts read, and the race detector agrees.
func ExampleQuietAll() {
	const ranks = 4
	j, _ := emutest.NewJobWith(1, ranks, emutest.Options{Race: true})
	buf, _ := j.Window(4096)
	_ = j.CreateDevComms(1, false)
	_, _ = j.Launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		for p := 1; p < ranks; p++ {
			sdma.Put(p, buf[p], 2048, buf[0], 0, 1024, 0, cco.RemoteSignal)
		}
		emutest.QuietAll(sdma)
		cco.NewMem(t, sdma.DevComm()).Store32(buf[0].LocalPtr(0), 7) // reuse the source
	})
	fmt.Println("run:", j.Run())
	// Output: run: <nil>
}

// Host is a host thread's race-visible access to device memory while
// kernels run: here the host waits for the kernel before it refills the
// buffer the kernel's put read, so the detector finds nothing.
func ExampleHost() {
	j, _ := emutest.NewJobWith(1, 2, emutest.Options{Race: true})
	buf, _ := j.Window(8192)
	_ = j.CreateDevComms(1, false)
	j.Sim.Spawn("host0", func(a *sim.Actor) {
		k, _ := j.Launch(0, 1, 1, func(_ *kernel.Thread, sdma *cco.Sdma) {
			sdma.Put(1, buf[1], 4096, buf[0], 0, 4096, 0)
			sdma.Quiet(1)
		})
		if k.Wait(a) == nil {
			_ = emutest.Host(j, a).Store64(buf[0].LocalPtr(0), 42) // the next iteration's data
		}
	})
	fmt.Println("run:", j.Run())
	// Output: run: <nil>
}

// NewJob builds the node for one seed; the kernels and checks are the
// user's.
func ExampleNewJob() {
	err := exchange(7, false)
	fmt.Println("seed 7:", err)
	// Output: seed 7: <nil>
}

func ExampleCommand() {
	fmt.Println(emutest.Command("TestExchange/small", 17))
	fmt.Println(emutest.Command("TestExchange/ranks=4", 3))
	// Output:
	// go test -run '^TestExchange$/^small$' ./emutest -emutest.seed=17 -emutest.perturb=1
	// go test -run '^TestExchange$/^ranks=4$' ./emutest -emutest.seed=3 -emutest.perturb=1
}
