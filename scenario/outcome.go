package scenario

import (
	"fmt"

	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/sim"
)

// RankResult is one rank's row of the summary.
type RankResult struct {
	Rank          int      `json:"rank"`
	Finish        sim.Time `json:"finish_ps"` // emulated time the rank's work was done
	BytesSent     uint64   `json:"bytes_sent"`
	BytesReceived uint64   `json:"bytes_received"`
}

// Micros is the finish time in microseconds.
func (r RankResult) Micros() float64 { return r.Finish.Micros() }

// GBps is the bytes the rank moved (the larger of sent and received) per
// emulated nanosecond (= GB/s); 0 if the rank finished at time 0.
func (r RankResult) GBps() float64 {
	if r.Finish <= 0 {
		return 0
	}
	return float64(max(r.BytesSent, r.BytesReceived)) / (float64(r.Finish) / float64(sim.Nanosecond))
}

// Outcome is what a run that finished and passed its checks reports.
type Outcome struct {
	Model string // timing model name
	// Injected lists the SDMA faults the run's plan injected.
	Injected []engine.Fault
	// Steps is how many scheduling steps the run took (PCT's k).
	Steps int
	End   sim.Time
	// Ranks are the per-rank rows; empty for a program that does not time
	// its ranks (the corpus programs).
	Ranks  []RankResult
	Seed   uint64
	Digest string
}

// MismatchError reports data a scenario found wrong after its run.
type MismatchError struct {
	Scenario string
	Seed     uint64
	Detail   string
	Wrong    int // blocks and signals found wrong
	// Outcome is what the run was (the digest, the end time): it finished.
	Outcome *Outcome
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("%s data check failed (seed %d): %s", e.Scenario, e.Seed, e.Detail)
}
