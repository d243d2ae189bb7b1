package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/emud-dev/emud/scenario"
)

func TestServeFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"--max-runs", "0"}, "--max-runs"},
		{[]string{"--max-body", "0"}, "--max-body"},
		{[]string{"--keep", "0"}, "--keep"},
		{[]string{"--addr", "256.0.0.1:99999"}, "--addr"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, errOut, status := execute(t, append([]string{"serve"}, tc.args...)...)
			assert.Equal(t, scenario.ExitFailed, status)
			assert.Contains(t, errOut, tc.flag)
		})
	}
}
