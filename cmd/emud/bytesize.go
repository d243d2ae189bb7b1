package main

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/emud-dev/emud/scenario"
)

// byteSize is a flag value holding a byte count written with an optional
// binary suffix: 4096, 64K, 64KiB, 1M, 4MiB, 1G. K, KB, Ki and KiB all mean
// 1024: the sizes here are buffer sizes, and a reader who types 64K means
// 65536, not 64000.
type byteSize uint64

// Set implements pflag.Value.
func (b *byteSize) Set(s string) error {
	v, err := parseBytes(s)
	if err != nil {
		return err
	}
	*b = byteSize(v)
	return nil
}

// String implements pflag.Value (the default shown in --help).
func (b *byteSize) String() string { return scenario.FormatBytes(uint64(*b)) }

// Type implements pflag.Value.
func (b *byteSize) Type() string { return "size" }

var sizeSuffixes = map[string]uint64{
	"": 1, "b": 1,
	"k": 1 << 10, "kb": 1 << 10, "ki": 1 << 10, "kib": 1 << 10,
	"m": 1 << 20, "mb": 1 << 20, "mi": 1 << 20, "mib": 1 << 20,
	"g": 1 << 30, "gb": 1 << 30, "gi": 1 << 30, "gib": 1 << 30,
}

// parseBytes parses a whole number with an optional suffix (case does not
// matter). It rejects signs, fractions, unknown suffixes and values that
// overflow 64 bits rather than guessing.
func parseBytes(s string) (uint64, error) {
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
