package model

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
)

// copyTime is the data-movement time of bytes from GPU src to each of dsts
// (two: a broadcast) when nothing else uses the paths.
func copyTime(m Model, bytes uint64, src int, dsts ...int) sim.Time {
	var t float64
	for _, d := range dsts {
		t += float64(bytes) / m.Rate(src, d, len(dsts) > 1)
	}
	return sim.Time(t * float64(sim.Nanosecond))
}

func TestPlaceholderShape(t *testing.T) {
	p := NewPlaceholder()
	var m Model = p
	assert.Equal(t, "placeholder", m.Name())
	assert.Equal(t, m.Cost(PacketGap(ring.KindCopy)), m.Cost(PacketGap(ring.KindAtomic)), "an ATOMIC costs the engine about what a COPY does")
	assert.Zero(t, m.Cost(PacketGap(ring.KindNop)))
	// 60 GB/s = 60 bytes/ns: 6000 B takes 100 ns.
	assert.Equal(t, 100*sim.Nanosecond, copyTime(m, 6000, 0, 1))
	local := copyTime(m, 6000, 0, 0)
	assert.Less(t, local, 100*sim.Nanosecond, "local copies are faster than the link")
	two := copyTime(m, 6000, 0, 1, 2)
	assert.Equal(t, 200*sim.Nanosecond, two, "one engine does not overlap a broadcast's two writes")
	assert.Equal(t, 4*m.Cost(PollInterval(1)), m.Cost(PollInterval(4)))
	assert.Equal(t, m.Cost(PollInterval(1)), m.Cost(PollInterval(0)), "interval 0 still costs a read")
	assert.True(t, m.Engines().Dedicated(), "every queue on an engine of its own")
	for _, c := range []Cost{Issue(IssueShape{Lanes: 64, Queues: 8}), Submit, ChainObserve, RptrRead, MemRead, HostStore} {
		assert.Zero(t, m.Cost(c), "CU costs are free: %+v", c)
	}
	assert.NoError(t, p.Validate())
}

func ExampleNewPlaceholder() {
	m := NewPlaceholder()
	// One 1 MiB COPY between two GPUs on an idle queue: fetch + transfer
	// at the stream's rate (GB/s = bytes/ns).
	move := sim.Time(float64(1<<20) / m.Rate(0, 1, false) * float64(sim.Nanosecond))
	t := m.Cost(Doorbell) + move
	fmt.Println(t)
	// Output: 20.476266µs
}
