package kernel_test

import (
	"fmt"

	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/sim"
)

// Lanes that reach a call together are its active lanes: the ballot inside
// the if sees only the even lanes, the one after it sees all 64 again.
func ExampleLaunch() {
	s := sim.New(sim.Config{Seed: 1})
	var inside, after uint64
	_, err := kernel.Launch(s, kernel.Config{Name: "demo", Grid: 1, Block: 64}, func(t *kernel.Thread) {
		if t.Lane()%2 == 0 {
			m := t.Ballot(true)
			if t.Lane() == 0 {
				inside = m
			}
		}
		m := t.Ballot(true)
		if t.Lane() == 0 {
			after = m
		}
	})
	if err != nil {
		panic(err)
	}
	if err := s.Run(); err != nil {
		panic(err)
	}
	fmt.Printf("inside the if: %d lanes, after it: %d lanes\n", kernel.Popc(inside), kernel.Popc(after))
	// Output: inside the if: 32 lanes, after it: 64 lanes
}

// SyncThreads is a block barrier; Shared is the block's LDS.
func ExampleThread_SyncThreads() {
	s := sim.New(sim.Config{Seed: 1})
	sum := 0
	_, _ = kernel.Launch(s, kernel.Config{Grid: 1, Block: 128, SharedBytes: 128}, func(t *kernel.Thread) {
		t.Shared()[t.ThreadIdx()] = byte(t.ThreadIdx())
		t.SyncThreads()
		if t.ThreadIdx() == 0 {
			for _, b := range t.Shared() {
				sum += int(b)
			}
		}
	})
	_ = s.Run()
	fmt.Println(sum)
	// Output: 8128
}

// laneSum is one lane's argument to sumCall: what it adds, and where the
// group's total comes back.
type laneSum struct {
	add   int
	total int
}

// sumCall is a device call: each lane passes a *laneSum, and Run, once for
// the lanes that reached it together, gets them typed, in lane order.
var sumCall = &kernel.Call[*laneSum]{Name: "sum", Run: func(g *kernel.Active, args []*laneSum) error {
	total := 0
	for _, a := range args {
		total += a.add
	}
	for _, a := range args {
		a.total = total
	}
	return nil
}}

// A device call built on Converge: lanes 0-9 call it together, each with
// its own argument, and each reads the group's result from it.
func ExampleConverge() {
	s := sim.New(sim.Config{Seed: 1})
	var got int
	_, err := kernel.Launch(s, kernel.Config{Grid: 1, Block: 64}, func(t *kernel.Thread) {
		if t.Lane() < 10 {
			a := &laneSum{add: t.Lane()}
			kernel.Converge(t, sumCall, a)
			if t.Lane() == 9 {
				got = a.total
			}
		}
	})
	if err != nil {
		panic(err)
	}
	if err := s.Run(); err != nil {
		panic(err)
	}
	fmt.Println(got)
	// Output: 45
}
