package kernel

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestNativeContextOrder: native lanes parked with call contexts
// (NewNativeContext) are grouped and ordered by the whole chain. The
// program in frames: a kernel k (file k.cpp) whose loop spans lines 5-20;
// at line 10 lane 0 calls helper h (h.hpp:3), which makes two device calls
// on its one line (two return addresses, as MORI's waveBcastLane does);
// lane 1 skips line 10 and calls h from line 15. Lane 0's second call on
// h's line is still iteration 0 of k's loop, so both its calls run before
// lane 1's (line 15 of the same iteration), and the helper's line reached
// from two lines of k is two points. Before, the second call on one line
// counted a round of k's loop and ran after lane 1's call.
func TestNativeContextOrder(t *testing.T) {
	loop := [][2]int{{5, 20}}
	at := func(kline int, pc uint64) *NativeSite {
		return NewNativeContext([]NativeFrame{
			{File: "/src/k.cpp", Line: kline, Loops: loop, PC: 0x1000 + uint64(kline)},
			{File: "/src/h.hpp", Line: 3, PC: pc},
		})
	}
	first, second, other := at(10, 0x2001), at(10, 0x2002), at(15, 0x2001)
	require.NotSame(t, first, second, "two calls on one line are two sites (by return address)")
	require.Same(t, first, at(10, 0x2001), "sites are interned")
	var order []string
	call := &Call[string]{Name: "op", Run: func(g *Active, args []string) error {
		order = append(order, fmt.Sprint(args))
		return nil
	}}
	_, err := run(t, 1, Config{Grid: 1, Block: 2}, func(th *Thread) {
		if th.Lane() == 0 {
			th.AtNative(first)
			Converge(th, call, "lane 0 first")
			th.AtNative(second)
			Converge(th, call, "lane 0 second")
		} else {
			th.AtNative(other)
			Converge(th, call, "lane 1")
		}
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"[lane 0 first]", "[lane 0 second]", "[lane 1]"}, order)
	assert.Equal(t, "h.hpp:3", first.String())
}

// TestNativeContextGroups: lanes at one chain of lines form one group
// whatever their return addresses (the compiler may duplicate a call), and
// a helper reached from two lines of its caller is two groups.
func TestNativeContextGroups(t *testing.T) {
	at := func(kline int, pc uint64) *NativeSite {
		return NewNativeContext([]NativeFrame{{File: "/src/k.cpp", Line: kline}, {File: "/src/h.hpp", Line: 3, PC: pc}})
	}
	var groups []uint64
	call := &Call[None]{Name: "op", Run: func(g *Active, _ []None) error {
		groups = append(groups, g.Mask())
		return nil
	}}
	_, err := run(t, 1, Config{Grid: 1, Block: 4}, func(th *Thread) {
		switch th.Lane() {
		case 0:
			th.AtNative(at(10, 0x10))
		case 1:
			th.AtNative(at(10, 0x20)) // the same call, duplicated by the compiler
		default:
			th.AtNative(at(12, 0x10))
		}
		Converge(th, call, None{})
	})
	require.NoError(t, err)
	assert.Equal(t, []uint64{0b0011, 0b1100}, groups)
}
