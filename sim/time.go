package sim

import (
	"fmt"
	"strconv"
)

// Time is virtual time, or a span of it, in integer picoseconds.
type Time int64

// Units of virtual time.
const (
	Picosecond  Time = 1
	Nanosecond       = 1000 * Picosecond
	Microsecond      = 1000 * Nanosecond
	Millisecond      = 1000 * Microsecond
	Second           = 1000 * Millisecond
)

// Micros returns t in microseconds, for reports.
func (t Time) Micros() float64 { return float64(t) / float64(Microsecond) }

// String formats t with the largest unit that keeps it readable, e.g.
// "2.5µs" or "120ns". It is exact to the picosecond.
func (t Time) String() string {
	neg := t < 0
	u := uint64(t)
	if neg {
		u = uint64(-t)
	}
	var s string
	switch {
	case u >= uint64(Second):
		s = trimFrac(u, uint64(Second)) + "s"
	case u >= uint64(Millisecond):
		s = trimFrac(u, uint64(Millisecond)) + "ms"
	case u >= uint64(Microsecond):
		s = trimFrac(u, uint64(Microsecond)) + "µs"
	case u >= uint64(Nanosecond):
		s = trimFrac(u, uint64(Nanosecond)) + "ns"
	default:
		s = strconv.FormatUint(u, 10) + "ps"
	}
	if neg {
		return "-" + s
	}
	return s
}

func trimFrac(v, unit uint64) string {
	whole, frac := v/unit, v%unit
	if frac == 0 {
		return strconv.FormatUint(whole, 10)
	}
	digits := len(strconv.FormatUint(unit, 10)) - 1
	f := fmt.Sprintf("%0*d", digits, frac)
	for f[len(f)-1] == '0' {
		f = f[:len(f)-1]
	}
	return strconv.FormatUint(whole, 10) + "." + f
}
