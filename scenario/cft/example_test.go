package cft_test

import (
	"fmt"

	"github.com/emud-dev/emud/fabric"
	"github.com/emud-dev/emud/fabric/redop"
	"github.com/emud-dev/emud/scenario/cft"
)

// The cft-allreduce scenario: 8 ranks, every byte checked.
func ExampleRunAllReduce() {
	res, err := cft.RunAllReduce(cft.AllReduceConfig{Seed: 42, Topology: fabric.Topology{NRanks: 8}, Chunk: 64, Type: redop.U32})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d ranks agree on %d bytes in %v of virtual time\n", len(res.Out), len(res.Want), res.Elapsed)
	// Output: 8 ranks agree on 512 bytes in 8.240673µs of virtual time
}

// An all-to-all from Put on 72 ranks (one GB200 NVL72 domain).
func ExampleRunAllToAll() {
	res, err := cft.RunAllToAll(cft.AllToAllConfig{Seed: 7, Topology: fabric.Topology{NRanks: 72}, Block: 16})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d ranks × %d B received\n", len(res.Out), len(res.Out[0]))
	// Output: 72 ranks × 1152 B received
}
