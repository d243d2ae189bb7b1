package trace_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/sim"
	"github.com/emud-dev/emud/trace"
)

// Record a two-rank exchange: each rank puts 4 KiB to the other with a
// remote signal and waits for the other's signal. Write the trace to a
// file and open it in the Perfetto UI; here its events are counted (a
// "wake" slice is the part of a waitSignal after the ATOMIC that woke it).
func ExampleAttach() {
	s := sim.New(sim.Config{Seed: 1})
	node, _ := engine.NewNode(s, cco.MI355X(2))
	host := cco.NewEmulatedHost(node, cco.Env{"MORI_ENABLE_SDMA": "1"})
	rec := trace.Attach(node, host) // before the run: everything from now on is kept

	comms, _ := cco.CommCreateAll(host, 2, 0)
	var wins []cco.Window
	var dcs []cco.DevComm
	for _, c := range comms {
		buf, _ := cco.MemAlloc(c, 8<<10)
		w, _ := cco.WindowRegister(c, buf, 8<<10)
		wins = append(wins, w)
	}
	for _, c := range comms {
		reqs := cco.DevCommRequirementsInitializer()
		dc, _ := cco.DevCommCreate(c, &reqs)
		dcs = append(dcs, dc)
	}
	for r := range 2 {
		peer := 1 - r
		kernel.Launch(s, kernel.Config{Name: fmt.Sprintf("rank%d", r), GPU: r, Grid: 1, Block: 1}, func(t *kernel.Thread) {
			sdma := cco.NewSdma(t, dcs[r])
			sdma.Put(peer, wins[r], 4<<10, wins[r], 0, 4<<10, 0, cco.RemoteSignal)
			sdma.WaitSignal(peer, 0, 1)
		})
	}
	if err := s.Run(); err != nil {
		fmt.Println(err)
		return
	}

	var out bytes.Buffer
	if err := rec.WriteJSON(&out); err != nil { // or an *os.File
		fmt.Println(err)
		return
	}
	var doc struct {
		TraceEvents []struct{ Ph, Name string } `json:"traceEvents"`
	}
	json.Unmarshal(out.Bytes(), &doc)
	n := map[string]int{}
	for _, e := range doc.TraceEvents {
		switch e.Ph {
		case "X":
			n["slice "+e.Name]++
		case "M":
			if e.Name == "thread_name" {
				n["tracks"]++
			}
		default:
			n["ph "+e.Ph]++
		}
	}
	var keys []string
	for k := range n {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Println(k, n[k])
	}
	// Output:
	// ph f 4
	// ph i 2
	// ph s 4
	// ph t 2
	// slice ATOMIC 2
	// slice COPY_LINEAR 2
	// slice put 2
	// slice waitSignal 2
	// slice wake 2
	// tracks 4
}
