package scenario

import "strconv"

// FormatBytes writes n in the largest binary unit that divides it exactly,
// so the printed value parses back to n.
func FormatBytes(n uint64) string {
	for _, u := range []struct {
		size uint64
		name string
	}{{1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
		if n >= u.size && n%u.size == 0 {
			return strconv.FormatUint(n/u.size, 10) + u.name
		}
	}
	return strconv.FormatUint(n, 10)
}
