package model

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
)

func TestPlaceholderShape(t *testing.T) {
	p := NewPlaceholder()
	var m Model = p
	assert.Equal(t, "placeholder", m.Name())
	assert.Equal(t, m.PacketOverhead(ring.KindCopy), m.PacketOverhead(ring.KindAtomic), "an ATOMIC costs the engine about what a COPY does")
	assert.Zero(t, m.PacketOverhead(ring.KindNop))
	// 60 GB/s = 60 bytes/ns: 6000 B takes 100 ns.
	assert.Equal(t, 100*sim.Nanosecond, UncontendedCopyTime(m, Copy{Bytes: 6000, Src: 0, Dst: []int{1}}))
	local := UncontendedCopyTime(m, Copy{Bytes: 6000, Src: 0, Dst: []int{0}})
	assert.Less(t, local, 100*sim.Nanosecond, "local copies are faster than the link")
	two := UncontendedCopyTime(m, Copy{Bytes: 6000, Src: 0, Dst: []int{1, 2}})
	assert.Equal(t, 200*sim.Nanosecond, two, "one engine does not overlap a broadcast's two writes")
	assert.Equal(t, 400*sim.Nanosecond, m.PollInterval(4))
	assert.Equal(t, p.MinPollGap, m.PollInterval(0), "interval 0 still costs a read")
}

func ExamplePlaceholder() {
	m := NewPlaceholder()
	// One 1 MiB COPY between two GPUs on an idle queue: fetch + transfer.
	t := m.DoorbellLatency() + UncontendedCopyTime(m, Copy{Bytes: 1 << 20, Src: 0, Dst: []int{1}})
	fmt.Println(t)
	// Output: 20.476266µs
}
