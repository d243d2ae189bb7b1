package scenario

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// FormatBytes writes n in the largest binary unit that divides it exactly,
// so the printed value parses back to n; a size no unit divides is in
// bytes, with the unit: 512B, 1536B.
func FormatBytes(n uint64) string {
	for _, u := range []struct {
		size uint64
		name string
	}{{1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
		if n >= u.size && n%u.size == 0 {
			return strconv.FormatUint(n/u.size, 10) + u.name
		}
	}
	return strconv.FormatUint(n, 10) + "B"
}

var sizeSuffixes = map[string]uint64{
	"": 1, "b": 1,
	"k": 1 << 10, "kb": 1 << 10, "ki": 1 << 10, "kib": 1 << 10,
	"m": 1 << 20, "mb": 1 << 20, "mi": 1 << 20, "mib": 1 << 20,
	"g": 1 << 30, "gb": 1 << 30, "gi": 1 << 30, "gib": 1 << 30,
}

// ParseBytes parses a whole number with an optional suffix (case does not
// matter). It rejects signs, fractions, unknown suffixes and values that
// overflow 64 bits rather than guessing.
func ParseBytes(s string) (uint64, error) {
	const want = "want a whole number of bytes with an optional suffix K, M or G (powers of 1024), e.g. 4096, 64K, 4MiB"
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("%q is not a size: %s", s, want)
	}
	num, suffix := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	if strings.HasPrefix(suffix, ".") || strings.HasPrefix(suffix, ",") {
		return 0, fmt.Errorf("%q is not a whole number: %s", s, want)
	}
	mult, ok := sizeSuffixes[suffix]
	if !ok {
		return 0, fmt.Errorf("%q has an unknown suffix %q: %s", s, t[i:], want)
	}
	n, err := strconv.ParseUint(num, 10, 64)
	if err != nil || n > math.MaxUint64/mult {
		return 0, fmt.Errorf("%q is too large", s)
	}
	return n * mult, nil
}
