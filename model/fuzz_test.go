package model

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzDecodeModel feeds model files (--model FILE) to the decoder: any
// input is an error or a model, never a panic, and a model it accepts
// writes back (MarshalJSON) to a file that decodes to the same bytes
// again.
func FuzzDecodeModel(f *testing.F) {
	if b, err := os.ReadFile("testdata/fitted.json"); err == nil {
		f.Add(b)
	}
	for _, s := range []string{
		`{"link_gbps": 40}`, `{"name": "x", "packet_us": 1.5}`, `{"link_gbs": 40}`, `{"link_gbps": -4}`,
		`{`, `null`, `{}`, `{"name": "only"}`, `{"engine_links": [[0,1]], "link_gbps": 1}`,
		`{"fused_off_engines": [3, 9], "link_gbps": 2}`, `{"link_gbps": 40} trailing`, `[1,2]`,
		`{"link_gbps": 1e309}`, `{"link_gbps": 40, "link_gbps": 41}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := decodeModel(b)
		if err != nil {
			return
		}
		out, err := p.MarshalJSON()
		require.NoError(t, err)
		q, err := decodeModel(out)
		require.NoError(t, err, "%s", out)
		again, err := q.MarshalJSON()
		require.NoError(t, err)
		require.Equal(t, string(out), string(again))
	})
}
