package cxx

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Lane code is instrumented unless the flags say otherwise.
func TestInstrument(t *testing.T) {
	for _, c := range []struct {
		name     string
		in, want []string
	}{
		{"default", []string{"-O2"}, []string{"-O2", "-fsanitize=thread", "-g1"}},
		{"off", []string{"-O2", "-fno-sanitize=thread"}, []string{"-O2", "-fno-sanitize=thread"}},
		{"own tsan", []string{"-fsanitize=thread"}, []string{"-fsanitize=thread", "-g1"}},
		{"own debug info", []string{"-g"}, []string{"-g", "-fsanitize=thread"}},
		{"another sanitizer", []string{"-fsanitize=address"}, []string{"-fsanitize=address"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, instrument(c.in))
		})
	}
}
