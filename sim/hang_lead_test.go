package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestAddLeadCause(t *testing.T) {
	h := &HangError{}
	h.AddCause("generic")
	h.AddCause("other")
	h.AddLeadCause("specific")
	h.AddLeadCause("other") // moves, never duplicates
	assert.Equal(t, []string{"other", "specific", "generic"}, h.Causes)
}
