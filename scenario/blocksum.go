package scenario

import "github.com/emud-dev/emud/internal/blocksum"

// blockSum is the receive check's hash of a block (package blocksum).
func blockSum(b []byte) uint64 { return blocksum.Of(b) }
