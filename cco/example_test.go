package cco_test

import (
	"errors"
	"fmt"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/job"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/race"
	"github.com/emud-dev/emud/sim"
)

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

// NCCL's comms put each rank on the device its thread had set: two
// comms on the node's two halves keep their memory on their own GPUs,
// and the second, not on GPUs 0..n-1 in rank order, has no LSA windows.
func ExampleCommCreateOn() {
	s := sim.New(sim.Config{Seed: 1})
	node, _ := engine.NewNode(s, cco.MI355X(0))
	host := cco.NewEmulatedHost(node, cco.Env{"MORI_ENABLE_SDMA": "1"})
	lo, hi := cco.GetUniqueId(host), cco.GetUniqueId(host)
	for gpu := range 4 {
		uid := lo
		if gpu >= 2 {
			uid = hi
		}
		c, err := cco.CommCreateOn(host, uid, 2, gpu%2, gpu, 0)
		if err != nil {
			panic(err)
		}
		buf, _ := cco.MemAlloc(c, 4096)
		_, err = cco.WindowRegister(c, buf, 4096)
		fmt.Printf("rank %d on GPU %d: memory on GPU %d, LSA windows %v\n", c.Rank, c.GPU, node.Memory().GPUOf(buf), err == nil)
	}
	// Output:
	// rank 0 on GPU 0: memory on GPU 0, LSA windows true
	// rank 1 on GPU 1: memory on GPU 1, LSA windows true
	// rank 0 on GPU 2: memory on GPU 2, LSA windows false
	// rank 1 on GPU 3: memory on GPU 3, LSA windows false
}

// Put then QuietQueue: the send is out and the source reusable.
func ExampleSdma_Put() {
	j, _ := job.New(job.Config{Sim: sim.Config{Seed: 1}, Ranks: 2}) // host side: package job
	send, _ := j.Window(64 << 10)
	recv, _ := j.Window(64 << 10)
	_ = j.CreateDevComms(0, false)
	_ = j.Write(send[0], 0, []byte("hello, peer"))
	_, _ = j.Launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.Put(1, recv[0], 0, send[0], 0, 11, 0)
		sdma.QuietQueue(1, 0)
	})
	if err := j.Run(); err != nil {
		panic(err)
	}
	got, _ := j.Read(recv[1], 0, 11)
	fmt.Printf("%s\n", got)
	// Output: hello, peer
}

// A remote signal proves the data landed: the receiver needs no barrier.
func ExampleSdma_WaitSignal() {
	j, _ := job.New(job.Config{Sim: sim.Config{Seed: 1}, Ranks: 2}) // host side: package job
	send, _ := j.Window(64 << 10)
	recv, _ := j.Window(64 << 10)
	_ = j.CreateDevComms(0, false)
	_ = j.Write(send[0], 0, []byte{42})
	_, _ = j.Launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.Put(1, recv[0], 0, send[0], 0, 1, 0, cco.RemoteSignal)
	})
	_, _ = j.Launch(1, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.WaitSignal(0, 0, 1) // expected: one put() call from rank 0 on queue 0
		b, _ := j.Read(recv[1], 0, 1)
		fmt.Println("received", b[0], "at", t.Wave().Kernel().Config().Name)
	})
	if err := j.Run(); err != nil {
		panic(err)
	}
	// Output: received 42 at rank1
}

// Aggregate posts without ringing; one Commit rings the batch.
func ExampleSdma_Commit() {
	j, _ := job.New(job.Config{Sim: sim.Config{Seed: 1}, Ranks: 2}) // host side: package job
	send, _ := j.Window(64 << 10)
	recv, _ := j.Window(64 << 10)
	_ = j.CreateDevComms(0, false)
	const chunk = 1024
	_, _ = j.Launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		for i := uint64(0); i < 8; i++ {
			sdma.Put(1, recv[0], i*chunk, send[0], i*chunk, chunk, 0, cco.SdmaOptFlagsAggregate)
		}
		sdma.Commit(1, 0) // one doorbell for all eight
		sdma.QuietQueue(1, 0)
	})
	if err := j.Run(); err != nil {
		panic(err)
	}
	fmt.Println("done")
	// Output: done
}

// Lanes of one wave that share a queue post as one group with SameQueue:
// one reservation, one doorbell, and one signal for the call.
func ExampleSdmaThreadSameQueue() {
	j, _ := job.New(job.Config{Sim: sim.Config{Seed: 1}, Ranks: 2}) // host side: package job
	send, _ := j.Window(64 << 10)
	recv, _ := j.Window(64 << 10)
	_ = j.CreateDevComms(0, false)
	_, _ = j.Launch(0, 1, 64, func(t *kernel.Thread, sdma *cco.Sdma) {
		off := uint64(t.Lane()) * 256
		sdma.Put(1, recv[0], off, send[0], off, 256, 0, cco.CoopThread, cco.LocalSignal, cco.SdmaThreadSameQueue)
		sdma.QuietQueue(1, 0)
	})
	if err := j.Run(); err != nil {
		panic(err)
	}
	v, _ := j.DevComms[0].Signal(0, 0)
	fmt.Println("local signal advanced by", v)
	// Output: local signal advanced by 1
}

