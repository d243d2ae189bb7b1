package rocm_test

import (
	"errors"
	"fmt"
	"os"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/hw/rocm"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
)

// A cco kernel on the backend over the in-memory stand-in: the put and its
// remote signal land in the queue's ring as the two units the emulator
// writes, and one doorbell store publishes them.
func ExampleNew() {
	s := sim.New(sim.Config{Seed: 1})
	si := rocm.NewStandIn(2)
	si.AutoDrain = true // the stand-in's engine consumes at the doorbell
	dev, err := rocm.New(s, si, rocm.Config{})
	if err != nil {
		panic(err)
	}
	host := cco.NewHost(dev, cco.Env{"MORI_ENABLE_SDMA": "1"})
	comms, _ := cco.CommCreateAll(host, 2, 0)
	var wins []cco.Window
	var dcs []cco.DevComm
	for _, c := range comms {
		buf, _ := cco.MemAlloc(c, 4096)
		w, _ := cco.WindowRegister(c, buf, 4096)
		reqs := cco.DevCommRequirementsInitializer()
		dc, _ := cco.DevCommCreate(c, &reqs)
		wins, dcs = append(wins, w), append(dcs, dc)
	}
	_, _ = kernel.Launch(s, kernel.Config{GPU: 0, Grid: 1, Block: 1}, func(t *kernel.Thread) {
		sdma := cco.NewSdma(t, dcs[0])
		sdma.Put(1, wins[0], 0, wins[0], 2048, 64, 0, cco.RemoteSignal)
		sdma.Quiet(1)
	})
	if err := s.Run(); err != nil {
		panic(err)
	}
	q := si.Queues()[0]
	var p ring.Packet
	for at := 0; at < 64; at += ring.Unit {
		if _, err := ring.Decode(&p, q.RingMemory()[at:at+ring.Unit], ring.GFX94x); err != nil {
			panic(err)
		}
		fmt.Printf("unit %d: %v, header 0x%08x\n", at/ring.Unit, p.Kind, p.Header)
	}
	fmt.Println("doorbells:", q.Doorbells())
	// Output:
	// unit 0: COPY_LINEAR, header 0x00000001
	// unit 1: ATOMIC, header 0x5e00000a
	// doorbells: [64]
}

// EMUD_BACKEND picks the device; the algorithm code stays the same.
func ExampleSelect() {
	s := sim.New(sim.Config{Seed: 1})
	emulated := func() (cco.Device, error) {
		node, err := engine.NewNode(s, cco.MI355X(8))
		if err != nil {
			return nil, err
		}
		return cco.Emulated(node), nil
	}
	dev, err := rocm.Select(os.Getenv(rocm.EnvBackend), s, rocm.Config{}, emulated)
	if errors.Is(err, rocm.ErrUnavailable) {
		fmt.Println("no ROCm here:", err)
		return
	}
	if err != nil {
		panic(err)
	}
	fmt.Println("GPUs:", dev.GPUs())
}

// Open the real KFD. Without /dev/kfd, or in a build without -tags rocm
// and cgo, the error says what is missing.
func ExampleOpen() {
	s := sim.New(sim.Config{Seed: 1, Watchdog: -1})
	dev, err := rocm.Open(s, rocm.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer dev.Close()
	fmt.Println("GPUs:", dev.GPUs())
}

// MORI's engine choice for channel c toward a peer.
func ExampleChooseEngine() {
	mask := uint32(0b1100_0000) // the io link recommends engines 6 and 7
	for c := 0; c < 3; c++ {
		e, _ := rocm.ChooseEngine(false, mask, c)
		fmt.Println("channel", c, "engine", e)
	}
	e, _ := rocm.ChooseEngine(true, mask, 5)
	fmt.Println("loopback engine", e)
	// Output:
	// channel 0 engine 6
	// channel 1 engine 7
	// channel 2 engine 6
	// loopback engine 0
}

// The stand-in's engine consumes rung bytes in whole units.
func ExampleStandInQueue_Advance() {
	s := sim.New(sim.Config{Seed: 1})
	si := rocm.NewStandIn(1)
	dev, _ := rocm.New(s, si, rocm.Config{})
	q, _ := dev.HWQueue(0, 0, 0)
	s.Spawn("issuer", func(a *sim.Actor) {
		base, _ := q.Claim(3 * ring.Unit)
		nop := ring.Nop(7)
		for i := uint64(0); i < 3; i++ {
			_ = q.WriteUnit(base+i*ring.Unit, &nop)
		}
		_ = q.Submit(a, base, base+3*ring.Unit)
	})
	_ = s.Run()
	sq := si.Queues()[0]
	fmt.Println("pending", sq.Pending())
	fmt.Println("consumed", sq.Advance(40), "pending", sq.Pending())
	fmt.Println("consumed", sq.Advance(0), "pending", sq.Pending())
	// Output:
	// pending 96
	// consumed 32 pending 64
	// consumed 64 pending 0
}

// The queue path's view of a queue: the issuer pointers kept by the shared
// ring writer, and the read pointer read from the resource.
func ExampleQueue_Rptr() {
	s := sim.New(sim.Config{Seed: 1})
	si := rocm.NewStandIn(2)
	dev, _ := rocm.New(s, si, rocm.Config{})
	q, _ := dev.HWQueue(0, 1, 0)
	base, _ := q.Claim(2 * ring.Unit)
	nop := ring.Nop(7)
	_ = q.WriteUnit(base, &nop)
	_ = q.WriteUnit(base+ring.Unit, &nop)
	fmt.Println("reserved", q.Ring().CachedWptr(), "rung", q.QuietTarget(), "rptr", q.Rptr())
	q.Commit() // ccoSdmaRingQueueDbr: wptr, fence, doorbell
	fmt.Println("rung", q.QuietTarget(), "doorbell word", *si.Queues()[0].Doorbell())
	si.Queues()[0].Advance(ring.Unit) // the engine executes one unit
	fmt.Println("rptr", q.Rptr())
	// Output:
	// reserved 64 rung 0 rptr 0
	// rung 64 doorbell word 64
	// rptr 32
}

// Read the KFD topology a GPU host publishes in sysfs.
func ExampleReadTopology() {
	nodes, err := rocm.ReadTopology(rocm.TopologyRoot)
	if err != nil {
		fmt.Println("no KFD topology here")
		return
	}
	for _, n := range nodes {
		if n.IsGPU() {
			fmt.Println("node", n.ID, "gpu_id", n.GPUID, "xGMI engines", n.XGMIEngines)
		}
	}
}
