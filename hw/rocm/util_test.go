package rocm_test

import (
	"time"
)

// realSleep blocks for ms milliseconds of wall time (the wall-clock pace
// test only).
func realSleep(ms int) { time.Sleep(time.Duration(ms) * time.Millisecond) }