// A relay: rank 1's engine forwards what rank 0 delivered, with no CU
// waiting: postWaitSignal parks the queue until the hop's signal lands.
func ExampleSdma_PostWaitSignal() {
	j, _ := job.New(job.Config{Sim: sim.Config{Seed: 1}, Ranks: 3}) // host side: package job
	send, _ := j.Window(64 << 10)
	recv, _ := j.Window(64 << 10)
	_ = j.CreateDevComms(2, false)
	_ = j.Write(send[0], 0, []byte("relay"))
	_, _ = j.Launch(1, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.PostWaitSignal(2, 1, 0, 0, 1) // prev's hop landed
		sdma.Put(2, recv[1], 0, recv[1], 0, 5, 1, cco.RemoteSignal)
		// the kernel returns here; the engine does the rest
	})
	_, _ = j.Launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.Put(1, recv[0], 0, send[0], 0, 5, 0, cco.RemoteSignal)
	})
	_, _ = j.Launch(2, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) { sdma.WaitSignal(1, 1, 1) })
	if err := j.Run(); err != nil {
		panic(err)
	}
	got, _ := j.Read(recv[2], 0, 5)
	fmt.Printf("%s\n", got)
	// Output: relay
}

// One broadcast COPY to a peer and to this rank.
func ExampleSdma_PutBroadcast() {
	j, _ := job.New(job.Config{Sim: sim.Config{Seed: 1}, Ranks: 2}) // host side: package job
	send, _ := j.Window(64 << 10)
	recv, _ := j.Window(64 << 10)
	_ = j.CreateDevComms(0, false)
	_ = j.Write(send[0], 0, []byte("twice"))
	_, _ = j.Launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.PutBroadcast(1, recv[0], 0, 0, recv[0], 0, send[0], 0, 5, 0)
		sdma.QuietQueue(1, 0)
	})
	if err := j.Run(); err != nil {
		panic(err)
	}
	peer, _ := j.Read(recv[1], 0, 5)
	mine, _ := j.Read(recv[0], 0, 5)
	fmt.Printf("%s %s\n", peer, mine)
	// Output: twice twice
}

// The engine waits for a per-call epoch, then copies; the kernel exits
// right after posting.
func ExampleSdma_PostWaitMemPutPtr() {
	j, _ := job.New(job.Config{Sim: sim.Config{Seed: 1}, Ranks: 2}) // host side: package job
	send, _ := j.Window(64 << 10)
	recv, _ := j.Window(64 << 10)
	_ = j.CreateDevComms(0, false)
	_ = j.Write(send[0], 0, []byte("gated"))
	const readyOff = 4096
	_, _ = j.Launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.PostWaitMemPutPtr(1, 0, recv[0], readyOff, 7, cco.SdmaCmpEq, 0xFFFFFFFF,
			recv[0].LsaPtr(1, 0), send[0].LocalPtr(0), 5, cco.RemoteSignal)
	})
	j.Sim.Spawn("peer", func(a *sim.Actor) {
		a.Sleep(10 * sim.Microsecond)
		_ = j.Node.Memory().Store32(recv[0].LocalPtr(readyOff), 7) // rank 1 says epoch 7 is ready
	})
	if err := j.Run(); err != nil {
		panic(err)
	}
	v, _ := j.DevComms[1].Signal(0, 0)
	got, _ := j.Read(recv[1], 0, 5)
	fmt.Printf("%s, signal %d\n", got, v)
	// Output: gated, signal 1
}

// Lane code loads and stores device memory through cco.Mem: rank 0 stores
// a word straight into rank 1's window through an LSA peer pointer and a
// flag byte into its own send window, then puts the flag with a remote
// signal; rank 1 loads both after waitSignal. The race detector is on and
// finds every access ordered.
func ExampleMem() {
	j, _ := job.New(job.Config{Sim: sim.Config{Seed: 1}, Ranks: 2, Race: true})
	send, _ := j.Window(64 << 10)
	recv, _ := j.Window(64 << 10)
	_ = j.CreateDevComms(0, false)
	_, _ = j.Launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		m := cco.NewMem(t, sdma.DevComm())
		m.Store64(recv[0].LsaPtr(1, 8), 0xc0ffee) // a peer pointer
		m.Store8(send[0].LocalPtr(0), 1)          // a local pointer
		sdma.Put(1, recv[0], 0, send[0], 0, 1, 0, cco.RemoteSignal)
	})
	_, _ = j.Launch(1, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.WaitSignal(0, 0, 1)
		m := cco.NewMem(t, sdma.DevComm())
		fmt.Printf("flag %d, word %#x\n", m.Load8(recv[1].LocalPtr(0)), m.Load64(recv[1].LocalPtr(8)))
	})
	if err := j.Run(); err != nil {
		panic(err)
	}
	// Output: flag 1, word 0xc0ffee
}

// With DevCommRequirements.Race the run proves a missing ordering even
// when the data happens to be right: here the receiver loads before it
// waits for the signal.
func ExampleDevCommRequirements_race() {
	j, _ := job.New(job.Config{Sim: sim.Config{Seed: 1}, Ranks: 2, Race: true})
	send, _ := j.Window(64 << 10)
	recv, _ := j.Window(64 << 10)
	_ = j.CreateDevComms(0, false)
	_ = j.Write(send[0], 0, []byte{42})
	_, _ = j.Launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.Put(1, recv[0], 0, send[0], 0, 1, 0, cco.RemoteSignal)
	})
	_, _ = j.Launch(1, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		early := cco.NewMem(t, sdma.DevComm()).Load8(recv[1].LocalPtr(0)) // BUG: before waitSignal
		sdma.WaitSignal(0, 0, 1)
		_ = early
	})
	var re *race.Error
	if errors.As(j.Run(), &re) {
		r := re.Reports[0]
		fmt.Printf("%s by %s\n%s by %s\n", r.First.Op, r.First.Who, r.Second.Op, r.Second.Who)
	}
	// Output:
	// load8 by kernel "rank1" GPU 1 block 0 wave 0 lane 0
	// COPY destination write by sdma gpu0→gpu1 q0
}
