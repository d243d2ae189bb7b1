package cco_test

import (
	"errors"
	"fmt"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/race"
	"github.com/emud-dev/emud/sim"
)

// job is what the examples share: an emulated MI355X node, nRanks ranks
// with a send and a receive window of 64 KiB each, and their dev comms.
type job struct {
	s          *sim.Sim
	mem        cco.Memory
	send, recv []cco.Window
	dcs        []cco.DevComm
}

func newJob(nRanks, queues int) *job { return newJobRace(nRanks, queues, false) }

// newJobRace is newJob with the race detector on or off.
func newJobRace(nRanks, queues int, race bool) *job {
	s := sim.New(sim.Config{Seed: 1})
	node, err := engine.NewNode(s, cco.MI355X(0))
	if err != nil {
		panic(err)
	}
	host := cco.NewEmulatedHost(node, cco.Env{"MORI_ENABLE_SDMA": "1"})
	uid := cco.GetUniqueId(host)
	j := &job{s: s, mem: host.Device().Memory()}
	for rank := 0; rank < nRanks; rank++ {
		comm, err := cco.CommCreate(host, uid, nRanks, rank, 0)
		if err != nil {
			panic(err)
		}
		sendBuf, _ := cco.MemAlloc(comm, 64<<10)
		recvBuf, _ := cco.MemAlloc(comm, 64<<10)
		sendWin, _ := cco.WindowRegister(comm, sendBuf, 64<<10)
		recvWin, _ := cco.WindowRegister(comm, recvBuf, 64<<10)
		reqs := cco.DevCommRequirementsInitializer()
		reqs.SdmaQueueCount = queues
		reqs.Race = race
		dc, err := cco.DevCommCreate(comm, &reqs)
		if err != nil {
			panic(err)
		}
		j.send, j.recv, j.dcs = append(j.send, sendWin), append(j.recv, recvWin), append(j.dcs, dc)
	}
	return j
}

// launch runs fn on every thread of a <<<1, threads>>> kernel on rank.
func (j *job) launch(rank, threads int, fn func(t *kernel.Thread, sdma *cco.Sdma)) {
	dc := j.dcs[rank]
	if _, err := kernel.Launch(j.s, kernel.Config{GPU: rank, Grid: 1, Block: threads}, func(t *kernel.Thread) {
		fn(t, cco.NewSdma(t, dc))
	}); err != nil {
		panic(err)
	}
}

func (j *job) bytes(w cco.Window, off, n uint64) []byte {
	b := make([]byte, n)
	if err := j.mem.Read(w.LocalPtr(off), b); err != nil {
		panic(err)
	}
	return b
}

// The host setup of the seed document, then the emulated kernel.
func ExampleDevCommCreate() {
	s := sim.New(sim.Config{Seed: 1})
	node, _ := engine.NewNode(s, cco.MI355X(0))
	host := cco.NewEmulatedHost(node, cco.Env{"MORI_ENABLE_SDMA": "1"})
	uid := cco.GetUniqueId(host)
	comm, _ := cco.CommCreate(host, uid, 1, 0, 0)

	reqs := cco.DevCommRequirementsInitializer()
	reqs.GdaConnectionType = cco.GdaConnectionNone // SDMA needs no GDA
	reqs.SdmaQueueCount = 8                        // 0 = env / default 2
	devComm, err := cco.DevCommCreate(comm, &reqs)
	if err != nil {
		panic(err)
	}
	if devComm.Sdma.SdmaNumQueue == 0 {
		fmt.Println("SDMA unavailable — MORI_ENABLE_SDMA?")
	}
	fmt.Println("queues per peer:", devComm.Sdma.SdmaNumQueue, "lsaSize:", devComm.LsaSize)
	// Output: queues per peer: 8 lsaSize: 1
}

