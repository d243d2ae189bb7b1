package main

import (
	"github.com/emud-dev/emud/scenario"
)

// byteSize is a flag value holding a byte count written with an optional
// binary suffix: 4096, 64K, 64KiB, 1M, 4MiB, 1G. K, KB, Ki and KiB all mean
// 1024: the sizes here are buffer sizes, and a reader who types 64K means
// 65536, not 64000.
type byteSize uint64

// Set implements pflag.Value.
func (b *byteSize) Set(s string) error {
	v, err := scenario.ParseBytes(s)
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
