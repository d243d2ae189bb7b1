// Package all registers every built-in scenario: import it for its side
// effect (the SDMA collectives and their planted variants, the CFT
// collectives, the GIN collectives across nodes and their planted
// variants, the planted-bug corpus and its fixed twins) wherever the
// whole registry is wanted.
package all

import (
	_ "github.com/emud-dev/emud/scenario/cft"     // cft-allreduce, cft-alltoall
	_ "github.com/emud-dev/emud/scenario/gin"     // the GIN collectives across nodes and their planted variants
	_ "github.com/emud-dev/emud/scenario/planted" // the planted-bug corpus and its fixed twins
	_ "github.com/emud-dev/emud/scenario/sdma"    // the SDMA collectives and their planted variants
)
