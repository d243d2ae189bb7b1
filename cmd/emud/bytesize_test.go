package main

import (
	"testing"

	"github.com/emud-dev/emud/scenario"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]uint64{
		"1":         1,
		"4096":      4096,
		"4096B":     4096,
		"64K":       64 << 10,
		"64k":       64 << 10,
		"64KB":      64 << 10,
		"64KiB":     64 << 10,
		"64 KiB":    64 << 10,
		"1M":        1 << 20,
		"4MiB":      4 << 20,
		"4mib":      4 << 20,
		"2G":        2 << 30,
		" 8Mi ":     8 << 20,
		"16777215G": 16777215 << 30,
	} {
		got, err := scenario.ParseBytes(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"", " ", "bogus", "K", "-1", "+1", "1.5M", "1,5M", "64X", "64KiBs", "1T",
		"18446744073709551616", "17179869184G", "0x10"} {
		_, err := scenario.ParseBytes(in)
		assert.Error(t, err, "%q", in)
	}
}

func TestFormatBytesRoundTrips(t *testing.T) {
	for _, n := range []uint64{0, 1, 1000, 1024, 1536, 64 << 10, 1 << 20, 3 << 30, 1<<30 - 32} {
		got, err := scenario.ParseBytes(scenario.FormatBytes(n))
		require.NoError(t, err, scenario.FormatBytes(n))
		assert.Equal(t, n, got)
	}
	assert.Equal(t, "1MiB", scenario.FormatBytes(1<<20))
	assert.Equal(t, "1536B", scenario.FormatBytes(1536))
	assert.Equal(t, "512B", scenario.FormatBytes(512), "a size under 1 KiB has its unit")
	assert.Equal(t, "0B", scenario.FormatBytes(0))
}
