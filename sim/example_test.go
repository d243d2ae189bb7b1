package sim_test

import (
	"errors"
	"fmt"

	"github.com/emud-dev/emud/sim"
)

// Two actors: one waits for a flag, the other sets it after 2 µs of virtual
// time. The waiter is woken by the write, not by polling.
func ExampleActor_Await() {
	s := sim.New(sim.Config{Seed: 1})
	flag := uint64(0)
	wl := s.NewWatchList("flag")
	s.Spawn("waiter", func(a *sim.Actor) {
		a.Await(sim.Wait{List: wl, Lo: 0, Hi: 8, Pred: func() bool { return flag == 1 }, What: "flag == 1"})
		fmt.Println("woke at", a.Now())
	})
	s.Spawn("setter", func(a *sim.Actor) {
		a.Sleep(2 * sim.Microsecond)
		flag = 1
		wl.Notify(0, 8)
	})
	if err := s.Run(); err != nil {
		fmt.Println(err)
	}
	// Output: woke at 2µs
}

// A wait nobody satisfies ends the run with a report of who waits on what.
func ExampleHangError() {
	s := sim.New(sim.Config{Seed: 7})
	wl := s.NewWatchList("signal")
	s.Spawn("rank1", func(a *sim.Actor) {
		a.Await(sim.Wait{List: wl, Hi: 8, Pred: func() bool { return false }, What: "signal[0][0] >= 1"})
	})
	err := s.Run()
	var h *sim.HangError
	if errors.As(err, &h) {
		fmt.Println(h.Kind, len(h.Waiters), h.Waiters[0].Name, "waits for", h.Waiters[0].WaitsFor)
	}
	// Output: deadlock 1 rank1 waits for signal[0][0] >= 1
}

// The same seed gives the same digest.
func ExampleSim_Digest() {
	run := func(seed uint64) string {
		s := sim.New(sim.Config{Seed: seed})
		for i := range 3 {
			s.Spawn(fmt.Sprint("a", i), func(a *sim.Actor) { a.Sleep(sim.Nanosecond) })
		}
		_ = s.Run()
		return s.Digest()
	}
	first, second := run(42), run(42)
	fmt.Println(first == second)
	// Output: true
}
