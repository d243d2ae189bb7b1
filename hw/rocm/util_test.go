package rocm_test

import (
	"time"

	"github.com/emud-dev/emud/ring"
)

// realSleep blocks for ms milliseconds of wall time (the wall-clock pace
// test only).
func realSleep(ms int) { time.Sleep(time.Duration(ms) * time.Millisecond) }

// nopUnit is a packet that does nothing: NOP skipping seven dwords, one
// 32-byte unit.
func nopUnit() ring.Packet { return ring.Nop(7) }