// Put then QuietQueue: the send is out and the source reusable.
func ExampleSdma_Put() {
	j := newJob(2, 0)
	_ = j.mem.Write(j.send[0].LocalPtr(0), []byte("hello, peer"))
	j.launch(0, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.Put(1, j.recv[0], 0, j.send[0], 0, 11, 0)
		sdma.QuietQueue(1, 0)
	})
	if err := j.s.Run(); err != nil {
		panic(err)
	}
	fmt.Printf("%s\n", j.bytes(j.recv[1], 0, 11))
	// Output: hello, peer
}

// A remote signal proves the data landed: the receiver needs no barrier.
func ExampleSdma_WaitSignal() {
	j := newJob(2, 0)
	_ = j.mem.Write(j.send[0].LocalPtr(0), []byte{42})
	j.launch(0, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.Put(1, j.recv[0], 0, j.send[0], 0, 1, 0, cco.RemoteSignal)
	})
	j.launch(1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.WaitSignal(0, 0, 1) // expected: one put() call from rank 0 on queue 0
		b := cco.NewMem(t, sdma.DevComm()).Load8(j.recv[1].LocalPtr(0))
		fmt.Println("received", b, "at", t.Wave().Kernel().Config().Name)
	})
	if err := j.s.Run(); err != nil {
		panic(err)
	}
	// Output: received 42 at kernel
}

// Aggregate posts without ringing; one Commit rings the batch.
func ExampleSdma_Commit() {
	j := newJob(2, 0)
	const chunk = 1024
	j.launch(0, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		for i := uint64(0); i < 8; i++ {
			sdma.Put(1, j.recv[0], i*chunk, j.send[0], i*chunk, chunk, 0, cco.SdmaOptFlagsAggregate)
		}
		sdma.Commit(1, 0) // one doorbell for all eight
		sdma.QuietQueue(1, 0)
	})
	if err := j.s.Run(); err != nil {
		panic(err)
	}
	fmt.Println("done")
	// Output: done
}

// Lanes of one wave that share a queue post as one group with SameQueue:
// one reservation, one doorbell, and one signal for the call.
func ExampleSdmaThreadSameQueue() {
	j := newJob(2, 0)
	j.launch(0, 64, func(t *kernel.Thread, sdma *cco.Sdma) {
		off := uint64(t.Lane()) * 256
		sdma.Put(1, j.recv[0], off, j.send[0], off, 256, 0, cco.CoopThread, cco.LocalSignal, cco.SdmaThreadSameQueue)
		sdma.QuietQueue(1, 0)
	})
	if err := j.s.Run(); err != nil {
		panic(err)
	}
	v, _ := j.dcs[0].Signal(0, 0)
	fmt.Println("local signal advanced by", v)
	// Output: local signal advanced by 1
}

// A relay: rank 1's engine forwards what rank 0 delivered, with no CU
// waiting: postWaitSignal parks the queue until the hop's signal lands.
func ExampleSdma_PostWaitSignal() {
	j := newJob(3, 2)
	_ = j.mem.Write(j.send[0].LocalPtr(0), []byte("relay"))
	j.launch(1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.PostWaitSignal(2, 1, 0, 0, 1) // prev's hop landed
		sdma.Put(2, j.recv[1], 0, j.recv[1], 0, 5, 1, cco.RemoteSignal)
		// the kernel returns here; the engine does the rest
	})
	j.launch(0, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.Put(1, j.recv[0], 0, j.send[0], 0, 5, 0, cco.RemoteSignal)
	})
	j.launch(2, 1, func(t *kernel.Thread, sdma *cco.Sdma) { sdma.WaitSignal(1, 1, 1) })
	if err := j.s.Run(); err != nil {
		panic(err)
	}
	fmt.Printf("%s\n", j.bytes(j.recv[2], 0, 5))
	// Output: relay
}

