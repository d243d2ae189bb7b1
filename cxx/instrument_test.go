package cxx

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Lane code is instrumented unless the flags say otherwise, with TSan's
// volatile callbacks apart (each compiler's spelling).
func TestInstrument(t *testing.T) {
	const gccVolatile = "--param=tsan-distinguish-volatile=1"
	for _, c := range []struct {
		name, cc string
		in, want []string
	}{
		{"default", "g++", []string{"-O2"}, []string{"-O2", "-fsanitize=thread", gccVolatile, "-g1"}},
		{"off", "g++", []string{"-O2", "-fno-sanitize=thread"}, []string{"-O2", "-fno-sanitize=thread"}},
		{"own tsan", "g++", []string{"-fsanitize=thread"}, []string{"-fsanitize=thread", gccVolatile, "-g1"}},
		{"own debug info", "/usr/bin/g++-12", []string{"-g"}, []string{"-g", "-fsanitize=thread", gccVolatile}},
		{"another sanitizer", "g++", []string{"-fsanitize=address"}, []string{"-fsanitize=address"}},
		{"clang", "/usr/bin/clang++-16", []string{"-O2"}, []string{"-O2", "-fsanitize=thread", "-mllvm", "-tsan-distinguish-volatile=1", "-g1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, instrument(c.cc, c.in))
		})
	}
}
