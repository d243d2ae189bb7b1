package sdma

import (
	"fmt"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/scenario"
	"github.com/emud-dev/emud/sim"
)

// The relay scenario forwards rank 0's buffer down the chain 0 → 1 → … →
// n−1 in relayChunks pipelined chunks, with no compute unit waiting in the
// middle: each inner rank's kernel posts, per chunk, postWaitSignal (park
// the queue to its successor until the chunk's signal from its predecessor
// has landed) and then the put that forwards the chunk, and returns. The
// engines do the rest. The last rank waits for the chunks with waitSignal.
//
// A rank's finish time is when its last forwarded chunk landed at its
// successor (for the last rank: when its last chunk arrived); host actors
// watch the signal slots to time it, as hipEvents would.

// relayChunks is how many pieces the payload is pipelined in.
const relayChunks = 4

func init() {
	scenario.Register(&scenario.Scenario{
		Name:    "relay",
		Perf:    &scenario.PerfShape{Type: "uint8", Elem: 1, Redop: "none", Per: scenario.One, Gran: 32, Bus: scenario.FlatBus},
		Summary: fmt.Sprintf("rank 0's buffer relayed along 0 → 1 → … in %d chunks, forwarded by engine-side waits (postWaitSignal)", relayChunks),
		Bytes:   "payload",
		Check:   checkPayload("relay"),
		Usage:   payloadUsage,
		Run:     runRelay,
	})
}

// checkPayload bounds --bytes for the scenarios that move one payload.
func checkPayload(name string) func(scenario.Options) error {
	return func(o scenario.Options) error {
		if o.Bytes > maxMessageBytes {
			return fmt.Errorf("invalid --bytes %s: the %s payload is at most %s", scenario.FormatBytes(o.Bytes), name, scenario.FormatBytes(maxMessageBytes))
		}
		return nil
	}
}

// payloadUsage: one window of bytes per rank, the payload and a read-back
// buffer on the host, up to two queues and two actors per rank.
func payloadUsage(o scenario.Options) scenario.Usage {
	return scenario.Usage{Backed: uint64(o.Ranks) * o.Bytes, Queues: 2 * o.Ranks, Lanes: 2 * o.Ranks, Host: 2 * o.Bytes}
}

// chunkSpan is piece i of k of an n-byte payload: pieces differ by at most
// one byte and none is empty when n ≥ k.
func chunkSpan(n uint64, k, i int) (off, size uint64) {
	off = n * uint64(i) / uint64(k)
	return off, n*uint64(i+1)/uint64(k) - off
}

// newPayloadJob sets up a scenario that spreads rank 0's payload (the
// pattern of block (0, 0)): a window of o.Bytes on every rank, rank 0's
// holding the payload, dev comms made.
func newPayloadJob(o scenario.Options) (*scenario.Env, []cco.Window, error) {
	j, err := scenario.NewEnv(o)
	if err != nil {
		return nil, nil, err
	}
	buf, err := j.Window(o.Bytes)
	if err != nil {
		return nil, nil, err
	}
	if err := j.Fill(buf[:1], 1, o.Bytes, func(int, int) (int, int) { return 0, 0 }); err != nil {
		return nil, nil, err
	}
	if err := j.SetupDevComms(); err != nil {
		return nil, nil, err
	}
	return j, buf, nil
}

// verifyPayload checks, after the run, that every rank holds the payload
// (not in a phantom run) and that every rank but 0 got exactly signals
// signals from parent(r) on queue id q.
func verifyPayload(j *scenario.Env, name string, buf []cco.Window, q int, parent func(r int) int, signals uint64) error {
	var c scenario.Checker
	payload := func(int, int) (int, int, bool) { return 0, 0, true }
	if err := j.CheckBlocks(&c, buf, 1, j.O.Bytes, payload, func(r, _ int) string { return fmt.Sprintf("rank %d's buffer", r) }); err != nil {
		return err
	}
	err := j.CheckSignals(&c, func(r, p, qq int) (uint64, bool) { return signals, r > 0 && p == parent(r) && qq == q })
	if err != nil {
		return err
	}
	return c.Err(name, j.O.Seed)
}

func runRelay(o scenario.Options) (*scenario.Outcome, error) {
	j, buf, err := newPayloadJob(o)
	if err != nil {
		return nil, err
	}
	defer j.Close() // the checks are done when the run returns
	n, b := o.Ranks, o.Bytes
	k := int(min(relayChunks, b))
	const q = 0
	for r := range n {
		prev, next := r-1, r+1
		var err error
		switch {
		case r == 0:
			err = j.LaunchRank(r, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
				for i := range k {
					off, size := chunkSpan(b, k, i)
					sdma.Put(next, buf[r], off, buf[r], off, size, q, cco.RemoteSignal)
				}
			})
		case r < n-1:
			err = j.LaunchRank(r, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
				for i := range k {
					off, size := chunkSpan(b, k, i)
					sdma.PostWaitSignal(next, q, prev, q, uint64(i+1)) // chunk i from prev has landed
					sdma.Put(next, buf[r], off, buf[r], off, size, q, cco.RemoteSignal)
				}
				// The kernel is done; the engine forwards as the chunks land.
			})
		default:
			err = j.LaunchRank(r, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
				sdma.WaitSignal(prev, q, uint64(k))
				j.Done(r, t)
			})
		}
		if err != nil {
			return nil, err
		}
		if r < n-1 {
			pool := j.DevComms[next].SignalPool()
			j.Sim.Spawn(fmt.Sprintf("timer/rank%d", r), func(a *sim.Actor) {
				if err := j.Node.AwaitSignal(a, pool, r, q, uint64(k)); err != nil {
					j.Sim.Fail(err)
					return
				}
				j.Finish[r] = a.Now()
			})
		}
	}
	if err := j.Sim.Run(); err != nil {
		return nil, err
	}
	if err := verifyPayload(j, "relay", buf, q, func(r int) int { return r - 1 }, uint64(k)); err != nil {
		return nil, err
	}
	return j.Outcome(
		func(r int) uint64 { return b * uint64(min(1, n-1-r)) },
		func(r int) uint64 { return b * uint64(min(1, r)) }), nil
}