// One broadcast COPY to a peer and to this rank.
func ExampleSdma_PutBroadcast() {
	j := newJob(2, 0)
	_ = j.mem.Write(j.send[0].LocalPtr(0), []byte("twice"))
	j.launch(0, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.PutBroadcast(1, j.recv[0], 0, 0, j.recv[0], 0, j.send[0], 0, 5, 0)
		sdma.QuietQueue(1, 0)
	})
	if err := j.s.Run(); err != nil {
		panic(err)
	}
	fmt.Printf("%s %s\n", j.bytes(j.recv[1], 0, 5), j.bytes(j.recv[0], 0, 5))
	// Output: twice twice
}

// The engine waits for a per-call epoch, then copies; the kernel exits
// right after posting.
func ExampleSdma_PostWaitMemPutPtr() {
	j := newJob(2, 0)
	_ = j.mem.Write(j.send[0].LocalPtr(0), []byte("gated"))
	const readyOff = 4096
	j.launch(0, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.PostWaitMemPutPtr(1, 0, j.recv[0], readyOff, 7, cco.SdmaCmpEq, 0xFFFFFFFF,
			j.recv[0].LsaPtr(1, 0), j.send[0].LocalPtr(0), 5, cco.RemoteSignal)
	})
	j.s.Spawn("peer", func(a *sim.Actor) {
		a.Sleep(10 * sim.Microsecond)
		_ = j.mem.Store32(j.recv[0].LocalPtr(readyOff), 7) // rank 1 says epoch 7 is ready
	})
	if err := j.s.Run(); err != nil {
		panic(err)
	}
	v, _ := j.dcs[1].Signal(0, 0)
	fmt.Printf("%s, signal %d\n", j.bytes(j.recv[1], 0, 5), v)
	// Output: gated, signal 1
}

// Lane code loads and stores device memory through cco.Mem: rank 0 stores
// a word straight into rank 1's window through an LSA peer pointer and a
// flag byte into its own send window, then puts the flag with a remote
// signal; rank 1 loads both after waitSignal. The race detector is on and
// finds every access ordered.
func ExampleMem() {
	j := newJobRace(2, 0, true)
	j.launch(0, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		m := cco.NewMem(t, sdma.DevComm())
		m.Store64(j.recv[0].LsaPtr(1, 8), 0xc0ffee) // a peer pointer
		m.Store8(j.send[0].LocalPtr(0), 1)          // a local pointer
		sdma.Put(1, j.recv[0], 0, j.send[0], 0, 1, 0, cco.RemoteSignal)
	})
	j.launch(1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.WaitSignal(0, 0, 1)
		m := cco.NewMem(t, sdma.DevComm())
		fmt.Printf("flag %d, word %#x\n", m.Load8(j.recv[1].LocalPtr(0)), m.Load64(j.recv[1].LocalPtr(8)))
	})
	if err := j.s.Run(); err != nil {
		panic(err)
	}
	// Output: flag 1, word 0xc0ffee
}

// With DevCommRequirements.Race the run proves a missing ordering even
// when the data happens to be right: here the receiver loads before it
// waits for the signal.
func ExampleDevCommRequirements_race() {
	j := newJobRace(2, 0, true)
	_ = j.mem.Write(j.send[0].LocalPtr(0), []byte{42})
	j.launch(0, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.Put(1, j.recv[0], 0, j.send[0], 0, 1, 0, cco.RemoteSignal)
	})
	j.launch(1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		early := cco.NewMem(t, sdma.DevComm()).Load8(j.recv[1].LocalPtr(0)) // BUG: before waitSignal
		sdma.WaitSignal(0, 0, 1)
		_ = early
	})
	var re *race.Error
	if errors.As(j.s.Run(), &re) {
		r := re.Reports[0]
		fmt.Printf("%s by %s\n%s by %s\n", r.First.Op, r.First.Who, r.Second.Op, r.Second.Who)
	}
	// Output:
	// load8 by kernel "kernel" GPU 1 block 0 wave 0 lane 0
	// COPY destination write by sdma gpu0→gpu1 q0
}
