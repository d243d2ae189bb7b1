package job_test

import (
	"bytes"
	"fmt"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/job"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/sim"
)

// Two ranks each put 4 KiB into the other's window with a remote signal,
// then wait for the other's signal and find its data there.
func Example() {
	j, err := job.New(job.Config{Sim: sim.Config{Seed: 1}, Ranks: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	send, _ := j.Window(4096)
	recv, _ := j.Window(4096)
	if err := j.CreateDevComms(1, false); err != nil {
		fmt.Println(err)
		return
	}
	for r := range 2 {
		_ = j.Write(send[r], 0, bytes.Repeat([]byte{byte('a' + r)}, 4096))
		_, err := j.Launch(r, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
			peer := 1 - r
			sdma.Put(peer, recv[r], 0, send[r], 0, 4096, 0, cco.RemoteSignal)
			sdma.WaitSignal(peer, 0, 1)
		})
		if err != nil {
			fmt.Println(err)
			return
		}
	}
	if err := j.Run(); err != nil {
		fmt.Println(err)
		return
	}
	for r := range 2 {
		got, _ := j.Read(recv[r], 0, 4096)
		fmt.Printf("rank %d received %q ×%d\n", r, got[:1], bytes.Count(got, got[:1]))
	}
	// Output:
	// rank 0 received "b" ×4096
	// rank 1 received "a" ×4096
}
